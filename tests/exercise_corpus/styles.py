"""Ten more students who solved the exercise on their own, each in a style of their own: loops, einsum,
helper functions, type hints, a hand-written softmax, per-head loops, bmm on flattened heads, torch's
functional linear, chunked heads, ``unflatten``/``flatten``.

``BODIES[student][part]`` holds the code that replaces each ``### BEGIN SOLUTION`` block of the part's
cell, as in :mod:`exercise_corpus.honest` (whose ``fill`` and ``notebook`` take these too). Each is a
correct solution (tests/grading/test_similarity.py checks every part with the notebook's own checks)
and the similarity report must flag none of them, against course_lib or against each other.
"""

from __future__ import annotations

import ast as _ast
import io as _io
import keyword as _keyword
import re as _re
import tokenize as _tokenize
from pathlib import Path as _Path

_LOOPS = {
    "positional_encoding": ["""
    rows = []
    for p in range(max_len):
        row = []
        for j in range(d_model // 2):
            freq = 1.0 / (10000.0 ** (2 * j / d_model))
            row.append(math.sin(p * freq))
            row.append(math.cos(p * freq))
        rows.append(row)
    return torch.tensor(rows, dtype=torch.float32).reshape(max_len, d_model)
"""],
    "attention": ["""
    dim = q.size(-1)
    raw = torch.matmul(q, k.transpose(-2, -1))
    raw = raw / math.sqrt(dim)
    if attn_mask is not None:
        raw = raw.masked_fill(attn_mask.logical_not(), -1e9)
    top = raw.amax(dim=-1, keepdim=True)
    e = torch.exp(raw - top)
    p = e / e.sum(dim=-1, keepdim=True)
    result = torch.matmul(p, v)
    return result, p
"""],
    "multi_head_attention": ["""
        assert d_model % num_heads == 0
        self.heads = num_heads
        self.width = d_model // num_heads
        self.w_q = nn.Linear(d_model, d_model)
        self.w_k = nn.Linear(d_model, d_model)
        self.w_v = nn.Linear(d_model, d_model)
        self.w_o = nn.Linear(d_model, d_model)
        self.attn_drop = nn.Dropout(dropout)
""", """
        qs, ks, vs = self.w_q(query), self.w_k(key), self.w_v(value)
        per_head = []
        for i in range(self.heads):
            lo, hi = i * self.width, (i + 1) * self.width
            s = qs[:, :, lo:hi] @ ks[:, :, lo:hi].transpose(1, 2) / math.sqrt(self.width)
            if key_padding_mask is not None:
                s = s.masked_fill(key_padding_mask[:, None, :], float("-inf"))
            per_head.append(torch.softmax(s, dim=-1))
        w = torch.stack(per_head, dim=1)
        dropped = self.attn_drop(w)
        outs = []
        for i in range(self.heads):
            lo, hi = i * self.width, (i + 1) * self.width
            outs.append(dropped[:, i] @ vs[:, :, lo:hi])
        return self.w_o(torch.cat(outs, dim=-1)), w
"""],
    "feed_forward": ["""
        self.linear1 = nn.Linear(d_model, d_ff)
        self.linear2 = nn.Linear(d_ff, d_model)
        self.hidden_dropout = nn.Dropout(dropout)
""", """
        hidden = self.linear1(x)
        hidden = hidden.clamp(min=0)
        hidden = self.hidden_dropout(hidden)
        return self.linear2(hidden)
"""],
    "encoder_layer": ["""
        self.norm_first = norm_first
        self.self_attn = MultiHeadAttention(d_model, num_heads, dropout)
        self.ffn = PositionwiseFeedForward(d_model, d_ff, dropout)
        self.norm1, self.norm2 = nn.LayerNorm(d_model), nn.LayerNorm(d_model)
        self.dropout1, self.dropout2 = nn.Dropout(dropout), nn.Dropout(dropout)
""", """
        if not self.norm_first:
            a, _ = self.self_attn(x, x, x, key_padding_mask=key_padding_mask)
            x = self.norm1(x + self.dropout1(a))
            f = self.ffn(x)
            return self.norm2(x + self.dropout2(f))
        n = self.norm1(x)
        a, _ = self.self_attn(n, n, n, key_padding_mask=key_padding_mask)
        x = x + self.dropout1(a)
        f = self.ffn(self.norm2(x))
        return x + self.dropout2(f)
"""],
    "encoder": ["""
        self.d_model = d_model
        self.pad_id = pad_id
        self.embedding = nn.Embedding(vocab_size, d_model, padding_idx=pad_id)
        self.register_buffer("pe", sinusoidal_positional_encoding(max_len, d_model), persistent=False)
        self.dropout = nn.Dropout(dropout)
        blocks = []
        for _ in range(num_layers):
            blocks.append(EncoderLayer(d_model, num_heads, d_ff, dropout, norm_first))
        self.layers = nn.ModuleList(blocks)
        if norm_first:
            self.final_norm = nn.LayerNorm(d_model)
        else:
            self.final_norm = nn.Identity()
""", """
        if key_padding_mask is None:
            key_padding_mask = tokens.eq(self.pad_id)
        n = tokens.size(1)
        h = self.embedding(tokens) * (self.d_model ** 0.5)
        h = h + self.pe[:n].unsqueeze(0)
        h = self.dropout(h)
        for i in range(len(self.layers)):
            h = self.layers[i](h, key_padding_mask)
        return self.final_norm(h)
"""],
    "parameter_count": ["""
    total = vocab_size * d_model
    for _ in range(num_layers):
        for _ in range(4):
            total += d_model * d_model + d_model
        total += d_model * d_ff + d_ff
        total += d_ff * d_model + d_model
        for _ in range(2):
            total += 2 * d_model
    if norm_first:
        total += 2 * d_model
    return total
"""],
    "reverse_task": ["""
        self.encoder = Encoder(vocab_size, d_model, num_heads, d_ff, num_layers, max_len=max_len)
        self.head = nn.Linear(d_model, vocab_size)
""", """
        hidden = self.encoder(tokens)
        return self.head(hidden)
"""],
}

_EINSUM = {
    "positional_encoding": ["""
    position = torch.arange(max_len).double()
    inv = torch.pow(10000.0, -torch.arange(0, d_model, 2).double() / d_model)
    phase = torch.einsum("p,f->pf", position, inv)
    return torch.stack([phase.sin(), phase.cos()], dim=-1).flatten(1).to(torch.float32)
"""],
    "attention": ["""
    s = torch.einsum("...qd,...kd->...qk", q, k) * q.shape[-1] ** -0.5
    if attn_mask is not None:
        s = torch.where(attn_mask, s, torch.tensor(torch.finfo(s.dtype).min, dtype=s.dtype))
    a = s.softmax(-1)
    return torch.einsum("...qk,...kd->...qd", a, v), a
"""],
    "multi_head_attention": ["""
        self.n_heads, self.head_dim = num_heads, d_model // num_heads
        self.w_q, self.w_k = nn.Linear(d_model, d_model), nn.Linear(d_model, d_model)
        self.w_v, self.w_o = nn.Linear(d_model, d_model), nn.Linear(d_model, d_model)
        self.p_drop = nn.Dropout(dropout)
""", """
        bsz = query.shape[0]
        qh = self.w_q(query).reshape(bsz, query.shape[1], self.n_heads, self.head_dim)
        kh = self.w_k(key).reshape(bsz, key.shape[1], self.n_heads, self.head_dim)
        vh = self.w_v(value).reshape(bsz, key.shape[1], self.n_heads, self.head_dim)
        logits = torch.einsum("bqhd,bkhd->bhqk", qh, kh) / self.head_dim ** 0.5
        if key_padding_mask is not None:
            logits = logits.masked_fill(key_padding_mask[:, None, None, :], -torch.inf)
        att = logits.softmax(dim=-1)
        mixed = torch.einsum("bhqk,bkhd->bqhd", self.p_drop(att), vh)
        return self.w_o(mixed.reshape(bsz, query.shape[1], -1)), att
"""],
    "feed_forward": ["""
        self.linear1, self.linear2 = nn.Linear(d_model, d_ff), nn.Linear(d_ff, d_model)
        self.do = nn.Dropout(dropout)
""", """
        return self.linear2(self.do(self.linear1(x).relu()))
"""],
    "encoder_layer": ["""
        self.norm_first = norm_first
        self.self_attn = MultiHeadAttention(d_model, num_heads, dropout)
        self.ffn = PositionwiseFeedForward(d_model, d_ff, dropout)
        self.norm1 = nn.LayerNorm(d_model)
        self.norm2 = nn.LayerNorm(d_model)
        self.dropout1 = nn.Dropout(dropout)
        self.dropout2 = nn.Dropout(dropout)
""", """
        sa = lambda t: self.dropout1(self.self_attn(t, t, t, key_padding_mask)[0])
        ff = lambda t: self.dropout2(self.ffn(t))
        if self.norm_first:
            x = x + sa(self.norm1(x))
            return x + ff(self.norm2(x))
        x = self.norm1(x + sa(x))
        return self.norm2(x + ff(x))
"""],
    "encoder": ["""
        self.d_model, self.pad_id = d_model, pad_id
        self.embedding = nn.Embedding(vocab_size, d_model, padding_idx=pad_id)
        self.register_buffer("pe", sinusoidal_positional_encoding(max_len, d_model), persistent=False)
        self.dropout = nn.Dropout(dropout)
        self.layers = nn.ModuleList(EncoderLayer(d_model, num_heads, d_ff, dropout, norm_first)
                                    for _ in range(num_layers))
        self.final_norm = nn.LayerNorm(d_model) if norm_first else nn.Identity()
""", """
        pad = (tokens == self.pad_id) if key_padding_mask is None else key_padding_mask
        emb = torch.einsum("btd,->btd", self.embedding(tokens), torch.tensor(math.sqrt(self.d_model)))
        z = self.dropout(emb + self.pe[: tokens.shape[-1]])
        for blk in self.layers:
            z = blk(z, key_padding_mask=pad)
        return self.final_norm(z)
"""],
    "parameter_count": ["""
    linear = lambda fan_in, fan_out: fan_in * fan_out + fan_out
    per_layer = 4 * linear(d_model, d_model) + linear(d_model, d_ff) + linear(d_ff, d_model) + 4 * d_model
    return vocab_size * d_model + num_layers * per_layer + (2 * d_model if norm_first else 0)
"""],
    "reverse_task": ["""
        self.encoder = Encoder(vocab_size, d_model, num_heads, d_ff, num_layers, max_len=max_len)
        self.head = nn.Linear(d_model, vocab_size)
""", """
        return self.head(self.encoder(tokens))
"""],
}

