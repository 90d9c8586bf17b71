"""CLEVRER's question generator: templates, program builders, answer balancing, the per-video entry."""
