"""The synthetic TRANCE world of the TVR papers: vocabulary, simulator, sampler, metrics."""
