"""CLEVRER data: the released file layouts: annotations, predicted dynamics, questions, masks,
submissions, and the PyTorch datasets."""
