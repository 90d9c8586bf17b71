"""Results shared by the benchmarks: result tables, paired comparisons; benchmarks plug their tables."""
