"""Evaluation of TRANCE predictions by simulation: metrics, `evaluate`, baselines."""
