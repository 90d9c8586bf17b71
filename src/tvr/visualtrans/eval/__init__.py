"""VisualTrans scoring: the official and normalized scorers, the report of an evaluation, the
model-free baselines and the paired comparison of two evaluations."""
