"""VTT (visual transformation telling): released records, the paper's metrics and evaluation."""
