"""TRANCE image datasets (`tvr generate`): typed config, the sharded generation job, the store, the release layout with images."""