_HELPERS = {
    "positional_encoding": ["""
    def frequencies(width):
        return torch.exp(torch.arange(0, width, 2, dtype=torch.float64) * (-math.log(10000.0) / width))

    def interleave(a, b):
        out = torch.empty(a.shape[0], 2 * a.shape[1], dtype=a.dtype)
        out[:, 0::2], out[:, 1::2] = a, b
        return out

    t = torch.arange(max_len, dtype=torch.float64).unsqueeze(1) * frequencies(d_model).unsqueeze(0)
    return interleave(torch.sin(t), torch.cos(t)).float()
"""],
    "attention": ["""
    def scores_of(queries, keys):
        return queries @ keys.transpose(-2, -1) / math.sqrt(queries.shape[-1])

    def masked(s, allow):
        return s if allow is None else s.masked_fill(~allow, torch.finfo(s.dtype).min)

    probs = torch.softmax(masked(scores_of(q, k), attn_mask), dim=-1)
    return probs @ v, probs
"""],
    "multi_head_attention": ["""
        self.num_heads = num_heads
        self.d_head = d_model // num_heads
        for name in ("w_q", "w_k", "w_v", "w_o"):
            setattr(self, name, nn.Linear(d_model, d_model))
        self.drop = nn.Dropout(dropout)
""", """
        def to_heads(t):
            n, length, _ = t.shape
            return t.view(n, length, self.num_heads, self.d_head).transpose(1, 2)

        def from_heads(t):
            n, _, length, _ = t.shape
            return t.transpose(1, 2).reshape(n, length, self.num_heads * self.d_head)

        def padding_bias(mask, like):
            bias = torch.zeros(mask.shape, dtype=like.dtype).masked_fill(mask, float("-inf"))
            return bias[:, None, None, :]

        q, k, v = to_heads(self.w_q(query)), to_heads(self.w_k(key)), to_heads(self.w_v(value))
        s = q @ k.transpose(-1, -2) / math.sqrt(self.d_head)
        if key_padding_mask is not None:
            s = s + padding_bias(key_padding_mask, s)
        p = torch.softmax(s, dim=-1)
        return self.w_o(from_heads(self.drop(p) @ v)), p
"""],
    "feed_forward": ["""
        self.linear1 = nn.Linear(d_model, d_ff)
        self.linear2 = nn.Linear(d_ff, d_model)
        self.dropout = nn.Dropout(dropout)
""", """
        def expand(t):
            return torch.relu(self.linear1(t))

        return self.linear2(self.dropout(expand(x)))
"""],
    "encoder_layer": ["""
        self.norm_first = norm_first
        self.self_attn = MultiHeadAttention(d_model, num_heads, dropout)
        self.ffn = PositionwiseFeedForward(d_model, d_ff, dropout)
        self.norm1 = nn.LayerNorm(d_model)
        self.norm2 = nn.LayerNorm(d_model)
        self.dropout1 = nn.Dropout(dropout)
        self.dropout2 = nn.Dropout(dropout)
""", """
        def attention_block(t):
            return self.dropout1(self.self_attn(t, t, t, key_padding_mask=key_padding_mask)[0])

        def ffn_block(t):
            return self.dropout2(self.ffn(t))

        def residual(t, block, norm):
            return t + block(norm(t)) if self.norm_first else norm(t + block(t))

        x = residual(x, attention_block, self.norm1)
        return residual(x, ffn_block, self.norm2)
"""],
    "encoder": ["""
        self.d_model = d_model
        self.pad_id = pad_id
        self.embedding = nn.Embedding(vocab_size, d_model, padding_idx=pad_id)
        self.register_buffer("pe", sinusoidal_positional_encoding(max_len, d_model), persistent=False)
        self.dropout = nn.Dropout(dropout)

        def make_layer():
            return EncoderLayer(d_model, num_heads, d_ff, dropout, norm_first)

        self.layers = nn.ModuleList([make_layer() for _ in range(num_layers)])
        self.final_norm = nn.LayerNorm(d_model) if norm_first else nn.Identity()
""", """
        def embed(ids):
            return self.embedding(ids) * math.sqrt(self.d_model) + self.pe[: ids.shape[1]]

        def run_layers(t, mask):
            for layer in self.layers:
                t = layer(t, key_padding_mask=mask)
            return t

        mask = key_padding_mask if key_padding_mask is not None else tokens == self.pad_id
        return self.final_norm(run_layers(self.dropout(embed(tokens)), mask))
"""],
    "parameter_count": ["""
    def linear(n_in, n_out):
        return n_in * n_out + n_out

    def layer_norm(n):
        return 2 * n

    attention = 4 * linear(d_model, d_model)
    feed_forward = linear(d_model, d_ff) + linear(d_ff, d_model)
    layer = attention + feed_forward + 2 * layer_norm(d_model)
    return vocab_size * d_model + num_layers * layer + (layer_norm(d_model) if norm_first else 0)
"""],
    "reverse_task": ["""
        self.encoder = Encoder(vocab_size, d_model, num_heads, d_ff, num_layers, max_len=max_len)
        self.head = nn.Linear(d_model, vocab_size)
""", """
        features = self.encoder(tokens)
        logits = self.head(features)
        return logits
"""],
}

