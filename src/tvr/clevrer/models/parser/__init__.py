"""NS-DR's question parser: a seq2seq from question and choice words to program tokens."""
