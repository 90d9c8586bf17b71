"""VTT scoring: the paper's metrics, `tvr vtt evaluate`, the nearest-neighbour baseline and the paired
comparison of two evaluations."""
