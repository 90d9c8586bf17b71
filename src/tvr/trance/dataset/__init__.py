"""TRANCE image datasets (`tvr generate`): config, generation job, store, release layout with images."""
