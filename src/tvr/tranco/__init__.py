"""TRANCO: find the ordered step clips of a real process between its initial and final images."""
