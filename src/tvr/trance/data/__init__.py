"""TRANCE sample data: the sample format, samples.jsonl files, and the public release's data.jsonl layout."""
