"""VisualTrans's pages of `tvr serve`: people verify generated questions (`--verify`)."""
