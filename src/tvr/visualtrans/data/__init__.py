"""VisualTrans data: the benchmark file (VisualTrans.json), its answer formats (the extraction of a
label or a reply's final answer) and its PyTorch dataset."""
