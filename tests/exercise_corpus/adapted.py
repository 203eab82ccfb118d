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

``DISGUISED`` are two more copies of course_lib, each adapted by hand in its own way (names, comments,
the order of independent lines, the helpers inlined differently, statements merged or split), and
``HONEST_MORE`` two more students who wrote the six parts on their own (both pass every visible and
hidden check).

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

# ---------------------------------------------------------------- two more disguises, written by hand
#
# course_lib's reference moved into the cells by two other students who hide it better than ``ADAPTED``:
# their own names and comments, independent lines in another order, the helpers inlined their own way
# (the head split written once per tensor from the batch size, not from ``b, t, _ = x.shape``), branches
# turned round, statements merged into one expression or split into named steps.

_DISGUISED_A = {
    "positional_encoding": ["""
    # even feature indices give the frequencies, one row per position
    freq_idx = torch.arange(0, d_model, 2, dtype=torch.float64)
    table = torch.zeros(max_len, d_model, dtype=torch.float64)
    position = torch.arange(max_len, dtype=torch.float64)[:, None]
    theta = position / 10000.0 ** (freq_idx / d_model)
    table[:, 0::2] = torch.sin(theta)      # even columns
    table[:, 1::2] = torch.cos(theta[:, : d_model // 2])      # odd columns (one fewer when d_model is odd)
    return table.to(torch.float32)
"""],
    "attention": ["""
    width = q.shape[-1]
    logits = q @ k.transpose(-2, -1) / math.sqrt(width)   # similarity of every query with every key
    if attn_mask is not None:
        logits = logits.masked_fill(~attn_mask, torch.finfo(logits.dtype).min)   # blocked keys
    probs = torch.softmax(logits, dim=-1)
    if attn_mask is not None:
        probs = probs * attn_mask.any(dim=-1, keepdim=True)   # a row that sees no key gives 0
    return probs @ v, probs
"""],
    "multi_head_attention": ["""
        if d_model % num_heads != 0:
            raise ValueError("d_model must be divisible by num_heads")
        self.w_q = nn.Linear(d_model, d_model)
        self.w_k = nn.Linear(d_model, d_model)
        self.w_v = nn.Linear(d_model, d_model)
        self.w_o = nn.Linear(d_model, d_model)
        self.num_heads = num_heads
        self.d_k = d_model // num_heads
        self.d_model = d_model
        self.dropout = dropout
""", """
        batch = query.shape[0]
        # project, cut d_model into (num_heads, d_k), heads before positions
        keys = self.w_k(key).view(batch, key.shape[1], self.num_heads, self.d_k).transpose(1, 2)
        queries = self.w_q(query).view(batch, query.shape[1], self.num_heads, self.d_k).transpose(1, 2)
        values = self.w_v(value).view(batch, value.shape[1], self.num_heads, self.d_k).transpose(1, 2)
        allowed = None if key_padding_mask is None else ~key_padding_mask[:, None, None, :]
        drop_p = self.dropout if self.training else 0.0
        logits = queries @ keys.transpose(-2, -1) / math.sqrt(queries.shape[-1])
        if allowed is not None:
            logits = logits.masked_fill(~allowed, torch.finfo(logits.dtype).min)
        attn = torch.softmax(logits, dim=-1)
        if allowed is not None:
            attn = attn * allowed.any(dim=-1, keepdim=True)
        mixed = (F.dropout(attn, p=drop_p) if drop_p > 0.0 else attn) @ values
        # the heads side by side again, then the output projection
        mixed = mixed.transpose(1, 2).reshape(batch, -1, self.d_model)
        return self.w_o(mixed), attn
"""],
    "feed_forward": ["""
        self.linear2 = nn.Linear(d_ff, d_model)
        self.linear1 = nn.Linear(d_model, d_ff)
        self.dropout = nn.Dropout(dropout)
        self.d_ff = d_ff
        self.d_model = d_model
""", """
        hidden = F.relu(self.linear1(x))            # widen
        return self.linear2(self.dropout(hidden))   # and back to d_model
"""],
    "encoder_layer": ["""
        self.self_attn = MultiHeadAttention(d_model, num_heads, dropout)
        self.norm1 = nn.LayerNorm(d_model, eps=1e-5)
        self.dropout1 = nn.Dropout(dropout)
        self.ffn = PositionwiseFeedForward(d_model, d_ff, dropout)
        self.norm2 = nn.LayerNorm(d_model, eps=1e-5)
        self.dropout2 = nn.Dropout(dropout)
        self.norm_first = norm_first
""", """
        if not self.norm_first:                      # the paper's order: add, then normalize
            attended, _ = self.self_attn(x, x, x, key_padding_mask=key_padding_mask)
            x = self.norm1(x + self.dropout1(attended))
            return self.norm2(x + self.dropout2(self.ffn(x)))
        normed = self.norm1(x)
        attended, _ = self.self_attn(normed, normed, normed, key_padding_mask=key_padding_mask)
        x = x + self.dropout1(attended)
        return x + self.dropout2(self.ffn(self.norm2(x)))
"""],
    "encoder": ["""
        self.pad_id = pad_id
        self.max_len = max_len
        self.d_model = d_model
        self.vocab_size = vocab_size
        self.dropout = nn.Dropout(dropout)
        self.embedding = nn.Embedding(vocab_size, d_model, padding_idx=pad_id)
        # small random embeddings, the padding row at zero
        with torch.no_grad():
            nn.init.normal_(self.embedding.weight, mean=0.0, std=d_model ** -0.5)
            if self.embedding.padding_idx is not None:
                self.embedding.weight[self.embedding.padding_idx].zero_()
        self.layers = nn.ModuleList(
            EncoderLayer(d_model, num_heads, d_ff, dropout, norm_first) for _ in range(num_layers))
        self.register_buffer("pe", sinusoidal_positional_encoding(max_len, d_model), persistent=False)
        self.final_norm = nn.LayerNorm(d_model) if norm_first else nn.Identity()
""", """
        ids = tokens.long()
        if key_padding_mask is None:
            key_padding_mask = ids == self.pad_id
            if not key_padding_mask.any():
                key_padding_mask = None             # nothing padded: no mask at all
        length = ids.shape[1]
        h = self.dropout(self.embedding(ids) * math.sqrt(self.d_model) + self.pe[:length].to(torch.float32))
        for block in self.layers:
            h = block(h, key_padding_mask)
        return self.final_norm(h)
"""],
}