_TYPED = {
    "positional_encoding": ["""
    half: int = d_model // 2
    idx: torch.Tensor = torch.arange(half, dtype=torch.float64)
    rate: torch.Tensor = 1.0 / torch.pow(torch.tensor(10000.0, dtype=torch.float64), 2.0 * idx / d_model)
    where: torch.Tensor = torch.arange(max_len, dtype=torch.float64).view(-1, 1)
    sines: torch.Tensor = torch.sin(where * rate)
    cosines: torch.Tensor = torch.cos(where * rate)
    table: torch.Tensor = torch.zeros((max_len, d_model), dtype=torch.float32)
    table[:, ::2] = sines.to(torch.float32)
    table[:, 1::2] = cosines.to(torch.float32)
    return table
"""],
    "attention": ["""
    d: int = k.shape[-1]
    logits: torch.Tensor = torch.matmul(q, k.mT) / math.sqrt(d)
    if attn_mask is not None:
        very_negative: float = torch.finfo(logits.dtype).min
        logits = torch.where(attn_mask, logits, very_negative)
    probabilities: torch.Tensor = F.softmax(logits, dim=-1)
    context: torch.Tensor = torch.matmul(probabilities, v)
    return context, probabilities
"""],
    "multi_head_attention": ["""
        self.d_model: int = d_model
        self.h: int = num_heads
        self.d_k: int = d_model // num_heads
        self.w_q: nn.Linear = nn.Linear(d_model, d_model)
        self.w_k: nn.Linear = nn.Linear(d_model, d_model)
        self.w_v: nn.Linear = nn.Linear(d_model, d_model)
        self.w_o: nn.Linear = nn.Linear(d_model, d_model)
        self.dropout: nn.Dropout = nn.Dropout(dropout)
""", """
        batch: int = query.size(0)
        tq: int = query.size(1)
        tk: int = key.size(1)
        q: torch.Tensor = self.w_q(query).view(batch, tq, self.h, self.d_k).permute(0, 2, 1, 3)
        k: torch.Tensor = self.w_k(key).view(batch, tk, self.h, self.d_k).permute(0, 2, 3, 1)
        v: torch.Tensor = self.w_v(value).view(batch, tk, self.h, self.d_k).permute(0, 2, 1, 3)
        energy: torch.Tensor = torch.matmul(q, k) / math.sqrt(self.d_k)
        if key_padding_mask is not None:
            keep: torch.Tensor = key_padding_mask.logical_not().view(batch, 1, 1, tk)
            energy = energy.masked_fill(keep.logical_not(), torch.finfo(energy.dtype).min)
        weights: torch.Tensor = F.softmax(energy, dim=3)
        heads: torch.Tensor = torch.matmul(self.dropout(weights), v)
        joined: torch.Tensor = heads.permute(0, 2, 1, 3).reshape(batch, tq, self.d_model)
        return self.w_o(joined), weights
"""],
    "feed_forward": ["""
        self.linear1: nn.Linear = nn.Linear(d_model, d_ff)
        self.linear2: nn.Linear = nn.Linear(d_ff, d_model)
        self.dropout: nn.Dropout = nn.Dropout(dropout)
""", """
        inner: torch.Tensor = F.relu(self.linear1(x))
        return self.linear2(self.dropout(inner))
"""],
    "encoder_layer": ["""
        self.norm_first: bool = norm_first
        self.self_attn: nn.Module = MultiHeadAttention(d_model, num_heads, dropout)
        self.ffn: nn.Module = PositionwiseFeedForward(d_model, d_ff, dropout)
        self.norm1: nn.LayerNorm = nn.LayerNorm(d_model)
        self.norm2: nn.LayerNorm = nn.LayerNorm(d_model)
        self.dropout1: nn.Dropout = nn.Dropout(dropout)
        self.dropout2: nn.Dropout = nn.Dropout(dropout)
""", """
        y: torch.Tensor
        if self.norm_first:
            y = self.norm1(x)
            x = x + self.dropout1(self.self_attn(y, y, y, key_padding_mask=key_padding_mask)[0])
            y = self.norm2(x)
            x = x + self.dropout2(self.ffn(y))
        else:
            y = self.self_attn(x, x, x, key_padding_mask=key_padding_mask)[0]
            x = self.norm1(x + self.dropout1(y))
            y = self.ffn(x)
            x = self.norm2(x + self.dropout2(y))
        return x
"""],
    "encoder": ["""
        self.d_model: int = d_model
        self.pad_id: int = pad_id
        self.embedding: nn.Embedding = nn.Embedding(vocab_size, d_model, padding_idx=pad_id)
        table: torch.Tensor = sinusoidal_positional_encoding(max_len, d_model)
        self.register_buffer("pe", table, persistent=False)
        self.dropout: nn.Dropout = nn.Dropout(dropout)
        self.layers: nn.ModuleList = nn.ModuleList(
            [EncoderLayer(d_model, num_heads, d_ff, dropout, norm_first=norm_first) for _ in range(num_layers)])
        self.final_norm: nn.Module = nn.LayerNorm(d_model) if norm_first else nn.Identity()
""", """
        padding: torch.Tensor = tokens == self.pad_id if key_padding_mask is None else key_padding_mask
        length: int = tokens.shape[1]
        scale: float = math.sqrt(self.d_model)
        x: torch.Tensor = self.dropout(self.embedding(tokens) * scale + self.pe[:length])
        for layer in self.layers:
            x = layer(x, key_padding_mask=padding)
        return self.final_norm(x)
"""],
    "parameter_count": ["""
    attention: int = 4 * d_model * (d_model + 1)
    ffn: int = d_ff * (d_model + 1) + d_model * (d_ff + 1)
    norms: int = 4 * d_model
    final: int = 2 * d_model if norm_first else 0
    embedding: int = vocab_size * d_model
    return embedding + num_layers * (attention + ffn + norms) + final
"""],
    "reverse_task": ["""
        self.encoder: nn.Module = Encoder(vocab_size, d_model, num_heads, d_ff, num_layers, max_len=max_len)
        self.head: nn.Linear = nn.Linear(d_model, vocab_size)
""", """
        out: torch.Tensor = self.head(self.encoder(tokens))
        return out
"""],
}

_BMM = {
    "positional_encoding": ["""
    grid = torch.arange(max_len, dtype=torch.float64).repeat_interleave(d_model).view(max_len, d_model)
    col = torch.arange(d_model)
    expo = (col - col % 2).double() / d_model
    arg = grid / torch.pow(10000.0, expo)
    return torch.where(col % 2 == 0, torch.sin(arg), torch.cos(arg)).float()
"""],
    "attention": ["""
    lead = q.shape[:-2]
    qf = q.reshape(-1, q.shape[-2], q.shape[-1])
    kf = k.expand(*lead, *k.shape[-2:]).reshape(-1, k.shape[-2], k.shape[-1])
    vf = v.expand(*lead, *v.shape[-2:]).reshape(-1, v.shape[-2], v.shape[-1])
    s = torch.bmm(qf, kf.transpose(1, 2)).div(math.sqrt(q.shape[-1])).view(*lead, q.shape[-2], k.shape[-2])
    if attn_mask is not None:
        s = s.masked_fill(attn_mask == False, -1e30)  # noqa: E712
    w = s.softmax(dim=-1)
    o = torch.bmm(w.reshape(-1, q.shape[-2], k.shape[-2]), vf)
    return o.view(*lead, q.shape[-2], v.shape[-1]), w
"""],
    "multi_head_attention": ["""
        self.nh = num_heads
        self.hd = d_model // num_heads
        self.w_q = nn.Linear(d_model, d_model)
        self.w_k = nn.Linear(d_model, d_model)
        self.w_v = nn.Linear(d_model, d_model)
        self.w_o = nn.Linear(d_model, d_model)
        self.dropout = nn.Dropout(dropout)
""", """
        B, Tq, D = query.shape
        Tk = key.shape[1]
        fold = lambda t, n: t.view(B, n, self.nh, self.hd).transpose(1, 2).reshape(B * self.nh, n, self.hd)
        qq, kk, vv = fold(self.w_q(query), Tq), fold(self.w_k(key), Tk), fold(self.w_v(value), Tk)
        att = torch.bmm(qq, kk.transpose(1, 2)) * (1.0 / math.sqrt(self.hd))
        att = att.view(B, self.nh, Tq, Tk)
        if key_padding_mask is not None:
            att = att.masked_fill(key_padding_mask.view(B, 1, 1, Tk), -1e30)
        att = att.softmax(dim=-1)
        y = torch.bmm(self.dropout(att).view(B * self.nh, Tq, Tk), vv)
        y = y.view(B, self.nh, Tq, self.hd).transpose(1, 2).reshape(B, Tq, D)
        return self.w_o(y), att
"""],
    "feed_forward": ["""
        self.linear1 = nn.Linear(d_model, d_ff)
        self.linear2 = nn.Linear(d_ff, d_model)
        self.act = nn.ReLU()
        self.dropout = nn.Dropout(dropout)
""", """
        return self.linear2(self.dropout(self.act(self.linear1(x))))
"""],
    "encoder_layer": ["""
        self.norm_first = norm_first
        self.self_attn = MultiHeadAttention(d_model, num_heads, dropout=dropout)
        self.ffn = PositionwiseFeedForward(d_model, d_ff, dropout=dropout)
        self.norm1 = nn.LayerNorm(d_model)
        self.norm2 = nn.LayerNorm(d_model)
        self.dropout1 = nn.Dropout(dropout)
        self.dropout2 = nn.Dropout(dropout)
""", """
        pre = self.norm_first
        inp = self.norm1(x) if pre else x
        x = x + self.dropout1(self.self_attn(inp, inp, inp, key_padding_mask)[0])
        if not pre:
            x = self.norm1(x)
        inp = self.norm2(x) if pre else x
        x = x + self.dropout2(self.ffn(inp))
        if not pre:
            x = self.norm2(x)
        return x
"""],
    "encoder": ["""
        self.d_model = d_model
        self.pad_id = pad_id
        self.embedding = nn.Embedding(vocab_size, d_model, padding_idx=pad_id)
        self.register_buffer("pe", sinusoidal_positional_encoding(max_len, d_model), persistent=False)
        self.dropout = nn.Dropout(dropout)
        self.layers = nn.ModuleList()
        while len(self.layers) < num_layers:
            self.layers.append(EncoderLayer(d_model, num_heads, d_ff, dropout, norm_first))
        self.final_norm = nn.LayerNorm(d_model) if norm_first else nn.Identity()
""", """
        B, T = tokens.shape
        if key_padding_mask is None:
            key_padding_mask = tokens.eq(self.pad_id)
        y = self.embedding(tokens).mul(math.sqrt(self.d_model)).add(self.pe[:T].expand(B, T, self.d_model))
        y = self.dropout(y)
        for lyr in self.layers:
            y = lyr(y, key_padding_mask)
        return self.final_norm(y)
"""],
    "parameter_count": ["""
    d, f = d_model, d_ff
    shapes = [(d, d), (d,)] * 4 + [(f, d), (f,), (d, f), (d,)] + [(d,)] * 4
    per_layer = sum(math.prod(s) for s in shapes)
    return vocab_size * d + num_layers * per_layer + (2 * d if norm_first else 0)
"""],
    "reverse_task": ["""
        self.encoder = Encoder(vocab_size, d_model, num_heads, d_ff, num_layers, max_len=max_len)
        self.head = nn.Linear(d_model, vocab_size)
""", """
        B, T = tokens.shape
        return self.head(self.encoder(tokens)).view(B, T, -1)
"""],
}

