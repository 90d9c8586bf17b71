"""GLACNet (Kim et al. 2018, "GLocal Attention Cascading Networks"), adapted to VTT as the VTT
paper does (GLACNet*: CLIP features; N descriptions from N + 1 states).

- Glocal vectors: the state features go through a bi-LSTM (the global view of the whole event);
  each state's output is concatenated with its own feature (the local view), then dropout,
  Linear to 2 * dim and BatchNorm, then (in the decoder) dropout, Linear to dim and ReLU.
  Transformation j is described from the glocal vector of state j + 1.
- Decoder: an LSTM whose input at every step is the glocal vector concatenated with the word
  embedding (dropout 0.1 on the embedding, 0.5 between and after the LSTM layers).
- Cascading: the decoder of a sample's description j starts from the hidden state its
  description j - 1 ended with (after its last word), as in GLACNet; with `cascade` off every
  description starts from zeros (the VTT re-implementation).
"""

from __future__ import annotations

from dataclasses import replace

import torch
from torch import nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

from tvr.vtt.models.common import Batch, Encoded, VttModel
from tvr.vtt.models.decoding import DecodeOptions, decode
from tvr.vtt.models.tokenizer import SOT, VOCAB_SIZE

State = tuple[torch.Tensor, torch.Tensor]


class LstmTextDecoder(nn.Module):
    """LSTM over [glocal vector, word embedding] -> next-token logits."""

    def __init__(
        self,
        dim: int,
        layers: int,
        lstm_dropout: float,
        embed_dropout: float,
        vocab_size: int = VOCAB_SIZE,
    ) -> None:
        super().__init__()
        self.layers = layers
        self.dim = dim
        self.embed = nn.Embedding(vocab_size, dim)
        self.embed_drop = nn.Dropout(embed_dropout)
        self.lstm = nn.LSTM(2 * dim, dim, layers, batch_first=True,
                            dropout=lstm_dropout if layers > 1 else 0.0)  # fmt: skip
        self.out_drop = nn.Dropout(lstm_dropout)
        self.to_logits = nn.Linear(dim, vocab_size)

    def zero_state(self, rows: int, like: torch.Tensor) -> State:
        h = like.new_zeros(self.layers, rows, self.dim)
        return h, h.clone()

    def run(
        self, tokens: torch.Tensor, lengths: torch.Tensor, context: torch.Tensor, state: State
    ) -> tuple[torch.Tensor, State]:
        """tokens (M, L) of which the first `lengths` are read, context (M, d) -> outputs
        (M, L, d) for `to_logits` and the state after the last token read."""
        x = torch.cat([context[:, None].expand(-1, tokens.shape[1], -1),
                       self.embed_drop(self.embed(tokens))], dim=-1)  # fmt: skip
        packed = pack_padded_sequence(x, lengths.cpu(), batch_first=True, enforce_sorted=False)
        out, state = self.lstm(packed, state)
        out, _ = pad_packed_sequence(out, batch_first=True, total_length=tokens.shape[1])
        return self.out_drop(out), state


class LstmStepper:
    """Decoding rows of an LstmTextDecoder: one token at a time, the state carried."""

    def __init__(self, decoder: LstmTextDecoder, contexts: torch.Tensor, state: State) -> None:
        self.decoder = decoder
        self.contexts = contexts
        self.state = state

    def logits(self, prefix: torch.Tensor) -> torch.Tensor:
        d = self.decoder
        x = torch.cat([self.contexts, d.embed(prefix[:, -1])], dim=-1)[:, None]
        out, self.state = d.lstm(x, self.state)
        return d.to_logits(out[:, 0])

    def reindex(self, index: torch.Tensor) -> None:
        self.contexts = self.contexts[index]
        self.state = (self.state[0][:, index], self.state[1][:, index])


