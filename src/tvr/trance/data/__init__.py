"""TRANCE data: the sample format, samples.jsonl files, the public release's data.jsonl layout, the
store of a `tvr generate` folder, the encoding of a sample into tensors and the PyTorch datasets
over a store."""