_FUNCTIONAL = {
    "positional_encoding": ["""
    out = torch.empty(max_len, d_model)
    steps = torch.arange(max_len, dtype=torch.float64)
    for c in range(0, d_model, 2):
        wave = steps * math.exp(-c * math.log(10000.0) / d_model)
        out[:, c] = torch.sin(wave).float()
        out[:, c + 1] = torch.cos(wave).float()
    return out
"""],
    "attention": ["""
    sc = q.matmul(k.transpose(-1, -2)).mul(1 / math.sqrt(q.size(-1)))
    if attn_mask is not None:
        sc = sc.masked_fill(~attn_mask.bool(), torch.finfo(sc.dtype).min)
    wt = F.softmax(sc, -1)
    return wt.matmul(v), wt
"""],
    "multi_head_attention": ["""
        self.heads = num_heads
        self.w_q = nn.Linear(d_model, d_model)
        self.w_k = nn.Linear(d_model, d_model)
        self.w_v = nn.Linear(d_model, d_model)
        self.w_o = nn.Linear(d_model, d_model)
        self.p = dropout
""", """
        proj = lambda lin, t: F.linear(t, lin.weight, lin.bias)
        split = lambda t: t.unflatten(-1, (self.heads, -1)).transpose(-3, -2)
        qh, kh, vh = split(proj(self.w_q, query)), split(proj(self.w_k, key)), split(proj(self.w_v, value))
        sc = qh.matmul(kh.transpose(-1, -2)) / math.sqrt(qh.size(-1))
        if key_padding_mask is not None:
            sc = sc.masked_fill(key_padding_mask.unsqueeze(-2).unsqueeze(-3), -float("inf"))
        wt = F.softmax(sc, -1)
        ctx = F.dropout(wt, self.p, self.training).matmul(vh)
        return proj(self.w_o, ctx.transpose(-3, -2).flatten(-2)), wt
"""],
    "feed_forward": ["""
        self.linear1 = nn.Linear(d_model, d_ff)
        self.linear2 = nn.Linear(d_ff, d_model)
        self.p = dropout
""", """
        h = F.relu(F.linear(x, self.linear1.weight, self.linear1.bias))
        h = F.dropout(h, self.p, self.training)
        return F.linear(h, self.linear2.weight, self.linear2.bias)
"""],
    "encoder_layer": ["""
        self.norm_first = norm_first
        self.self_attn = MultiHeadAttention(d_model, num_heads, dropout)
        self.ffn = PositionwiseFeedForward(d_model, d_ff, dropout)
        self.norm1 = nn.LayerNorm(d_model)
        self.norm2 = nn.LayerNorm(d_model)
        self.dropout1 = nn.Dropout(dropout)
        self.dropout2 = nn.Dropout(dropout)
""", """
        steps = [(self.norm1, lambda t: self.self_attn(t, t, t, key_padding_mask=key_padding_mask)[0], self.dropout1),
                 (self.norm2, self.ffn, self.dropout2)]
        for norm, sub, drop in steps:
            if self.norm_first:
                x = x + drop(sub(norm(x)))
            else:
                x = norm(x + drop(sub(x)))
        return x
"""],
    "encoder": ["""
        self.d_model, self.pad_id = d_model, pad_id
        self.embedding = nn.Embedding(vocab_size, d_model, padding_idx=pad_id)
        self.register_buffer("pe", sinusoidal_positional_encoding(max_len, d_model), persistent=False)
        self.p = dropout
        self.layers = nn.ModuleList([EncoderLayer(d_model, num_heads, d_ff, dropout, norm_first)
                                     for _ in range(num_layers)])
        self.final_norm = nn.LayerNorm(d_model) if norm_first else nn.Identity()
""", """
        kpm = key_padding_mask if key_padding_mask is not None else tokens.eq(self.pad_id)
        e = F.embedding(tokens, self.embedding.weight, padding_idx=self.pad_id)
        e = F.dropout(e * self.d_model ** 0.5 + self.pe[: tokens.size(1)], self.p, self.training)
        for layer in self.layers:
            e = layer(e, kpm)
        return self.final_norm(e)
"""],
    "parameter_count": ["""
    blocks = num_layers * (4 * d_model ** 2 + 2 * d_model * d_ff + d_ff + 9 * d_model)
    return vocab_size * d_model + blocks + 2 * d_model * int(bool(norm_first))
"""],
    "reverse_task": ["""
        self.encoder = Encoder(vocab_size, d_model, num_heads, d_ff, num_layers, max_len=max_len)
        self.head = nn.Linear(d_model, vocab_size)
""", """
        return F.linear(self.encoder(tokens), self.head.weight, self.head.bias)
"""],
}

_CHUNKS = {
    "positional_encoding": ["""
    pos = torch.arange(max_len, dtype=torch.float64).unsqueeze(-1)
    dims = torch.arange(d_model // 2, dtype=torch.float64)
    theta = pos * 10000.0 ** (-2.0 * dims / d_model)
    pe = torch.cat([theta.sin().unsqueeze(-1), theta.cos().unsqueeze(-1)], dim=-1)
    return pe.view(max_len, d_model).to(dtype=torch.float32)
"""],
    "attention": ["""
    inv_root = 1.0 / math.sqrt(float(q.shape[-1]))
    sim = (q * inv_root) @ k.swapaxes(-1, -2)
    if attn_mask is not None:
        sim = sim + torch.zeros_like(sim).masked_fill(~attn_mask, -1e9)
    attn = sim.softmax(dim=-1)
    return attn @ v, attn
"""],
    "multi_head_attention": ["""
        self.n = num_heads
        self.scale = (d_model // num_heads) ** -0.5
        self.w_q = nn.Linear(d_model, d_model)
        self.w_k = nn.Linear(d_model, d_model)
        self.w_v = nn.Linear(d_model, d_model)
        self.w_o = nn.Linear(d_model, d_model)
        self.dropout = nn.Dropout(dropout)
""", """
        heads_of = lambda t: torch.stack(t.chunk(self.n, dim=-1), dim=1)
        q, k, v = heads_of(self.w_q(query)), heads_of(self.w_k(key)), heads_of(self.w_v(value))
        sim = (q * self.scale) @ k.swapaxes(-1, -2)
        if key_padding_mask is not None:
            sim = sim.masked_fill(key_padding_mask[:, None, None], float("-inf"))
        attn = sim.softmax(dim=-1)
        mixed = self.dropout(attn) @ v
        return self.w_o(torch.cat(mixed.unbind(dim=1), dim=-1)), attn
"""],
    "feed_forward": ["""
        self.linear1 = nn.Linear(d_model, d_ff)
        self.linear2 = nn.Linear(d_ff, d_model)
        self.dropout = nn.Dropout(p=dropout)
""", """
        y = self.linear1(x)
        y = torch.maximum(y, torch.zeros_like(y))
        return self.linear2(self.dropout(y))
"""],
    "encoder_layer": ["""
        self.norm_first = norm_first
        self.self_attn = MultiHeadAttention(d_model, num_heads, dropout)
        self.ffn = PositionwiseFeedForward(d_model, d_ff, dropout)
        self.norm1 = nn.LayerNorm(d_model)
        self.norm2 = nn.LayerNorm(d_model)
        self.dropout1 = nn.Dropout(dropout)
        self.dropout2 = nn.Dropout(dropout)
""", """
        if self.norm_first:
            h = self.norm1(x)
            h, _ = self.self_attn(h, h, h, key_padding_mask=key_padding_mask)
            x = x + self.dropout1(h)
            return x + self.dropout2(self.ffn(self.norm2(x)))
        h, _ = self.self_attn(x, x, x, key_padding_mask=key_padding_mask)
        x = self.norm1(self.dropout1(h) + x)
        return self.norm2(self.dropout2(self.ffn(x)) + x)
"""],
    "encoder": ["""
        self.d_model = d_model
        self.pad_id = pad_id
        self.embedding = nn.Embedding(vocab_size, d_model, padding_idx=pad_id)
        pe = sinusoidal_positional_encoding(max_len, d_model)
        self.register_buffer("pe", pe, persistent=False)
        self.dropout = nn.Dropout(p=dropout)
        self.layers = nn.ModuleList([EncoderLayer(d_model, num_heads, d_ff, dropout, norm_first)] +
                                    [EncoderLayer(d_model, num_heads, d_ff, dropout, norm_first)
                                     for _ in range(num_layers - 1)])
        self.final_norm = nn.LayerNorm(d_model) if norm_first else nn.Identity()
""", """
        mask = key_padding_mask
        if mask is None:
            mask = tokens == self.pad_id
        seq = tokens.shape[1]
        out = self.dropout(math.sqrt(self.d_model) * self.embedding(tokens) + self.pe[None, :seq, :])
        for block in self.layers:
            out = block(out, key_padding_mask=mask)
        return self.final_norm(out)
"""],
    "parameter_count": ["""
    counts = {
        "embedding": vocab_size * d_model,
        "attention": num_layers * 4 * (d_model * d_model + d_model),
        "ffn": num_layers * (2 * d_model * d_ff + d_ff + d_model),
        "norms": num_layers * 4 * d_model + (2 * d_model if norm_first else 0),
    }
    return sum(counts.values())
"""],
    "reverse_task": ["""
        self.encoder = Encoder(vocab_size, d_model, num_heads, d_ff, num_layers, max_len=max_len)
        self.head = nn.Linear(d_model, vocab_size)
""", """
        encoded = self.encoder(tokens)
        return self.head(encoded)
"""],
}