_DISGUISED_B = {
    "positional_encoding": ["""
    # the sinusoid table: built in double precision, rounded once at the end
    out = torch.zeros(max_len, d_model, dtype=torch.float64)
    evens = torch.arange(0, d_model, 2, dtype=torch.float64)
    steps = torch.arange(max_len, dtype=torch.float64)[:, None]
    arg = steps / 10000.0 ** (evens / d_model)
    out[:, 0::2] = torch.sin(arg)
    out[:, 1::2] = torch.cos(arg[:, : d_model // 2])
    return out.to(torch.float32)
"""],
    "attention": ["""
    dk = q.shape[-1]
    s = q @ k.transpose(-2, -1) / math.sqrt(dk)
    if attn_mask is not None:
        # masked keys get the lowest finite score
        s = s.masked_fill(~attn_mask, torch.finfo(s.dtype).min)
    a = torch.softmax(s, dim=-1)
    if attn_mask is not None:
        a = a * attn_mask.any(dim=-1, keepdim=True)
    return a @ v, a
"""],
    "multi_head_attention": ["""
        if d_model % num_heads != 0:
            raise ValueError(f"num_heads ({num_heads}) does not divide d_model ({d_model})")
        self.d_model = d_model
        self.num_heads = num_heads
        self.d_k = d_model // num_heads
        self.dropout = dropout
        self.w_v = nn.Linear(d_model, d_model)
        self.w_q = nn.Linear(d_model, d_model)
        self.w_k = nn.Linear(d_model, d_model)
        self.w_o = nn.Linear(d_model, d_model)
""", """
        mask = None
        if key_padding_mask is not None:
            mask = ~key_padding_mask[:, None, None, :]       # (B, 1, 1, T_k), True = may attend
        rate = self.dropout if self.training else 0.0
        n, t_q, _ = query.shape
        n, t_k, _ = key.shape
        q = self.w_q(query).view(n, t_q, self.num_heads, self.d_k).transpose(1, 2)
        k = self.w_k(key).view(n, t_k, self.num_heads, self.d_k).transpose(1, 2)
        v = self.w_v(value).view(n, t_k, self.num_heads, self.d_k).transpose(1, 2)
        dk = q.shape[-1]
        s = q @ k.transpose(-2, -1) / math.sqrt(dk)
        if mask is not None:
            s = s.masked_fill(~mask, torch.finfo(s.dtype).min)
        w = torch.softmax(s, dim=-1)
        if mask is not None:
            w = w * mask.any(dim=-1, keepdim=True)
        z = (F.dropout(w, p=rate) if rate > 0.0 else w) @ v
        return self.w_o(z.transpose(1, 2).reshape(n, t_q, self.d_model)), w
"""],
    "feed_forward": ["""
        self.d_model = d_model
        self.d_ff = d_ff
        self.dropout = nn.Dropout(dropout)
        self.linear1 = nn.Linear(d_model, d_ff)
        self.linear2 = nn.Linear(d_ff, d_model)
        self.activation = F.relu
""", """
        z = self.activation(self.linear1(x))
        return self.linear2(self.dropout(z))
"""],
    "encoder_layer": ["""
        self.norm_first = norm_first
        self.dropout1 = nn.Dropout(dropout)
        self.dropout2 = nn.Dropout(dropout)
        self.norm1 = nn.LayerNorm(d_model, eps=1e-5)
        self.norm2 = nn.LayerNorm(d_model, eps=1e-5)
        self.self_attn = MultiHeadAttention(d_model, num_heads, dropout)
        self.ffn = PositionwiseFeedForward(d_model, d_ff, dropout)
""", """
        if self.norm_first:
            y = self.norm1(x)
            a, _ = self.self_attn(y, y, y, key_padding_mask=key_padding_mask)
            x = x + self.dropout1(a)
            x = x + self.dropout2(self.ffn(self.norm2(x)))
            return x
        a, _ = self.self_attn(x, x, x, key_padding_mask=key_padding_mask)
        x = self.norm1(x + self.dropout1(a))
        x = self.norm2(x + self.dropout2(self.ffn(x)))
        return x
"""],
    "encoder": ["""
        self.d_model = d_model
        self.pad_id = pad_id
        self.vocab_size = vocab_size
        self.max_len = max_len
        self.embedding = nn.Embedding(vocab_size, d_model, padding_idx=pad_id)
        with torch.no_grad():                   # embeddings of norm about 1, the padding row 0
            nn.init.normal_(self.embedding.weight, mean=0.0, std=d_model ** -0.5)
            if self.embedding.padding_idx is not None:
                self.embedding.weight[self.embedding.padding_idx].zero_()
        self.register_buffer("pe", sinusoidal_positional_encoding(max_len, d_model), persistent=False)
        self.layers = nn.ModuleList(
            EncoderLayer(d_model, num_heads, d_ff, dropout, norm_first) for _ in range(num_layers))
        self.dropout = nn.Dropout(dropout)
        self.final_norm = nn.LayerNorm(d_model) if norm_first else nn.Identity()
""", """
        tokens = tokens.long()
        mask = key_padding_mask
        if mask is None:
            mask = tokens == self.pad_id
            if not mask.any():
                mask = None
        T = tokens.shape[1]
        x = self.embedding(tokens) * math.sqrt(self.d_model)
        x = x + self.pe[:T].to(x.dtype)
        x = self.dropout(x)
        for layer in self.layers:
            x = layer(x, mask)
        return self.final_norm(x)
"""],
}

