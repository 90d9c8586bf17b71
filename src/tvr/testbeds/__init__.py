"""Testbeds rendered from the TRANCE world in other benchmarks' layouts (TRANCO clips: `clips.py`)."""
