"""`tvr clevrer generate`: CLEVRER-style sets made on the job engine, in the released layout. It
simulates, asks questions and renders, so it stands above data/, world/, questions/ and render/."""
