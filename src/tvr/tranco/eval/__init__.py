"""TRANCO scoring: the metrics (EMR, R, P, KTD, SD, NSD), `tvr tranco evaluate`, the random baseline
and the paired comparison of two evaluations."""
