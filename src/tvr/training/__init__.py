"""Training of the TranceNet models (needs the `train` extra): batches, losses, Lightning, runs.

`train(TrainConfig(...))` is the way in; `tvr.training.batch` defines what data loaders yield.
"""
