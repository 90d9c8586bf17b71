"""CLEVRER's released file layouts: annotations, predicted dynamics, questions, masks, submissions."""
