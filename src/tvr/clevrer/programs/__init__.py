"""CLEVRER's program language: scene facts, the executor (a table of handlers), program helpers."""
