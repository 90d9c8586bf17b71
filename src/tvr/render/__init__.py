"""Rendering pieces shared by the benchmarks' worlds: cameras (and, as they are shared, engines)."""
