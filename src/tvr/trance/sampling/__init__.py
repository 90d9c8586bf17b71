"""The TRANCE sampler: balanced sampling (Algorithm 1), balance statistics, symbolic sample-set jobs."""
