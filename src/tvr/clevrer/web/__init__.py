"""CLEVRER's pages of `tvr serve`: a viewer of videos, events, causal graphs and questions."""
