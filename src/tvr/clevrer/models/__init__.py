"""CLEVRER's learned models: perception, dynamics, the question parser and the Table 2 baselines."""