_NUMPY_FIRST = {
    "positional_encoding": ["""
    p = np.arange(max_len)[:, None].astype(np.float64)
    i = np.arange(d_model)[None, :]
    angles = p / np.power(10000.0, (2 * (i // 2)) / d_model)
    angles[:, 0::2] = np.sin(angles[:, 0::2])
    angles[:, 1::2] = np.cos(angles[:, 1::2])
    return torch.from_numpy(angles).float()
"""],
    "attention": ["""
    n_k = k.shape[-1]
    score = torch.matmul(q / n_k ** 0.5, torch.transpose(k, -2, -1))
    if attn_mask is not None:
        score = torch.masked_fill(score, torch.logical_not(attn_mask), -1.0e9)
    weight = torch.nn.functional.softmax(score, dim=-1)
    return torch.matmul(weight, v), weight
"""],
    "multi_head_attention": ["""
        if d_model % num_heads:
            raise ValueError("num_heads must divide d_model")
        self.num_heads = num_heads
        self.d_k = d_model // num_heads
        self.w_q = torch.nn.Linear(d_model, d_model)
        self.w_k = torch.nn.Linear(d_model, d_model)
        self.w_v = torch.nn.Linear(d_model, d_model)
        self.w_o = torch.nn.Linear(d_model, d_model)
        self.weight_dropout = torch.nn.Dropout(dropout)
""", """
        def project(layer, x):
            y = layer(x)
            return torch.transpose(y.reshape(y.shape[0], y.shape[1], self.num_heads, self.d_k), 1, 2)

        qp, kp, vp = project(self.w_q, query), project(self.w_k, key), project(self.w_v, value)
        score = torch.matmul(qp / self.d_k ** 0.5, torch.transpose(kp, -2, -1))
        if key_padding_mask is not None:
            blocked = key_padding_mask.reshape(key_padding_mask.shape[0], 1, 1, key_padding_mask.shape[1])
            score = torch.masked_fill(score, blocked, -1.0e9)
        weight = torch.nn.functional.softmax(score, dim=-1)
        context = torch.matmul(self.weight_dropout(weight), vp)
        context = torch.transpose(context, 1, 2).reshape(query.shape[0], query.shape[1], -1)
        return self.w_o(context), weight
"""],
    "feed_forward": ["""
        self.linear1 = torch.nn.Linear(d_model, d_ff)
        self.linear2 = torch.nn.Linear(d_ff, d_model)
        self.drop_hidden = torch.nn.Dropout(dropout)
""", """
        return self.linear2(self.drop_hidden(torch.nn.functional.relu(self.linear1(x))))
"""],
    "encoder_layer": ["""
        self.norm_first = bool(norm_first)
        self.self_attn = MultiHeadAttention(d_model, num_heads, dropout)
        self.ffn = PositionwiseFeedForward(d_model, d_ff, dropout)
        self.norm1 = torch.nn.LayerNorm(d_model)
        self.norm2 = torch.nn.LayerNorm(d_model)
        self.dropout1 = torch.nn.Dropout(dropout)
        self.dropout2 = torch.nn.Dropout(dropout)
""", """
        def attend(t):
            out, _unused = self.self_attn(t, t, t, key_padding_mask=key_padding_mask)
            return out

        if self.norm_first:
            x = torch.add(x, self.dropout1(attend(self.norm1(x))))
            x = torch.add(x, self.dropout2(self.ffn(self.norm2(x))))
        else:
            x = self.norm1(torch.add(x, self.dropout1(attend(x))))
            x = self.norm2(torch.add(x, self.dropout2(self.ffn(x))))
        return x
"""],
    "encoder": ["""
        self.d_model = d_model
        self.pad_id = pad_id
        self.embedding = torch.nn.Embedding(vocab_size, d_model, padding_idx=pad_id)
        self.register_buffer("pe", sinusoidal_positional_encoding(max_len, d_model), persistent=False)
        self.dropout = torch.nn.Dropout(dropout)
        self.layers = torch.nn.ModuleList(
            [EncoderLayer(d_model, num_heads, d_ff, dropout, norm_first) for _layer in range(num_layers)])
        self.final_norm = torch.nn.LayerNorm(d_model) if norm_first else torch.nn.Identity()
""", """
        if key_padding_mask is None:
            key_padding_mask = torch.eq(tokens, self.pad_id)
        positions = self.pe[0:tokens.shape[1]]
        hidden = self.dropout(torch.add(torch.mul(self.embedding(tokens), float(np.sqrt(self.d_model))), positions))
        for enc_layer in self.layers:
            hidden = enc_layer(hidden, key_padding_mask=key_padding_mask)
        return self.final_norm(hidden)
"""],
    "parameter_count": ["""
    per_linear = np.array([d_model * d_model + d_model] * 4 + [d_model * d_ff + d_ff, d_ff * d_model + d_model])
    per_layer = int(per_linear.sum()) + 2 * 2 * d_model
    extra = 2 * d_model if norm_first else 0
    return int(vocab_size * d_model + num_layers * per_layer + extra)
"""],
    "reverse_task": ["""
        self.encoder = Encoder(vocab_size, d_model, num_heads, d_ff, num_layers, max_len=max_len)
        self.head = torch.nn.Linear(d_model, vocab_size)
""", """
        return self.head(self.encoder(tokens))
"""],
}

