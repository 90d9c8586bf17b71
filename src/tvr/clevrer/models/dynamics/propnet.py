"""The dynamics predictor: a Propagation Network (Li et al. 2019) over a video's objects.

As appendix B of the CLEVRER paper writes it, on object states instead of image patches (the
patches' job, telling the model what each object is and where, is done here by its shape and
material and its positions; colour moves nothing). The graph joins every ordered pair of objects
in the scene. Object i's input o_i: its shape and material (one-hot), its position at the last
history step and its displacements over the `history` steps (times VELOCITY_SCALE). Relation k
(receiver u, sender v) has the two objects' inputs, their offset (times OFFSET_SCALE) and a_k,
whether the pair was colliding over the last step. Then, with D = `hidden`:

    c^o_i = f_O^enc(o_i),  c^r_k = f_R^enc(o_u, o_v, a_k),  h^0_i = 0
    e^l_k = f_R(c^r_k, h^{l-1}_u, h^{l-1}_v),  h^l_i = f_O(c^o_i, sum_{k: u_k = i} e^l_k, h^{l-1}_i)
    o^_i = f_O^pred(c^o_i, h^L_i)   (the skip connection from the encoder)
    r^_k = f_R^pred(c^r_k, e^L_k)

for l = 1..L (`steps`; the paper: L = 2, D = 512). o^_i is the displacement to the next step
(times VELOCITY_SCALE); r^_k the logit that the pair collides during the next step, made
symmetric by averaging (u, v) and (v, u). Objects outside the scene (padding, removed, out of
view) are masked out of every sum.
"""

from __future__ import annotations

import torch
from torch import nn

from tvr.clevrer.models.dynamics.observation import ATTRIBUTE_DIM

#: a step's displacement in unit coordinates is small (a few hundredths): the model sees and
#: predicts it times this
VELOCITY_SCALE = 10.0
#: the offset between two objects, times this, in a relation's input
OFFSET_SCALE = 5.0


def mlp(d_in: int, d_hidden: int, d_out: int, layers: int = 2) -> nn.Sequential:
    mods: list[nn.Module] = []
    d = d_in
    for _ in range(layers - 1):
        mods += [nn.Linear(d, d_hidden), nn.ReLU(inplace=True)]
        d = d_hidden
    mods.append(nn.Linear(d, d_out))
    return nn.Sequential(*mods)


class PropNet(nn.Module):
    """positions (B, H, N, 2) unit coordinates, oldest first; attributes (B, N, ATTRIBUTE_DIM);
    active (B, N) bool; colliding (B, N, N) float in [0, 1] -> displacement (B, N, 2) (scaled)
    and collision logits (B, N, N).

    Args:
        history: H, the steps of the history window (the paper: 3).
        hidden: D (the paper: 512).
        steps: L, propagation steps (the paper: 2).
    """

    def __init__(self, history: int = 3, hidden: int = 128, steps: int = 2) -> None:
        super().__init__()
        self.history = history
        self.steps = steps
        d_obj = ATTRIBUTE_DIM + 2 + 2 * (history - 1)
        d_rel = 2 * d_obj + 2 + 1 + 1
        self.object_encoder = mlp(d_obj, hidden, hidden, 3)
        self.relation_encoder = mlp(d_rel, hidden, hidden, 3)
        self.relation_propagator = mlp(3 * hidden, hidden, hidden)
        self.object_propagator = mlp(3 * hidden, hidden, hidden)
        self.object_predictor = mlp(2 * hidden, hidden, 2)
        self.relation_predictor = mlp(2 * hidden, hidden, 1)

    def object_inputs(self, positions: torch.Tensor, attributes: torch.Tensor) -> torch.Tensor:
        last = positions[:, -1]  # (B, N, 2)
        steps = (positions[:, 1:] - positions[:, :-1]) * VELOCITY_SCALE  # (B, H-1, N, 2)
        steps = steps.permute(0, 2, 1, 3).flatten(2)  # (B, N, 2(H-1))
        return torch.cat([attributes, last, steps], dim=-1)

    def forward(
        self,
        positions: torch.Tensor,
        attributes: torch.Tensor,
        active: torch.Tensor,
        colliding: torch.Tensor,
    ) -> tuple[torch.Tensor, torch.Tensor]:
        b, _, n, _ = positions.shape
        obj = self.object_inputs(positions, attributes)  # (B, N, d)
        last = positions[:, -1]
        offset = (last[:, :, None] - last[:, None, :]) * OFFSET_SCALE  # (B, recv, send, 2)
        dist = offset.norm(dim=-1, keepdim=True)
        rel_in = torch.cat(
            [obj[:, :, None].expand(b, n, n, -1), obj[:, None, :].expand(b, n, n, -1), offset,
             dist, colliding[..., None]],
            dim=-1,
        )  # fmt: skip
        eye = torch.eye(n, dtype=torch.bool, device=positions.device)
        rel_mask = (active[:, :, None] & active[:, None, :] & ~eye).float()[
            ..., None
        ]  # (B, N, N, 1)
        obj_mask = active.float()[..., None]
        c_o = self.object_encoder(obj) * obj_mask
        c_r = self.relation_encoder(rel_in) * rel_mask
        h = torch.zeros_like(c_o)
        e = torch.zeros_like(c_r)
        for _ in range(self.steps):
            e = (
                self.relation_propagator(
                    torch.cat(
                        [c_r, h[:, :, None].expand(b, n, n, -1), h[:, None, :].expand(b, n, n, -1)],
                        dim=-1,
                    )
                )
                * rel_mask
            )
            h = self.object_propagator(torch.cat([c_o, e.sum(dim=2), h], dim=-1)) * obj_mask
        delta = self.object_predictor(torch.cat([c_o, h], dim=-1)) * obj_mask
        logits = self.relation_predictor(torch.cat([c_r, e], dim=-1))[..., 0]
        logits = (logits + logits.transpose(1, 2)) / 2
        return delta, logits