class GLACNet(VttModel):
    def make_layers(self) -> None:
        config, dim = self.config, self.config.dim
        self.bilstm = nn.LSTM(dim, dim, config.lstm_layers, batch_first=True, bidirectional=True,
                              dropout=config.lstm_dropout if config.lstm_layers > 1 else 0.0)  # fmt: skip
        self.glocal_drop = nn.Dropout(config.lstm_dropout)
        self.glocal = nn.Linear(3 * dim, 2 * dim)
        self.glocal_norm = nn.BatchNorm1d(2 * dim, momentum=0.01)
        self.context_drop = nn.Dropout(config.lstm_dropout)
        self.context = nn.Linear(2 * dim, dim)
        self.decoder = LstmTextDecoder(dim, config.lstm_layers, config.lstm_dropout,
                                       config.embed_dropout, self.vocab_size)  # fmt: skip

    def encode(self, batch: Batch) -> Encoded:
        mask = batch["state_mask"]
        states = self.state_features(batch)
        lengths = mask.sum(1)
        packed = pack_padded_sequence(states, lengths.cpu(), batch_first=True,
                                      enforce_sorted=False)  # fmt: skip
        out, _ = self.bilstm(packed)
        out, _ = pad_packed_sequence(out, batch_first=True, total_length=states.shape[1])
        glocal = self.glocal(self.glocal_drop(torch.cat([states, out], dim=-1)))
        normed = glocal.new_zeros(glocal.shape)
        normed[mask] = self.glocal_norm(glocal[mask])
        contexts = torch.relu(self.context(self.context_drop(normed)))
        return Encoded(contexts[:, 1:], None, mask[:, 1:])

    def text_hidden(self, encoded: Encoded, batch: Batch) -> torch.Tensor:
        tokens, token_mask = self.model_ids(batch["tokens"]), batch["token_mask"]
        mask = encoded.trans_mask
        # the decoder reads all but the last id (EOT); its logits at p predict id p + 1
        lengths = token_mask.sum(-1) - 1
        if not self.config.cascade:
            hidden, _ = self.decoder.run(tokens[mask], lengths[mask], encoded.contexts[mask],
                                         self.decoder.zero_state(int(mask.sum()), encoded.contexts))  # fmt: skip
            return hidden
        b, t = tokens.shape[:2]
        h, c = self.decoder.zero_state(b, encoded.contexts)
        pieces: list[torch.Tensor] = []
        keys: list[torch.Tensor] = []
        for j in range(t):
            rows = mask[:, j].nonzero().squeeze(1)
            if rows.numel() == 0:
                break
            hidden, (hn, cn) = self.decoder.run(tokens[rows, j], lengths[rows, j],
                                                encoded.contexts[rows, j],
                                                (h[:, rows], c[:, rows]))  # fmt: skip
            h, c = h.index_copy(1, rows, hn), c.index_copy(1, rows, cn)
            pieces.append(hidden)
            keys.append(rows * t + j)
        order = torch.cat(keys).argsort()
        return torch.cat(pieces)[order]

    def stepper(self, contexts: torch.Tensor) -> LstmStepper:
        return LstmStepper(self.decoder, contexts,
                           self.decoder.zero_state(contexts.shape[0], contexts))  # fmt: skip

    def generate(self, batch: Batch, options: DecodeOptions) -> list[list[list[int]]]:
        if not self.config.cascade:
            return super().generate(batch, options)
        encoded = self.encode(batch)
        mask = encoded.trans_mask
        b, t = mask.shape
        h, c = self.decoder.zero_state(b, encoded.contexts)
        found: list[list[list[int]]] = [[] for _ in range(b)]
        for j in range(t):
            rows = mask[:, j].nonzero().squeeze(1)
            if rows.numel() == 0:
                break
            contexts = encoded.contexts[rows, j]
            stepper = self.clip_stepper(
                LstmStepper(self.decoder, contexts, (h[:, rows], c[:, rows]))
            )
            step_options = options
            if options.strategy == "sample":  # another stream per description, still seeded
                step_options = replace(options, seed=options.seed * 1000003 + j)
            ids = decode(stepper, rows.numel(), self.config.max_tokens - 1, step_options,
                         contexts.device)  # fmt: skip
            # the state after the description's last word: read [SOT] + ids again
            width = max(len(x) for x in ids) + 1
            read = torch.zeros(rows.numel(), width, dtype=torch.long, device=contexts.device)
            for i, x in enumerate(ids):
                read[i, : len(x) + 1] = torch.tensor([SOT, *x], device=contexts.device)
            lengths = torch.tensor([len(x) + 1 for x in ids], device=contexts.device)
            _, (hn, cn) = self.decoder.run(self.model_ids(read), lengths, contexts,
                                           (h[:, rows], c[:, rows]))  # fmt: skip
            h, c = h.index_copy(1, rows, hn), c.index_copy(1, rows, cn)
            for i, row in enumerate(rows.tolist()):
                found[row].append(ids[i])
        return found