#: {student: {part: bodies}}: two more copies of course_lib, disguised by hand (each part flagged)
DISGUISED = {"disguised_a": _DISGUISED_A, "disguised_b": _DISGUISED_B}

# ---------------------------------------------------------------- two more honest students, on their own

_HONEST_LOG = {          # the Annotated Transformer's habits: frequencies through exp/log, a helper per step
    "positional_encoding": ["""
    inv_freq = torch.exp(torch.arange(0, d_model, 2, dtype=torch.float64) * (-math.log(10000.0) / d_model))
    where = torch.arange(0, max_len, dtype=torch.float64).unsqueeze(-1)
    grid = torch.empty(max_len, d_model, dtype=torch.float64)
    grid[:, 0::2] = torch.sin(where * inv_freq)
    grid[:, 1::2] = torch.cos(where * inv_freq)[:, : d_model // 2]
    return grid.float()
"""],
    "attention": ["""
    sims = torch.einsum("...qd,...kd->...qk", q, k) / k.size(-1) ** 0.5
    if attn_mask is not None:
        sims = sims.masked_fill(attn_mask.logical_not(), -1e9)
    att = sims.softmax(-1)
    return torch.einsum("...qk,...kd->...qd", att, v), att
"""],
    "multi_head_attention": ["""
        self.num_heads, self.head_dim = num_heads, d_model // num_heads
        for name in ("w_q", "w_k", "w_v", "w_o"):
            setattr(self, name, nn.Linear(d_model, d_model))
        self.attn_drop = nn.Dropout(dropout)
""", """
        def heads(t):                              # (B, T, d_model) -> (B, H, T, head_dim)
            return t.unflatten(-1, (self.num_heads, self.head_dim)).swapaxes(1, 2)
        qh, kh, vh = heads(self.w_q(query)), heads(self.w_k(key)), heads(self.w_v(value))
        sims = torch.einsum("bhqd,bhkd->bhqk", qh, kh) / self.head_dim ** 0.5
        if key_padding_mask is not None:
            sims = sims.masked_fill(key_padding_mask.view(key_padding_mask.size(0), 1, 1, -1), -1e9)
        att = sims.softmax(-1)
        merged = torch.einsum("bhqk,bhkd->bhqd", self.attn_drop(att), vh).swapaxes(1, 2).flatten(-2)
        return self.w_o(merged), att
"""],
    "feed_forward": ["""
        self.linear1, self.linear2 = nn.Linear(d_model, d_ff), nn.Linear(d_ff, d_model)
        self.p = dropout
""", """
        return self.linear2(F.dropout(torch.relu(self.linear1(x)), self.p, self.training))
"""],
    "encoder_layer": ["""
        self.self_attn = MultiHeadAttention(d_model, num_heads, dropout)
        self.ffn = PositionwiseFeedForward(d_model, d_ff, dropout)
        self.norm1 = nn.LayerNorm(d_model)
        self.norm2 = nn.LayerNorm(d_model)
        self.dropout1 = nn.Dropout(dropout)
        self.dropout2 = nn.Dropout(dropout)
        self.prenorm = norm_first
""", """
        def attend(t):
            return self.self_attn(t, t, t, key_padding_mask=key_padding_mask)[0]
        if self.prenorm:
            x = x + self.dropout1(attend(self.norm1(x)))
            return x + self.dropout2(self.ffn(self.norm2(x)))
        x = self.norm1(x + self.dropout1(attend(x)))
        return self.norm2(x + self.dropout2(self.ffn(x)))
"""],
    "encoder": ["""
        self.embedding = nn.Embedding(vocab_size, d_model, padding_idx=pad_id)
        self.register_buffer("pe", sinusoidal_positional_encoding(max_len, d_model), persistent=False)
        self.layers = nn.ModuleList([EncoderLayer(d_model, num_heads, d_ff, dropout, norm_first)
                                     for _ in range(num_layers)])
        self.final_norm = nn.LayerNorm(d_model) if norm_first else nn.Identity()
        self.emb_drop = nn.Dropout(dropout)
        self.pad_token, self.width = pad_id, d_model
""", """
        pad = tokens.eq(self.pad_token) if key_padding_mask is None else key_padding_mask
        emb = self.embedding(tokens).mul(self.width ** 0.5).add(self.pe[: tokens.size(1)])
        emb = self.emb_drop(emb)
        for blk in self.layers:
            emb = blk(emb, key_padding_mask=pad)
        return self.final_norm(emb)
"""],
}

