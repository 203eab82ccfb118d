"""course_lib's reference, adapted into the exercise's cells as a student who copies it would (issue 52),
and honest students whose encoder the contract leaves few ways to write.

``ADAPTED[part]`` holds the bodies that replace the part's ``### BEGIN SOLUTION`` blocks (as in
:mod:`exercise_corpus.honest`): course_lib's definition of the part with the contract's names kept, the
argument checks dropped (they call course_lib's ``errors``), the helpers it calls inlined
(``split_heads``, ``merge_heads``, ``merge_masks``, ``scaled_dot_product_attention``, ``get_activation``,
``attend``, ``embed``, ``run_layers``, ``prepare_inputs``, ``init_embedding``) and the options the
contract does not ask for reduced to their defaults. ``SHUFFLED`` is the same copy with independent
statements reordered (three lines of the positional table, the projections of the attention, the
attributes of ``__init__``), the copy the issue saw drop from 1.00 to 0.45.

``ENCODERS`` are three students who wrote the encoder on their own (with the honest corpus's other parts):
its contract fixes ``__init__`` and leaves ``forward`` few ways to be written, so they score 0.885 to 0.925
against the model solution, which is no evidence of copying.
"""

from __future__ import annotations

ADAPTED = {
    "positional_encoding": ["""
    pos = torch.arange(max_len, dtype=torch.float64)[:, None]
    pe = torch.zeros(max_len, d_model, dtype=torch.float64)
    two_i = torch.arange(0, d_model, 2, dtype=torch.float64)
    angle = pos / 10000.0 ** (two_i / d_model)
    pe[:, 0::2] = torch.sin(angle)
    pe[:, 1::2] = torch.cos(angle[:, : d_model // 2])
    return pe.to(torch.float32)
"""],
    "attention": ["""
    d_k = q.shape[-1]
    scores = q @ k.transpose(-2, -1) / math.sqrt(d_k)
    if attn_mask is not None:
        scores = scores.masked_fill(~attn_mask, torch.finfo(scores.dtype).min)
    weights = torch.softmax(scores, dim=-1)
    if attn_mask is not None:
        weights = weights * attn_mask.any(dim=-1, keepdim=True)
    return weights @ v, weights
"""],
    "multi_head_attention": ["""
        if d_model % num_heads != 0:
            raise ValueError(f"num_heads: expected a divisor of d_model={d_model}, got {num_heads}")
        self.d_model, self.num_heads, self.d_k = d_model, num_heads, d_model // num_heads
        self.dropout = dropout
        self.w_q = nn.Linear(d_model, d_model)
        self.w_k = nn.Linear(d_model, d_model)
        self.w_v = nn.Linear(d_model, d_model)
        self.w_o = nn.Linear(d_model, d_model)
""", """
        mask = None
        if key_padding_mask is not None:
            mask = ~key_padding_mask[:, None, None, :]
        p = self.dropout if self.training else 0.0
        b, t, _ = query.shape
        q = self.w_q(query).view(b, t, self.num_heads, self.d_k).transpose(1, 2)
        b, t, _ = key.shape
        k = self.w_k(key).view(b, t, self.num_heads, self.d_k).transpose(1, 2)
        b, t, _ = value.shape
        v = self.w_v(value).view(b, t, self.num_heads, self.d_k).transpose(1, 2)
        d_k = q.shape[-1]
        scores = q @ k.transpose(-2, -1) / math.sqrt(d_k)
        if mask is not None:
            scores = scores.masked_fill(~mask, torch.finfo(scores.dtype).min)
        weights = torch.softmax(scores, dim=-1)
        if mask is not None:
            weights = weights * mask.any(dim=-1, keepdim=True)
        dropped = F.dropout(weights, p=p) if p > 0.0 else weights
        out = dropped @ v
        b, _, t, _ = out.shape
        return self.w_o(out.transpose(1, 2).reshape(b, t, self.d_model)), weights
"""],
    "feed_forward": ["""
        self.d_model, self.d_ff = d_model, d_ff
        self.activation = F.relu
        self.linear1 = nn.Linear(d_model, d_ff)
        self.linear2 = nn.Linear(d_ff, d_model)
        self.dropout = nn.Dropout(dropout)
""", """
        h = self.activation(self.linear1(x))
        return self.linear2(self.dropout(h))
"""],
    "encoder_layer": ["""
        self.norm_first = norm_first
        self.self_attn = MultiHeadAttention(d_model, num_heads, dropout)
        self.ffn = PositionwiseFeedForward(d_model, d_ff, dropout)
        self.norm1 = nn.LayerNorm(d_model, eps=1e-5)
        self.norm2 = nn.LayerNorm(d_model, eps=1e-5)
        self.dropout1 = nn.Dropout(dropout)
        self.dropout2 = nn.Dropout(dropout)
""", """
        if self.norm_first:
            y = self.norm1(x)
            a, weights = self.self_attn(y, y, y, key_padding_mask=key_padding_mask)
            x = x + self.dropout1(a)
            x = x + self.dropout2(self.ffn(self.norm2(x)))
        else:
            a, weights = self.self_attn(x, x, x, key_padding_mask=key_padding_mask)
            x = self.norm1(x + self.dropout1(a))
            x = self.norm2(x + self.dropout2(self.ffn(x)))
        return x
"""],
    "encoder": ["""
        self.vocab_size, self.d_model, self.max_len, self.pad_id = vocab_size, d_model, max_len, pad_id
        self.embedding = nn.Embedding(vocab_size, d_model, padding_idx=pad_id)
        with torch.no_grad():
            nn.init.normal_(self.embedding.weight, mean=0.0, std=d_model ** -0.5)
            if self.embedding.padding_idx is not None:
                self.embedding.weight[self.embedding.padding_idx].zero_()
        self.register_buffer("pe", sinusoidal_positional_encoding(max_len, d_model), persistent=False)
        self.dropout = nn.Dropout(dropout)
        self.layers = nn.ModuleList(
            EncoderLayer(d_model, num_heads, d_ff, dropout, norm_first) for _ in range(num_layers))
        self.final_norm = nn.LayerNorm(d_model) if norm_first else nn.Identity()
""", """
        tokens = tokens.long()
        if key_padding_mask is None:
            key_padding_mask = tokens == self.pad_id
            if not key_padding_mask.any():
                key_padding_mask = None
        x = self.embedding(tokens) * math.sqrt(self.d_model)
        t = tokens.shape[1]
        x = x + self.pe[:t].to(x.dtype)
        x = self.dropout(x)
        for layer in self.layers:
            x = layer(x, key_padding_mask)
        x = self.final_norm(x)
        return x
"""],
}

