"""`tvr clevrer report`: question-type counts, answer balance, event timelines and sample frames."""
