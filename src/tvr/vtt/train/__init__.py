"""VTT training: the typed config, data, the Lightning module, runs and predictions (needs the train and clip extras)."""
