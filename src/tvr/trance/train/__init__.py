"""Training of the TranceNet models (needs the `train` extra): batch contract, losses, Lightning module, runs.

`train(TrainConfig(...))` (`tvr.trance.train.run`) is the way in; `tvr.trance.data.batch` defines what
data loaders yield.
"""