_HONEST_HEADS = {        # heads one at a time, with the attention function the part before wrote
    "positional_encoding": ["""
    n_freq = (d_model + 1) // 2
    rates = 1.0 / 10000 ** (2 * torch.arange(n_freq, dtype=torch.float64) / d_model)
    ang = torch.outer(torch.arange(max_len, dtype=torch.float64), rates)
    pairs = torch.stack((ang.sin(), ang.cos()), dim=-1)      # (max_len, n_freq, 2): sin, cos side by side
    return pairs.reshape(max_len, 2 * n_freq)[:, :d_model].to(torch.float32)
"""],
    "attention": ["""
    raw = (q / math.sqrt(q.size(-1))) @ k.mT
    if attn_mask is not None:
        raw = torch.where(attn_mask, raw, torch.full_like(raw, float("-inf")))
    w = torch.softmax(raw, dim=-1)
    w = torch.nan_to_num(w, nan=0.0)                         # a query that may see no key
    return w @ v, w
"""],
    "multi_head_attention": ["""
        self.n_heads = num_heads
        self.size = d_model // num_heads
        self.w_q = nn.Linear(d_model, d_model)
        self.w_k = nn.Linear(d_model, d_model)
        self.w_v = nn.Linear(d_model, d_model)
        self.w_o = nn.Linear(d_model, d_model)
        self.drop = nn.Dropout(dropout)
""", """
        Q, K, V = self.w_q(query), self.w_k(key), self.w_v(value)
        allowed = None if key_padding_mask is None else (~key_padding_mask)[:, None, :]
        outs, maps = [], []
        for i in range(self.n_heads):
            cols = slice(i * self.size, (i + 1) * self.size)
            _, w = scaled_dot_product_attention(Q[..., cols], K[..., cols], V[..., cols], attn_mask=allowed)
            outs.append(self.drop(w) @ V[..., cols])
            maps.append(w)
        return self.w_o(torch.cat(outs, dim=-1)), torch.stack(maps, dim=1)
"""],
    "feed_forward": ["""
        self.linear1 = nn.Linear(d_model, d_ff)
        self.relu = nn.ReLU()
        self.drop = nn.Dropout(dropout)
        self.linear2 = nn.Linear(d_ff, d_model)
""", """
        for step in (self.linear1, self.relu, self.drop, self.linear2):
            x = step(x)
        return x
"""],
    "encoder_layer": ["""
        self.norm_first = norm_first
        self.self_attn, self.ffn = MultiHeadAttention(d_model, num_heads, dropout), PositionwiseFeedForward(
            d_model, d_ff, dropout)
        self.norm1, self.norm2 = nn.LayerNorm(d_model), nn.LayerNorm(d_model)
        self.dropout1, self.dropout2 = nn.Dropout(dropout), nn.Dropout(dropout)
""", """
        def residual(sub, norm, drop, t):
            if self.norm_first:
                return t + drop(sub(norm(t)))
            return norm(t + drop(sub(t)))
        x = residual(lambda t: self.self_attn(t, t, t, key_padding_mask)[0], self.norm1, self.dropout1, x)
        return residual(self.ffn, self.norm2, self.dropout2, x)
"""],
    "encoder": ["""
        self.embedding = nn.Embedding(vocab_size, d_model, padding_idx=pad_id)
        self.dropout = nn.Dropout(dropout)
        self.layers = nn.ModuleList()
        for _ in range(num_layers):
            self.layers.append(EncoderLayer(d_model, num_heads, d_ff, dropout, norm_first))
        self.final_norm = nn.LayerNorm(d_model) if norm_first else nn.Identity()
        self.register_buffer("positions", sinusoidal_positional_encoding(max_len, d_model), persistent=False)
        self.factor = math.sqrt(d_model)
        self.pad_id = pad_id
""", """
        if key_padding_mask is None:
            key_padding_mask = tokens == self.pad_id
        steps = tokens.shape[-1]
        x = self.dropout(self.factor * self.embedding(tokens) + self.positions[:steps])
        for layer in self.layers:
            x = layer(x, key_padding_mask=key_padding_mask)
        return self.final_norm(x)
"""],
}

#: {student: {part: bodies}}: two more honest students (the six contract parts), flagged on nothing
HONEST_MORE = {"honest_log": _HONEST_LOG, "honest_heads": _HONEST_HEADS}
