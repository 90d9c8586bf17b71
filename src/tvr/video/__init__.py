"""Instructional-video sources shared by VTT and TRANCO: COIN/CrossTask readers, frames, files."""