#: the same copy with independent statements in another order
SHUFFLED = {
    **ADAPTED,
    "positional_encoding": ["""
    two_i = torch.arange(0, d_model, 2, dtype=torch.float64)
    pe = torch.zeros(max_len, d_model, dtype=torch.float64)
    pos = torch.arange(max_len, dtype=torch.float64)[:, None]
    angle = pos / 10000.0 ** (two_i / d_model)
    pe[:, 0::2] = torch.sin(angle)
    pe[:, 1::2] = torch.cos(angle[:, : d_model // 2])
    return pe.to(torch.float32)
"""],
    "multi_head_attention": [ADAPTED["multi_head_attention"][0].replace(
        "        self.dropout = dropout\n", "").replace(
        "        self.w_o = nn.Linear(d_model, d_model)\n",
        "        self.w_o = nn.Linear(d_model, d_model)\n        self.dropout = dropout\n"), """
        p = self.dropout if self.training else 0.0
        b, t, _ = value.shape
        v = self.w_v(value).view(b, t, self.num_heads, self.d_k).transpose(1, 2)
        b, t, _ = key.shape
        k = self.w_k(key).view(b, t, self.num_heads, self.d_k).transpose(1, 2)
        b, t, _ = query.shape
        q = self.w_q(query).view(b, t, self.num_heads, self.d_k).transpose(1, 2)
        mask = None
        if key_padding_mask is not None:
            mask = ~key_padding_mask[:, None, None, :]
        d_k = q.shape[-1]
        scores = q @ k.transpose(-2, -1) / math.sqrt(d_k)
        if mask is not None:
            scores = scores.masked_fill(~mask, torch.finfo(scores.dtype).min)
        weights = torch.softmax(scores, dim=-1)
        if mask is not None:
            weights = weights * mask.any(dim=-1, keepdim=True)
        dropped = F.dropout(weights, p=p) if p > 0.0 else weights
        out = dropped @ v
        b, _, t, _ = out.shape
        return self.w_o(out.transpose(1, 2).reshape(b, t, self.d_model)), weights
"""],
    "encoder": [ADAPTED["encoder"][0].replace(
        "        self.dropout = nn.Dropout(dropout)\n", "").replace(
        "        self.embedding = nn.Embedding(", "        self.dropout = nn.Dropout(dropout)\n"
        "        self.embedding = nn.Embedding("), ADAPTED["encoder"][1].replace(
        "        x = self.embedding(tokens) * math.sqrt(self.d_model)\n        t = tokens.shape[1]\n",
        "        t = tokens.shape[1]\n        x = self.embedding(tokens) * math.sqrt(self.d_model)\n")],
}