_COMPACT = {
    "positional_encoding": ["""
    t = torch.arange(max_len).float()[:, None] / 10000 ** (torch.arange(0, d_model, 2).float() / d_model)
    return torch.stack((t.sin(), t.cos()), 2).view(max_len, d_model)
"""],
    "attention": ["""
    s = (q @ k.mT) / k.size(-1) ** 0.5
    s = s if attn_mask is None else s.masked_fill(attn_mask.logical_not(), -1e4 * 1e5)
    return (a := s.softmax(-1)) @ v, a
"""],
    "multi_head_attention": ["""
        self.H, self.D = num_heads, d_model
        self.w_q, self.w_k, self.w_v, self.w_o = (nn.Linear(d_model, d_model) for _ in range(4))
        self.dp = nn.Dropout(dropout)
""", """
        sh = lambda t: t.view(*t.shape[:2], self.H, -1).transpose(1, 2)
        q, k, v = sh(self.w_q(query)), sh(self.w_k(key)), sh(self.w_v(value))
        s = q @ k.mT / q.size(-1) ** 0.5
        if key_padding_mask is not None:
            s = s.masked_fill(key_padding_mask[:, None, None, :], -1e9)
        a = s.softmax(-1)
        return self.w_o((self.dp(a) @ v).transpose(1, 2).flatten(2)), a
"""],
    "feed_forward": ["""
        self.linear1, self.linear2, self.dp = nn.Linear(d_model, d_ff), nn.Linear(d_ff, d_model), nn.Dropout(dropout)
""", """
        return self.linear2(self.dp(F.relu(self.linear1(x))))
"""],
    "encoder_layer": ["""
        self.norm_first = norm_first
        self.self_attn, self.ffn = MultiHeadAttention(d_model, num_heads, dropout), PositionwiseFeedForward(
            d_model, d_ff, dropout)
        self.norm1, self.norm2 = nn.LayerNorm(d_model), nn.LayerNorm(d_model)
        self.dropout1, self.dropout2 = nn.Dropout(dropout), nn.Dropout(dropout)
""", """
        m = key_padding_mask
        if self.norm_first:
            n = self.norm1(x); x = x + self.dropout1(self.self_attn(n, n, n, m)[0])  # noqa: E702
            return x + self.dropout2(self.ffn(self.norm2(x)))
        x = self.norm1(x + self.dropout1(self.self_attn(x, x, x, m)[0]))
        return self.norm2(x + self.dropout2(self.ffn(x)))
"""],
    "encoder": ["""
        self.d_model, self.pad_id, self.dropout = d_model, pad_id, nn.Dropout(dropout)
        self.embedding = nn.Embedding(vocab_size, d_model, padding_idx=pad_id)
        self.register_buffer("pe", sinusoidal_positional_encoding(max_len, d_model), persistent=False)
        self.layers = nn.ModuleList([EncoderLayer(d_model, num_heads, d_ff, dropout, norm_first)
                                     for _ in range(num_layers)])
        self.final_norm = [nn.Identity(), nn.LayerNorm(d_model)][int(norm_first)]
""", """
        m = tokens == self.pad_id if key_padding_mask is None else key_padding_mask
        x = self.dropout(self.embedding(tokens) * self.d_model ** 0.5 + self.pe[: tokens.size(1)])
        for l in self.layers:  # noqa: E741
            x = l(x, m)
        return self.final_norm(x)
"""],
    "parameter_count": ["""
    d, f, n = d_model, d_ff, num_layers
    return vocab_size * d + n * (4 * (d * d + d) + 2 * d * f + f + d + 4 * d) + (2 * d) * norm_first
"""],
    "reverse_task": ["""
        self.encoder, self.head = (Encoder(vocab_size, d_model, num_heads, d_ff, num_layers, max_len=max_len),
                                   nn.Linear(d_model, vocab_size))
""", """
        return self.head(self.encoder(tokens))
"""],
}

_SOFTMAX_BY_HAND = {
    "positional_encoding": ["""
    result = torch.zeros(max_len, d_model, dtype=torch.float64)
    i = 0
    while i < d_model:
        denom = 10000.0 ** (i / d_model)
        for pos in range(max_len):
            result[pos, i] = math.sin(pos / denom)
            result[pos, i + 1] = math.cos(pos / denom)
        i += 2
    return result.to(torch.float32)
"""],
    "attention": ["""
    def stable_softmax(x):
        shifted = x - x.max(dim=-1, keepdim=True).values
        ex = shifted.exp()
        return ex / ex.sum(dim=-1, keepdim=True)

    sims = torch.matmul(q, k.transpose(-1, -2)) / (q.shape[-1] ** 0.5)
    if attn_mask is not None:
        sims = sims.masked_fill(~attn_mask, -1e9)
    weights = stable_softmax(sims)
    return torch.matmul(weights, v), weights
"""],
    "multi_head_attention": ["""
        self.num_heads = num_heads
        self.size = d_model // num_heads
        self.w_q = nn.Linear(d_model, d_model)
        self.w_k = nn.Linear(d_model, d_model)
        self.w_v = nn.Linear(d_model, d_model)
        self.w_o = nn.Linear(d_model, d_model)
        self.attention_dropout = nn.Dropout(dropout)
""", """
        def stable_softmax(x):
            shifted = x - x.max(dim=-1, keepdim=True).values
            ex = shifted.exp()
            return ex / ex.sum(dim=-1, keepdim=True)

        nb, lq, lk = query.shape[0], query.shape[1], key.shape[1]
        qs = self.w_q(query).view(nb, lq, self.num_heads, self.size).transpose(1, 2)
        ks = self.w_k(key).view(nb, lk, self.num_heads, self.size).transpose(1, 2)
        vs = self.w_v(value).view(nb, lk, self.num_heads, self.size).transpose(1, 2)
        sims = torch.matmul(qs, ks.transpose(-1, -2)) / (self.size ** 0.5)
        if key_padding_mask is not None:
            sims = sims.masked_fill(key_padding_mask.unsqueeze(1).unsqueeze(1), -1e9)
        weights = stable_softmax(sims)
        attended = torch.matmul(self.attention_dropout(weights), vs)
        attended = attended.transpose(1, 2).contiguous().view(nb, lq, self.num_heads * self.size)
        return self.w_o(attended), weights
"""],
    "feed_forward": ["""
        self.linear1 = nn.Linear(d_model, d_ff)
        self.linear2 = nn.Linear(d_ff, d_model)
        self.dropout = nn.Dropout(dropout)
""", """
        a = self.linear1(x)
        a = a * (a > 0)
        return self.linear2(self.dropout(a))
"""],
    "encoder_layer": ["""
        self.norm_first = norm_first
        self.self_attn = MultiHeadAttention(d_model, num_heads, dropout)
        self.ffn = PositionwiseFeedForward(d_model, d_ff, dropout)
        self.norm1 = nn.LayerNorm(d_model)
        self.norm2 = nn.LayerNorm(d_model)
        self.dropout1 = nn.Dropout(dropout)
        self.dropout2 = nn.Dropout(dropout)
""", """
        residual = x
        if self.norm_first:
            x = self.norm1(x)
        x = self.self_attn(x, x, x, key_padding_mask=key_padding_mask)[0]
        x = residual + self.dropout1(x)
        if not self.norm_first:
            x = self.norm1(x)
        residual = x
        if self.norm_first:
            x = self.norm2(x)
        x = residual + self.dropout2(self.ffn(x))
        if not self.norm_first:
            x = self.norm2(x)
        return x
"""],
    "encoder": ["""
        self.d_model = d_model
        self.pad_id = pad_id
        self.embedding = nn.Embedding(vocab_size, d_model, padding_idx=pad_id)
        self.register_buffer("pe", sinusoidal_positional_encoding(max_len, d_model), persistent=False)
        self.dropout = nn.Dropout(dropout)
        stack = [EncoderLayer(d_model, num_heads, d_ff, dropout, norm_first) for _ in range(num_layers)]
        self.layers = nn.ModuleList(stack)
        self.final_norm = nn.LayerNorm(d_model) if norm_first else nn.Identity()
""", """
        ignore = key_padding_mask
        if ignore is None:
            ignore = tokens == self.pad_id
        length = tokens.shape[1]
        state = self.embedding(tokens) * math.sqrt(self.d_model)
        state = state + self.pe[:length, :]
        state = self.dropout(state)
        for layer in self.layers:
            state = layer(state, key_padding_mask=ignore)
        state = self.final_norm(state)
        return state
"""],
    "parameter_count": ["""
    count = 0
    count += vocab_size * d_model
    layer = 0
    layer += 4 * (d_model + 1) * d_model
    layer += (d_model + 1) * d_ff
    layer += (d_ff + 1) * d_model
    layer += 2 * 2 * d_model
    count += layer * num_layers
    if norm_first:
        count += d_model + d_model
    return count
"""],
    "reverse_task": ["""
        self.encoder = Encoder(vocab_size, d_model, num_heads, d_ff, num_layers, max_len=max_len)
        self.head = nn.Linear(d_model, vocab_size)
""", """
        x = self.encoder(tokens)
        x = self.head(x)
        return x
"""],
}

