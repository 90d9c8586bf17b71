"""VisualTrans data: the benchmark file (VisualTrans.json), its answer formats (the extraction of a
label or a reply's final answer), its PyTorch dataset, and the construction pipeline of
`tvr visualtrans build` (`build/`)."""
