"""The training loss of the VTT models: next-token cross-entropy over the descriptions (mean over
their real tokens), plus the weighted topic and category cross-entropies of TTNet's Aux heads."""

from __future__ import annotations

import torch
import torch.nn.functional as F

from tvr.vtt.models.common import IGNORE, Batch, VttModel


def model_loss(model: VttModel, batch: Batch) -> dict[str, torch.Tensor]:
    """{"loss", "text_loss"} and, with Aux, {"topic_loss", "category_loss"} of one batch."""
    encoded = model.encode(batch)
    hidden = model.text_hidden(encoded, batch)  # (M, L, d): position p predicts id p + 1
    mask = encoded.trans_mask
    targets = model.model_ids(batch["tokens"][mask][:, 1:])
    real = batch["token_mask"][mask][:, 1:]
    if model.unknown_id is not None:  # ids the model does not know are not its targets
        real = real & (targets != model.unknown_id)
    logits = model.to_logits(hidden[:, :-1][real])  # only where there is a next id
    if bool(real.any()):
        text = F.cross_entropy(logits.float(), targets[real])
    else:  # no id of this batch is one the model knows
        text = hidden.sum() * 0.0
    w_text, w_category, w_topic = model.config.loss_weights
    out = {"text_loss": text}
    loss = w_text * text
    aux = model.aux_logits(encoded)
    for name, weight in (("topic", w_topic), ("category", w_category)):
        if name not in aux:
            continue
        target = batch[name]
        if bool((target != IGNORE).any()):
            part = F.cross_entropy(aux[name].float(), target, ignore_index=IGNORE)
        else:  # no sample of a known class in this batch
            part = aux[name].sum() * 0.0
        out[f"{name}_loss"] = part
        loss = loss + weight * part
    out["loss"] = loss
    return out
