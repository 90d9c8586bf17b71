"""Training pieces shared by every benchmark's models (needs the `train` extra): augmentation, precise BN."""
