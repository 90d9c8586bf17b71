"""The synthetic TRANCE world of the TVR papers: world, sampling, render, data, eval, report, models."""
