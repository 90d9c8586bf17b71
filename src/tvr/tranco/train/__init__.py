"""TrancoNet's training: config, feature cache, batches, the Lightning module, runs, predictions."""
