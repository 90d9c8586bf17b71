"""`tvr clevrer generate`: CLEVRER-style sets made on the job engine, in the released layout."""
