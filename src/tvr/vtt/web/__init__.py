"""VTT's pages of `tvr serve`: people rate models' descriptions (fluency, relevance, logic)."""
