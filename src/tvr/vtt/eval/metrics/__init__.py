"""VTT's metrics as the paper's evaluation computes them: each description against its one
reference, averaged over descriptions, x100 (BLEU-4, METEOR, ROUGE-L, CIDEr-D, SPICE, BERTScore)."""