_ENCODER_A = ["""
        self.d_model = d_model
        self.pad_id = pad_id
        self.embedding = nn.Embedding(vocab_size, d_model, padding_idx=pad_id)
        self.register_buffer("pe", sinusoidal_positional_encoding(max_len, d_model), persistent=False)
        self.dropout = nn.Dropout(dropout)
        self.layers = nn.ModuleList([EncoderLayer(d_model, num_heads, d_ff, dropout, norm_first)
                                     for _ in range(num_layers)])
        self.final_norm = nn.LayerNorm(d_model) if norm_first else nn.Identity()
""", """
        if key_padding_mask is None:
            key_padding_mask = tokens == self.pad_id
        x = self.embedding(tokens) * math.sqrt(self.d_model) + self.pe[:tokens.shape[1]]
        x = self.dropout(x)
        for layer in self.layers:
            x = layer(x, key_padding_mask=key_padding_mask)
        return self.final_norm(x)
"""]

_ENCODER_B = ["""
        self.d_model, self.pad_id = d_model, pad_id
        self.embedding = nn.Embedding(vocab_size, d_model, padding_idx=pad_id)
        self.register_buffer("pe", sinusoidal_positional_encoding(max_len, d_model), persistent=False)
        self.dropout = nn.Dropout(dropout)
        self.layers = nn.ModuleList(
            [EncoderLayer(d_model, num_heads, d_ff, dropout, norm_first) for _ in range(num_layers)])
        self.final_norm = nn.LayerNorm(d_model) if norm_first else nn.Identity()
""", """
        if key_padding_mask is None:
            key_padding_mask = tokens == self.pad_id
        seq_len = tokens.shape[1]
        h = self.embedding(tokens) * math.sqrt(self.d_model) + self.pe[:seq_len]
        h = self.dropout(h)
        for layer in self.layers:
            h = layer(h, key_padding_mask=key_padding_mask)
        h = self.final_norm(h)
        return h
"""]

_ENCODER_C = ["""
        self.pad_id = pad_id
        self.d_model = d_model
        self.embedding = nn.Embedding(vocab_size, d_model, padding_idx=pad_id)
        self.dropout = nn.Dropout(dropout)
        self.register_buffer("pe", sinusoidal_positional_encoding(max_len, d_model), persistent=False)
        self.layers = nn.ModuleList([EncoderLayer(d_model, num_heads, d_ff, dropout, norm_first)
                                     for i in range(num_layers)])
        self.final_norm = nn.LayerNorm(d_model) if norm_first else nn.Identity()
""", """
        if key_padding_mask is None:
            key_padding_mask = (tokens == self.pad_id)
        T = tokens.shape[1]
        out = self.embedding(tokens) * math.sqrt(self.d_model)
        out = self.dropout(out + self.pe[:T])
        for layer in self.layers:
            out = layer(out, key_padding_mask)
        return self.final_norm(out)
"""]

#: {student: {part: bodies}}: the honest corpus's first students, each with an encoder of their own
ENCODERS = {"encoder_a": _ENCODER_A, "encoder_b": _ENCODER_B, "encoder_c": _ENCODER_C}
