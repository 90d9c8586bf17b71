"""VTT's files: the released records (meta/vtt.jsonl, states/) and prediction files."""
