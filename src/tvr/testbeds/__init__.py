"""Testbeds rendered from the TRANCE world in other benchmarks' layouts: TRANCO's clips
(`clips.py`, `tvr tranco testbed`) and VTT's text (`text.py`, `tvr vtt testbed`).

A layer of its own between the benchmarks and `cli` (.importlinter): it may import TRANCE, which
it samples and renders, and the layouts of VTT and TRANCO, which it writes; no benchmark imports
it.
"""
