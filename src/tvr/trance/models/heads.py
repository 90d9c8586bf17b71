"""The TranceNet predictor: object scores by matching against the object vectors, value scores.

Object scores are dot products between a query (the decoder state projected to 19) and the
candidate object vectors: the ten objects of the initial state, plus, for sequences, a learned
end-of-sequence vector (index 10). Value scores come from the decoder state and the vector of
the chosen object (the reference one under teacher forcing, the predicted one otherwise): 33
values, plus end-of-sequence (index 33) for sequences.
"""

from __future__ import annotations

import torch
from torch import nn

from tvr.trance.models.features import OBJECT_VECTOR_DIM
from tvr.trance.world.vocab import NUM_VALUES


class StepPredictor(nn.Module):
    def __init__(self, hidden: int = 128, with_end: bool = True) -> None:
        super().__init__()
        self.with_end = with_end
        d = OBJECT_VECTOR_DIM
        self.query = nn.Sequential(
            nn.Linear(hidden, hidden), nn.ReLU(inplace=True), nn.Linear(hidden, d)
        )
        self.state = nn.Sequential(nn.Linear(hidden, hidden), nn.ReLU(inplace=True))
        self.value = nn.Sequential(
            nn.Linear(hidden + d, hidden),
            nn.ReLU(inplace=True),
            nn.Linear(hidden, NUM_VALUES + int(with_end)),
        )
        if with_end:
            self.end_vector = nn.Parameter(torch.randn(d) * 0.5)

    def candidates(self, objects: torch.Tensor) -> torch.Tensor:
        """(B, 10, 19) object vectors -> (B, N, 19) candidates (N = 11 with the end vector)."""
        if not self.with_end:
            return objects
        end = self.end_vector.to(objects.dtype).expand(objects.shape[0], 1, -1)
        return torch.cat([objects, end], dim=1)

    def object_logits(self, g: torch.Tensor, candidates: torch.Tensor) -> torch.Tensor:
        """Decoder states (B, L, H) and candidates (B, N, 19) -> scores (B, L, N)."""
        q = self.query(g)
        return torch.einsum("bld,bnd->bln", q, candidates.to(q.dtype))

    def value_logits(self, g: torch.Tensor, chosen: torch.Tensor) -> torch.Tensor:
        """Decoder states (B, L, H) and chosen object vectors (B, L, 19) -> scores (B, L, V)."""
        s = self.state(g)
        return self.value(torch.cat([s, chosen.to(s.dtype)], dim=-1))


def gather_vectors(candidates: torch.Tensor, index: torch.Tensor) -> torch.Tensor:
    """Candidates (B, N, D) and indices (B, L) -> the indexed vectors (B, L, D)."""
    idx = index.long().unsqueeze(-1).expand(-1, -1, candidates.shape[-1])
    return torch.gather(candidates, 1, idx)