_PERMUTE = {
    "positional_encoding": ["""
    scale = 1.0 / torch.pow(10000.0, torch.arange(0, d_model, 2, dtype=torch.float64) / d_model)
    ang = torch.outer(torch.arange(max_len, dtype=torch.float64), scale)
    table = torch.zeros(max_len, d_model // 2, 2, dtype=torch.float64)
    table[..., 0] = ang.sin()
    table[..., 1] = ang.cos()
    return table.reshape(max_len, d_model).float()
"""],
    "attention": ["""
    kt = k.permute(*range(k.dim() - 2), k.dim() - 1, k.dim() - 2)
    logit = torch.matmul(q, kt) / torch.sqrt(torch.tensor(q.shape[-1], dtype=q.dtype))
    if attn_mask is not None:
        logit = logit.masked_fill(~attn_mask, torch.finfo(q.dtype).min)
    prob = torch.softmax(logit, dim=logit.dim() - 1)
    return torch.matmul(prob, v), prob
"""],
    "multi_head_attention": ["""
        self.head_count = num_heads
        self.per_head = d_model // num_heads
        self.model_width = d_model
        self.w_q = nn.Linear(d_model, d_model)
        self.w_k = nn.Linear(d_model, d_model)
        self.w_v = nn.Linear(d_model, d_model)
        self.w_o = nn.Linear(d_model, d_model)
        self.dropout = nn.Dropout(dropout)
""", """
        n_batch = query.shape[0]
        q4 = self.w_q(query).unflatten(2, (self.head_count, self.per_head)).permute(0, 2, 1, 3)
        k4 = self.w_k(key).unflatten(2, (self.head_count, self.per_head)).permute(0, 2, 3, 1)
        v4 = self.w_v(value).unflatten(2, (self.head_count, self.per_head)).permute(0, 2, 1, 3)
        logit = torch.matmul(q4, k4) / math.sqrt(self.per_head)
        if key_padding_mask is not None:
            logit = logit.masked_fill(key_padding_mask.view(n_batch, 1, 1, -1), torch.finfo(logit.dtype).min)
        prob = torch.softmax(logit, dim=-1)
        merged = torch.matmul(self.dropout(prob), v4).permute(0, 2, 1, 3).flatten(2)
        return self.w_o(merged), prob
"""],
    "feed_forward": ["""
        self.linear1 = nn.Linear(in_features=d_model, out_features=d_ff)
        self.linear2 = nn.Linear(in_features=d_ff, out_features=d_model)
        self.dropout = nn.Dropout(dropout)
""", """
        hidden = torch.relu(self.linear1(x))
        return self.linear2(self.dropout(hidden))
"""],
    "encoder_layer": ["""
        self.self_attn = MultiHeadAttention(d_model=d_model, num_heads=num_heads, dropout=dropout)
        self.ffn = PositionwiseFeedForward(d_model=d_model, d_ff=d_ff, dropout=dropout)
        self.norm1 = nn.LayerNorm(d_model)
        self.dropout1 = nn.Dropout(dropout)
        self.norm2 = nn.LayerNorm(d_model)
        self.dropout2 = nn.Dropout(dropout)
        self.norm_first = norm_first
""", """
        if not self.norm_first:
            attended = self.self_attn(x, x, x, key_padding_mask=key_padding_mask)[0]
            mid = self.norm1(x + self.dropout1(attended))
            return self.norm2(mid + self.dropout2(self.ffn(mid)))
        normed = self.norm1(x)
        mid = x + self.dropout1(self.self_attn(normed, normed, normed, key_padding_mask=key_padding_mask)[0])
        return mid + self.dropout2(self.ffn(self.norm2(mid)))
"""],
    "encoder": ["""
        self.pad_id = pad_id
        self.d_model = d_model
        self.embedding = nn.Embedding(num_embeddings=vocab_size, embedding_dim=d_model, padding_idx=pad_id)
        self.register_buffer("pe", sinusoidal_positional_encoding(max_len, d_model), persistent=False)
        self.dropout = nn.Dropout(p=dropout)
        self.layers = nn.ModuleList()
        for _ in range(num_layers):
            self.layers.append(EncoderLayer(d_model, num_heads, d_ff, dropout=dropout, norm_first=norm_first))
        self.final_norm = nn.LayerNorm(d_model) if norm_first else nn.Identity()
""", """
        padded = key_padding_mask if key_padding_mask is not None else torch.eq(tokens, self.pad_id)
        scaled = self.embedding(tokens) * torch.sqrt(torch.tensor(float(self.d_model)))
        current = self.dropout(scaled + self.pe[: tokens.shape[1]].unsqueeze(0))
        for encoder_layer in self.layers:
            current = encoder_layer(current, key_padding_mask=padded)
        return self.final_norm(current)
"""],
    "parameter_count": ["""
    projections = 4 * d_model * d_model + 4 * d_model
    feed_forward = d_model * d_ff + d_ff + d_ff * d_model + d_model
    layer_norms = 4 * d_model
    stack = num_layers * (projections + feed_forward + layer_norms)
    return vocab_size * d_model + stack + (2 * d_model if norm_first else 0)
"""],
    "reverse_task": ["""
        self.head = nn.Linear(d_model, vocab_size)
        self.encoder = Encoder(vocab_size, d_model, num_heads, d_ff, num_layers, max_len=max_len)
""", """
        return self.head(self.encoder(tokens))
"""],
}

# Part 8's two functions (train_reverser, reverse_accuracy), written eleven ways: each style gets its own
_TRAIN = {
    "loops": ["""
    losses = []
    model.train()
    for batch in batches:
        logits = model(batch)
        target = batch.flip(1)
        loss = 0.0
        for t in range(batch.shape[1]):
            loss = loss + F.cross_entropy(logits[:, t, :], target[:, t])
        loss = loss / batch.shape[1]
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses
""", """
    model.eval()
    right = total = 0
    with torch.no_grad():
        out = model(tokens)
        for b in range(tokens.shape[0]):
            for t in range(tokens.shape[1]):
                right += int(out[b, t].argmax() == tokens[b, tokens.shape[1] - 1 - t])
                total += 1
    return right / total
"""],
    "einsum": ["""
    record = []
    for x in batches:
        y = torch.flip(x, [-1])
        scores = model(x)
        loss = F.cross_entropy(scores.reshape(-1, scores.shape[-1]), y.reshape(-1))
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        record.append(float(loss.detach()))
    return record
""", """
    model.eval()
    with torch.inference_mode():
        best = model(tokens).argmax(-1)
    return (best == torch.flip(tokens, [-1])).float().mean().item()
"""],
    "helpers": ["""
    def loss_on(x):
        logits = model(x)
        return F.cross_entropy(logits.transpose(1, 2), x.flip(-1))

    def update(x):
        optimizer.zero_grad()
        loss = loss_on(x)
        loss.backward()
        optimizer.step()
        return loss.item()

    model.train()
    return [update(x) for x in batches]
""", """
    def predictions():
        with torch.no_grad():
            return model(tokens).argmax(dim=-1)

    model.eval()
    matches = predictions().eq(tokens.flip(-1))
    return matches.sum().item() / matches.numel()
"""],
    "typed": ["""
    curve: list[float] = []
    model.train()
    batch: torch.Tensor
    for batch in batches:
        expected: torch.Tensor = batch.flip(dims=(1,))
        logits: torch.Tensor = model(batch)
        loss: torch.Tensor = F.cross_entropy(logits.flatten(end_dim=1), expected.flatten())
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        curve.append(loss.item())
    return curve
""", """
    model.eval()
    with torch.no_grad():
        guessed: torch.Tensor = model(tokens).argmax(dim=2)
    hits: int = int((guessed == tokens.flip(dims=(1,))).sum())
    return hits / tokens.numel()
"""],
    "bmm": ["""
    out = []
    for step, x in enumerate(batches):
        logp = torch.log_softmax(model(x), dim=-1)
        picked = logp.gather(-1, x.flip(1).unsqueeze(-1)).squeeze(-1)
        loss = -picked.mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        out.append(loss.item())
    return out
""", """
    model.eval()
    with torch.no_grad():
        logp = torch.log_softmax(model(tokens), dim=-1)
    good = logp.argmax(-1) == tokens.flip(1)
    return good.double().mean().item()
"""],
    "functional": ["""
    model.train()
    history = list()
    for x in batches:
        optimizer.zero_grad()
        l = F.nll_loss(F.log_softmax(model(x), -1).permute(0, 2, 1), x.flip(-1))
        l.backward()
        optimizer.step()
        history.append(l.item())
    return history
""", """
    model.eval()
    with torch.no_grad():
        y = F.softmax(model(tokens), dim=-1).argmax(-1)
    return torch.eq(y, tokens.flip(-1)).sum().item() / y.numel()
"""],
    "chunks": ["""
    values = []
    it = iter(batches)
    while True:
        try:
            x = next(it)
        except StopIteration:
            break
        target = x[:, torch.arange(x.shape[1] - 1, -1, -1)]
        logits = model(x)
        loss = F.cross_entropy(logits.reshape(x.numel(), -1), target.reshape(-1))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        values.append(loss.item())
    return values
""", """
    model.eval()
    index = torch.arange(tokens.shape[1] - 1, -1, -1)
    with torch.no_grad():
        got = model(tokens).max(dim=-1).indices
    return float((got == tokens[:, index]).float().mean())
"""],
    "numpy_first": ["""
    trace = []
    model.train()
    for x in batches:
        rev = torch.as_tensor(np.ascontiguousarray(x.numpy()[:, ::-1]))
        logits = model(x)
        loss = F.cross_entropy(logits.view(-1, logits.size(-1)), rev.view(-1))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        trace.append(loss.item())
    return trace
""", """
    model.eval()
    with torch.no_grad():
        guess = model(tokens).argmax(-1).numpy()
    return float(np.mean(guess == tokens.numpy()[:, ::-1]))
"""],
    "compact": ["""
    model.train(); seen = []
    for x in batches:
        optimizer.zero_grad(); loss = F.cross_entropy(model(x).mT, x.flip(1)); loss.backward(); optimizer.step()
        seen.append(loss.item())
    return seen
""", """
    model.eval()
    with torch.no_grad(): return (model(tokens).argmax(2) == tokens.flip(1)).float().mean().item()
"""],
    "softmax_by_hand": ["""
    losses = []
    for x in batches:
        z = model(x)
        z = z - z.max(dim=-1, keepdim=True).values
        logp = z - torch.log(torch.exp(z).sum(dim=-1, keepdim=True))
        target = x.flip(1)
        nll = -torch.gather(logp, 2, target[..., None])[..., 0]
        loss = nll.sum() / nll.numel()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses
""", """
    model.eval()
    with torch.no_grad():
        z = model(tokens)
    picked = torch.max(z, dim=-1)[1]
    return (picked == tokens.flip(1)).sum().item() / float(tokens.numel())
"""],
    "permute": ["""
    model.train()
    epoch_losses = []
    for i, x in enumerate(batches):
        logits = model(x).permute(0, 2, 1)
        loss = F.cross_entropy(logits, torch.flip(x, dims=[1]), reduction="mean")
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        epoch_losses.append(loss.detach().item())
    return epoch_losses
""", """
    model.eval()
    with torch.no_grad():
        pred = model(tokens).permute(0, 2, 1).argmax(dim=1)
    n_right = (pred == torch.flip(tokens, dims=[1])).sum()
    return n_right.item() / tokens.numel()
"""],
}
for _style, _bodies in _TRAIN.items():
    globals()["_" + _style.upper()]["reverse_task"] += _bodies


