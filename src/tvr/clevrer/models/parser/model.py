"""The seq2seq parser network: a bidirectional LSTM encoder and an LSTM decoder with attention.

As the paper's appendix B writes it (after Yi et al. 2018's parser): the encoder reads the word
embeddings both ways, e_i = [e_i^f, e_i^b]; the decoder LSTM reads the previous program token,
v_j = LSTM(Φ_O(y_{j-1})); attention weights α_ji ∝ exp(v_j^T W_a e_i) over the words (W_a maps
the 2H-wide encodings to the decoder's H; the paper's plain dot product needs equal widths),
c_j = Σ_i α_ji e_i, and ŷ_j = softmax(W [v_j, c_j]). Both LSTMs have `layers` layers of `hidden`
units (the paper: 2 x 256, 300-d embeddings); the decoder starts from the encoder's final states
(forward and backward, mapped to H). Training feeds the true previous token (teacher forcing);
`greedy` feeds back its own argmax until `<END>` or `max_length`.
"""

from __future__ import annotations

import torch
from torch import nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

from tvr.clevrer.models.parser.tokens import END_ID, PAD_ID, START_ID


class Seq2Seq(nn.Module):
    """Words (B, I) -> program-token logits (B, J, V).

    Args:
        n_words, n_tokens: sizes of the word and program-token vocabularies.
        embed_dim: word and token embedding width (the paper: 300).
        hidden: units of each LSTM layer (the paper: 256).
        layers: LSTM layers of the encoder and of the decoder (the paper: 2).
        dropout: between LSTM layers and on the embeddings.
    """

    def __init__(
        self,
        n_words: int,
        n_tokens: int,
        embed_dim: int = 300,
        hidden: int = 256,
        layers: int = 2,
        dropout: float = 0.0,
    ) -> None:
        super().__init__()
        self.layers = layers
        self.hidden = hidden
        self.word_embedding = nn.Embedding(n_words, embed_dim, padding_idx=PAD_ID)
        self.token_embedding = nn.Embedding(n_tokens, embed_dim, padding_idx=PAD_ID)
        between = dropout if layers > 1 else 0.0
        self.encoder = nn.LSTM(
            embed_dim, hidden, layers, batch_first=True, bidirectional=True, dropout=between
        )
        self.decoder = nn.LSTM(embed_dim, hidden, layers, batch_first=True, dropout=between)
        self.bridge_h = nn.Linear(2 * hidden, hidden)
        self.bridge_c = nn.Linear(2 * hidden, hidden)
        self.attention = nn.Linear(2 * hidden, hidden, bias=False)  # W_a
        self.out = nn.Linear(3 * hidden, n_tokens)
        self.drop = nn.Dropout(dropout)

    def encode(
        self, words: torch.Tensor, lengths: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, tuple[torch.Tensor, torch.Tensor]]:
        """(encodings (B, I, 2H), their attention keys (B, I, H), word mask (B, I), the
        decoder's initial state)."""
        embedded = self.drop(self.word_embedding(words))
        packed = pack_padded_sequence(
            embedded, lengths.cpu(), batch_first=True, enforce_sorted=False
        )
        out, (h, c) = self.encoder(packed)
        enc, _ = pad_packed_sequence(out, batch_first=True, total_length=words.shape[1])
        b = words.shape[0]
        # (layers * 2, B, H) -> (layers, B, 2H): each layer's forward and backward final states
        h = h.view(self.layers, 2, b, self.hidden).transpose(1, 2).reshape(self.layers, b, -1)
        c = c.view(self.layers, 2, b, self.hidden).transpose(1, 2).reshape(self.layers, b, -1)
        state = (torch.tanh(self.bridge_h(h)).contiguous(), self.bridge_c(c).contiguous())
        mask = words != PAD_ID
        return enc, self.attention(enc), mask, state

    def _logits(
        self, v: torch.Tensor, enc: torch.Tensor, keys: torch.Tensor, mask: torch.Tensor
    ) -> torch.Tensor:
        scores = torch.bmm(v, keys.transpose(1, 2))  # (B, J, I)
        scores = scores.masked_fill(~mask[:, None, :], float("-inf"))
        context = torch.bmm(torch.softmax(scores, dim=-1), enc)  # (B, J, 2H)
        return self.out(self.drop(torch.cat([v, context], dim=-1)))

    def forward(
        self, words: torch.Tensor, lengths: torch.Tensor, program_in: torch.Tensor
    ) -> torch.Tensor:
        """Teacher-forced logits of the next token at each position of `program_in` (which starts
        with `<START>`)."""
        enc, keys, mask, state = self.encode(words, lengths)
        v, _ = self.decoder(self.drop(self.token_embedding(program_in)), state)
        return self._logits(v, enc, keys, mask)

    @torch.no_grad()
    def greedy(self, words: torch.Tensor, lengths: torch.Tensor, max_length: int) -> torch.Tensor:
        """(B, L <= max_length) argmax tokens, each row ending with `<END>` then `<NULL>`s (or cut
        at max_length)."""
        enc, keys, mask, state = self.encode(words, lengths)
        b = words.shape[0]
        token = torch.full((b, 1), START_ID, dtype=torch.long, device=words.device)
        done = torch.zeros(b, dtype=torch.bool, device=words.device)
        out = []
        for _ in range(max_length):
            v, state = self.decoder(self.token_embedding(token), state)
            token = self._logits(v, enc, keys, mask).argmax(-1)  # (B, 1)
            token = token.masked_fill(done[:, None], PAD_ID)
            out.append(token)
            done |= token[:, 0] == END_ID
            if bool(done.all()):
                break
        return torch.cat(out, dim=1)
