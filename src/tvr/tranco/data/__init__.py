"""TRANCO's files: the samples to score against and the prediction files, read with located errors."""
