"""The learned baselines of Table 2: LSTM on the question, CNN+LSTM on video frames and the question."""