BODIES = {"loops": _LOOPS, "einsum": _EINSUM, "helpers": _HELPERS, "typed": _TYPED, "bmm": _BMM,
          "functional": _FUNCTIONAL, "chunks": _CHUNKS, "numpy_first": _NUMPY_FIRST, "compact": _COMPACT,
          "softmax_by_hand": _SOFTMAX_BY_HAND, "permute": _PERMUTE}


# ---------------------------------------------------------------- copies, in four disguises
#
# What a student who copies does, for the similarity report's tests: take course_lib's graded definition
# with the helpers it calls (or another student's cell), then rename, reformat or reorder it.

_LIB = _Path(__file__).resolve().parents[2] / "course_lib"
GRADED = {"positional_encoding": "sinusoidal_positional_encoding", "attention": "scaled_dot_product_attention",
           "multi_head_attention": "MultiHeadAttention", "feed_forward": "PositionwiseFeedForward",
           "encoder_layer": "EncoderLayer", "encoder": "Encoder"}


def _definitions() -> dict:
    """{name: (source, node)} of every top-level function and class of course_lib (first one wins)."""
    found = {}
    for path in sorted(_LIB.rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        lines = text.splitlines(keepends=True)
        for node in _ast.parse(text).body:
            if isinstance(node, (_ast.FunctionDef, _ast.ClassDef)) and node.name not in found:
                first = min([node.lineno] + [d.lineno for d in node.decorator_list])
                found[node.name] = ("".join(lines[first - 1:node.end_lineno]), node)
    return found


def with_helpers(part: str) -> str:
    """course_lib's definition of ``part`` and, before it, every course_lib function or class it calls
    (transitively), as a student pastes them into the cell so that it runs without course_lib."""
    defs = _definitions()
    order: list = []

    def visit(name):
        if name in order or name not in defs:
            return
        order.append(name)
        for node in _ast.walk(defs[name][1]):
            used = node.id if isinstance(node, _ast.Name) else node.attr if isinstance(node, _ast.Attribute) else None
            if used in defs and used not in GRADED.values():
                visit(used)
    visit(GRADED[part])
    return "\n\n".join(defs[n][0] for n in reversed(order))


def two_edits(code: str) -> str:
    """Two small edits: the first argument check dropped, a line of one's own added after the first ``def``."""
    lines = code.split("\n")

    def indent(line):
        return len(line) - len(line.lstrip())

    for i, line in enumerate(lines[:-1]):
        if (_re.match(r"\s*_?check\w*\(", line) and line.rstrip().endswith(")")
                and lines[i + 1].strip() and indent(lines[i + 1]) == indent(line)):
            del lines[i]
            break
    for i, line in enumerate(lines):
        if line.lstrip().startswith("def ") and line.rstrip().endswith(":"):
            lines.insert(i + 1, " " * (indent(line) + 4) + "steps_done = 0")
            break
    return "\n".join(lines)


_KEEP = set(_keyword.kwlist) | set(dir(__builtins__) if isinstance(__builtins__, dict) is False else __builtins__) | {
    "self", "torch", "nn", "F", "np", "math", "super", "__init__", "forward"}


def renamed(code: str, keep=frozenset()) -> str:
    """Every name the author chose gets another one (attributes after ``self.`` too), but those in
    ``keep``; the library's names and the keywords of calls (``dim=-1``) stay, or the code would no
    longer run."""
    toks = list(_tokenize.generate_tokens(_io.StringIO(code).readline))
    out, depth = [], 0
    for i, tok in enumerate(toks):
        text = tok.string
        if tok.type == _tokenize.OP:
            depth += text in "([{"
            depth -= text in ")]}"
        following = next((t for t in toks[i + 1:] if t.type not in (_tokenize.NL, _tokenize.COMMENT)), None)
        keyword_argument = depth > 0 and following is not None and following.string == "="
        after_dot = i > 0 and toks[i - 1].string == "."
        if (tok.type == _tokenize.NAME and text not in _KEEP and text not in keep and not _keyword.iskeyword(text)
                and not keyword_argument
                and (not after_dot or (i > 1 and toks[i - 2].string == "self"))):
            text = "my_" + text.lstrip("_")
        out.append((tok.type, text))
    return _tokenize.untokenize(out)


def reformatted(code: str) -> str:
    """Comments and docstrings gone, two-space indents, a blank line between statements, and every call
    with several arguments split one argument a line (as a formatter does)."""
    tree = _ast.parse(code)
    for node in _ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(body, list) and body and isinstance(body[0], _ast.Expr) and \
                isinstance(getattr(body[0], "value", None), _ast.Constant) and isinstance(body[0].value.value, str):
            node.body = body[1:] or [_ast.Pass()]
    text = _ast.unparse(tree)
    lines = []
    for line in text.split("\n"):
        indent = len(line) - len(line.lstrip())
        stripped = line.strip()
        new = " " * (indent // 2) + stripped
        if "'" not in stripped and '"' not in stripped and "," in stripped:
            depth, pieces = 0, [""]
            for ch in new:
                depth += ch in "([{"
                depth -= ch in ")]}"
                pieces[-1] += ch
                if ch == "," and depth > 0:
                    pieces.append("")
            new = ("\n" + " " * (indent // 2 + 8)).join(p.strip() if i else p for i, p in enumerate(pieces))
        lines.append(new)
        if stripped and not stripped.endswith(":"):
            lines.append("")
    return "\n".join(lines)


def reordered(code: str) -> str:
    """The functions and classes in the opposite order, and the methods of each class too."""
    tree = _ast.parse(code)
    tree.body = list(reversed(tree.body))
    for node in tree.body:
        if isinstance(node, _ast.ClassDef):
            node.body = [n for n in node.body if not isinstance(n, _ast.FunctionDef)] + list(
                reversed([n for n in node.body if isinstance(n, _ast.FunctionDef)]))
    return _ast.unparse(tree)


def contract_names(code: str) -> frozenset:
    """What a copier of a cell must keep for it to still be graded: the names it defines at the top, every
    parameter (the grader passes them by keyword) and every ``self.`` attribute (the state_dict's keys)."""
    tree = _ast.parse(code)
    names = {n.name for n in tree.body if isinstance(n, (_ast.FunctionDef, _ast.ClassDef))} | set(GRADED.values())
    for node in _ast.walk(tree):
        if isinstance(node, _ast.arg):
            names.add(node.arg)
        if isinstance(node, _ast.Attribute) and isinstance(node.value, _ast.Name) and node.value.id == "self":
            names.add(node.attr)
    return frozenset(names)


DISGUISES = {"verbatim": lambda c: c, "renamed": renamed, "reformatted": lambda c: reformatted(renamed(c)),
             "reordered": lambda c: reordered(renamed(c))}
#: the same disguises, keeping what the grader needs (a copy that is still graded full marks)
RUNNABLE = {"verbatim": lambda c: c, "renamed": lambda c: renamed(c, contract_names(c)),
            "reformatted": lambda c: reformatted(renamed(c, contract_names(c))),
            "reordered": lambda c: reordered(renamed(c, contract_names(c)))}
