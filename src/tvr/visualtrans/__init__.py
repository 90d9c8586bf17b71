"""VisualTrans: load the benchmark's JSON file, extract and score VLM answers, write reports."""
