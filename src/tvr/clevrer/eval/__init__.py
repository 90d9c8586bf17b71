"""Scoring answers to CLEVRER questions, and the language-only baselines (random, frequent)."""
