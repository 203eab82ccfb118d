"""Three students who solved the exercise on their own, each in their own style.

``BODIES[student][part]`` holds the code that replaces each ``### BEGIN SOLUTION`` block of the
part's cell (a list: classes have one block in ``__init__`` and one in ``forward``). ``notebook``
fills them into the release. They are correct (full marks) and written independently, so the
similarity report must not flag them, against each other or against course_lib.
"""

from __future__ import annotations

import copy
import re

_A = {
    "positional_encoding": ["""
    table = torch.zeros(max_len, d_model)
    for pos in range(max_len):
        for i in range(0, d_model, 2):
            angle = pos / (10000 ** (i / d_model))
            table[pos, i] = math.sin(angle)
            if i + 1 < d_model:
                table[pos, i + 1] = math.cos(angle)
    return table
"""],
    "attention": ["""
    scale = 1.0 / math.sqrt(k.size(-1))
    logits = torch.matmul(q, k.transpose(-1, -2)) * scale
    if attn_mask is not None:
        logits = torch.where(attn_mask, logits, torch.full_like(logits, -1e9))
    probs = F.softmax(logits, dim=-1)
    return torch.matmul(probs, v), probs
"""],
    "multi_head_attention": ["""
        self.h = num_heads
        self.dk = d_model // num_heads
        self.w_q = nn.Linear(d_model, d_model)
        self.w_k = nn.Linear(d_model, d_model)
        self.w_v = nn.Linear(d_model, d_model)
        self.w_o = nn.Linear(d_model, d_model)
        self.drop = nn.Dropout(p=dropout)
""", """
        B = query.size(0)
        Q = self.w_q(query).reshape(B, -1, self.h, self.dk).permute(0, 2, 1, 3)
        K = self.w_k(key).reshape(B, -1, self.h, self.dk).permute(0, 2, 1, 3)
        V = self.w_v(value).reshape(B, -1, self.h, self.dk).permute(0, 2, 1, 3)
        scores = torch.matmul(Q, K.transpose(-1, -2)) / math.sqrt(self.dk)
        if key_padding_mask is not None:
            allowed = (~key_padding_mask).unsqueeze(1).unsqueeze(2)
            scores = scores.masked_fill(allowed == False, -1e9)  # noqa: E712
        attn = F.softmax(scores, dim=-1)
        ctx = torch.matmul(self.drop(attn), V)
        ctx = ctx.permute(0, 2, 1, 3).contiguous().reshape(B, -1, self.h * self.dk)
        return self.w_o(ctx), attn
"""],
    "feed_forward": ["""
        self.linear1 = nn.Linear(d_model, d_ff)
        self.linear2 = nn.Linear(d_ff, d_model)
        self.drop = nn.Dropout(dropout)
""", """
        h = F.relu(self.linear1(x))
        h = self.drop(h)
        return self.linear2(h)
"""],
    "encoder_layer": ["""
        self.self_attn = MultiHeadAttention(d_model, num_heads, dropout=dropout)
        self.ffn = PositionwiseFeedForward(d_model, d_ff, dropout=dropout)
        self.norm1, self.norm2 = nn.LayerNorm(d_model), nn.LayerNorm(d_model)
        self.dropout1, self.dropout2 = nn.Dropout(dropout), nn.Dropout(dropout)
        self.pre = norm_first
""", """
        if not self.pre:
            a, _ = self.self_attn(x, x, x, key_padding_mask)
            x = self.norm1(x + self.dropout1(a))
            f = self.ffn(x)
            x = self.norm2(x + self.dropout2(f))
            return x
        h = self.norm1(x)
        a, _ = self.self_attn(h, h, h, key_padding_mask)
        x = x + self.dropout1(a)
        h = self.norm2(x)
        return x + self.dropout2(self.ffn(h))
"""],
    "encoder": ["""
        self.scale = math.sqrt(d_model)
        self.pad = pad_id
        self.embedding = nn.Embedding(vocab_size, d_model, padding_idx=pad_id)
        self.register_buffer("pe", sinusoidal_positional_encoding(max_len, d_model), persistent=False)
        self.drop = nn.Dropout(dropout)
        layers = []
        for _ in range(num_layers):
            layers.append(EncoderLayer(d_model, num_heads, d_ff, dropout=dropout, norm_first=norm_first))
        self.layers = nn.ModuleList(layers)
        if norm_first:
            self.final_norm = nn.LayerNorm(d_model)
        else:
            self.final_norm = nn.Identity()
""", """
        mask = key_padding_mask if key_padding_mask is not None else tokens.eq(self.pad)
        T = tokens.size(1)
        h = self.drop(self.embedding(tokens) * self.scale + self.pe[:T].unsqueeze(0))
        for layer in self.layers:
            h = layer(h, mask)
        return self.final_norm(h)
"""],
    "parameter_count": ["""
    per_layer = 4 * d_model * (d_model + 1) + 2 * d_model * d_ff + d_ff + d_model + 4 * d_model
    total = vocab_size * d_model + num_layers * per_layer
    if norm_first:
        total += 2 * d_model
    return total
"""],
    "reverse_task": ["""
        self.encoder = Encoder(vocab_size, d_model, num_heads, d_ff, num_layers, max_len=max_len)
        self.head = nn.Linear(d_model, vocab_size)
""", """
        h = self.encoder(tokens)
        return self.head(h)
""", """
    history = []
    for batch in batches:
        target = torch.flip(batch, dims=[1])
        out = model(batch)
        loss = F.cross_entropy(out.view(-1, out.size(-1)), target.view(-1))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        history.append(float(loss))
    return history
""", """
    model.eval()
    with torch.no_grad():
        guess = torch.argmax(model(tokens), dim=-1)
    hits = (guess == torch.flip(tokens, dims=[1])).sum().item()
    return hits / tokens.numel()
"""],
}

_B = {
    "positional_encoding": ["""
    positions = torch.arange(max_len, dtype=torch.float64).unsqueeze(1)
    freqs = torch.exp(-math.log(10000.0) * torch.arange(0, d_model, 2, dtype=torch.float64) / d_model)
    pe = torch.empty(max_len, d_model, dtype=torch.float64)
    pe[:, 0::2] = torch.sin(positions * freqs)
    pe[:, 1::2] = torch.cos(positions * freqs)
    return pe.to(torch.float32)
"""],
    "attention": ["""
    d = q.shape[-1]
    s = torch.einsum("...qd,...kd->...qk", q, k) / d ** 0.5
    if attn_mask is not None:
        s = s.masked_fill(attn_mask.logical_not(), float(torch.finfo(s.dtype).min))
    w = s.softmax(dim=-1)
    out = torch.einsum("...qk,...kd->...qd", w, v)
    return out, w
"""],
    "multi_head_attention": ["""
        if d_model % num_heads:
            raise ValueError("num_heads must divide d_model")
        self.num_heads = num_heads
        self.head_dim = d_model // num_heads
        for name in ("w_q", "w_k", "w_v", "w_o"):
            setattr(self, name, nn.Linear(d_model, d_model))
        self.attn_dropout = nn.Dropout(dropout)
""", """
        def heads(t):
            b, n, _ = t.shape
            return t.view(b, n, self.num_heads, self.head_dim).transpose(1, 2)

        q, k, v = heads(self.w_q(query)), heads(self.w_k(key)), heads(self.w_v(value))
        s = torch.einsum("bhqd,bhkd->bhqk", q, k) / self.head_dim ** 0.5
        if key_padding_mask is not None:
            s = s.masked_fill(key_padding_mask[:, None, None, :], -1e30)
        w = s.softmax(-1)
        o = torch.einsum("bhqk,bhkd->bhqd", self.attn_dropout(w), v)
        b, h, n, d = o.shape
        return self.w_o(o.transpose(1, 2).reshape(b, n, h * d)), w
"""],
    "feed_forward": ["""
        self.linear1, self.linear2 = nn.Linear(d_model, d_ff), nn.Linear(d_ff, d_model)
        self.p = dropout
""", """
        return self.linear2(F.dropout(F.relu(self.linear1(x)), self.p, self.training))
"""],
    "encoder_layer": ["""
        self.norm_first = norm_first
        self.self_attn = MultiHeadAttention(d_model, num_heads, dropout)
        self.ffn = PositionwiseFeedForward(d_model, d_ff, dropout)
        self.norm1, self.dropout1 = nn.LayerNorm(d_model), nn.Dropout(dropout)
        self.norm2, self.dropout2 = nn.LayerNorm(d_model), nn.Dropout(dropout)
""", """
        blocks = ((self.norm1, self.dropout1, lambda h: self.self_attn(h, h, h, key_padding_mask=key_padding_mask)[0]),
                  (self.norm2, self.dropout2, self.ffn))
        for norm, drop, f in blocks:
            x = x + drop(f(norm(x))) if self.norm_first else norm(x + drop(f(x)))
        return x
"""],
    "encoder": ["""
        self.d_model, self.pad_id = d_model, pad_id
        self.embedding = nn.Embedding(vocab_size, d_model, padding_idx=pad_id)
        nn.init.normal_(self.embedding.weight, 0.0, 1.0 / math.sqrt(d_model))
        with torch.no_grad():
            self.embedding.weight[pad_id] = 0
        self.register_buffer("pe", sinusoidal_positional_encoding(max_len, d_model), persistent=False)
        self.emb_dropout = nn.Dropout(dropout)
        self.layers = nn.ModuleList(EncoderLayer(d_model, num_heads, d_ff, dropout, norm_first)
                                    for _ in range(num_layers))
        self.final_norm = nn.LayerNorm(d_model) if norm_first else nn.Identity()
""", """
        if key_padding_mask is None:
            key_padding_mask = tokens == self.pad_id
        x = self.embedding(tokens) * self.d_model ** 0.5
        x = self.emb_dropout(x + self.pe[: tokens.shape[1]])
        for layer in self.layers:
            x = layer(x, key_padding_mask=key_padding_mask)
        return self.final_norm(x)
"""],
    "parameter_count": ["""
    def linear(n_in, n_out):
        return n_in * n_out + n_out

    layer = 4 * linear(d_model, d_model) + linear(d_model, d_ff) + linear(d_ff, d_model) + 2 * 2 * d_model
    return vocab_size * d_model + num_layers * layer + (2 * d_model if norm_first else 0)
"""],
    "reverse_task": ["""
        self.encoder = Encoder(vocab_size, d_model, num_heads, d_ff, num_layers, max_len=max_len, dropout=0.0)
        self.head = nn.Linear(d_model, vocab_size)
""", """
        return self.head(self.encoder(tokens))
""", """
    def step(x):
        logits = model(x)
        loss = F.cross_entropy(logits.flatten(0, 1), x.flip(-1).flatten())
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        return loss.item()

    model.train()
    return [step(x) for x in batches]
""", """
    was_training = model.training
    model.eval()
    with torch.no_grad():
        right = model(tokens).argmax(-1).eq(tokens.flip(-1)).double().mean().item()
    model.train(was_training)
    return right
"""],
}

_C = {
    "positional_encoding": ["""
    pe = torch.zeros((max_len, d_model), dtype=torch.float64)
    position = torch.arange(0, max_len, dtype=torch.float64).reshape(-1, 1)
    div = torch.pow(torch.tensor(10000.0, dtype=torch.float64),
                    torch.arange(0, d_model, 2, dtype=torch.float64) / d_model)
    pe[:, 0::2] = torch.sin(position / div)
    pe[:, 1::2] = torch.cos(position / div)
    return pe.float()
"""],
    "attention": ["""
    scores = q.matmul(k.transpose(-2, -1))
    scores = scores / math.sqrt(q.size(-1))
    if attn_mask is not None:
        very_negative = torch.finfo(scores.dtype).min
        scores = scores.masked_fill(~attn_mask.bool(), very_negative)
    scores = scores - scores.max(dim=-1, keepdim=True).values
    e = scores.exp()
    weights = e / e.sum(dim=-1, keepdim=True)
    output = weights.matmul(v)
    return output, weights
"""],
    "multi_head_attention": ["""
        self.d_model = d_model
        self.n_heads = num_heads
        self.d_head = d_model // num_heads
        self.w_q = nn.Linear(d_model, d_model, bias=True)
        self.w_k = nn.Linear(d_model, d_model, bias=True)
        self.w_v = nn.Linear(d_model, d_model, bias=True)
        self.w_o = nn.Linear(d_model, d_model, bias=True)
        self.dropout_layer = nn.Dropout(dropout)
""", """
        batch, len_q, _ = query.shape
        len_k = key.shape[1]
        q = self.w_q(query).view(batch, len_q, self.n_heads, self.d_head).transpose(1, 2)
        k = self.w_k(key).view(batch, len_k, self.n_heads, self.d_head).transpose(1, 2)
        v = self.w_v(value).view(batch, len_k, self.n_heads, self.d_head).transpose(1, 2)
        scores = q @ k.transpose(2, 3) * self.d_head ** -0.5
        if key_padding_mask is not None:
            pad = key_padding_mask.view(batch, 1, 1, len_k)
            scores = scores.masked_fill(pad, torch.finfo(scores.dtype).min)
        weights = torch.softmax(scores, dim=3)
        mixed = self.dropout_layer(weights) @ v
        merged = mixed.transpose(1, 2).contiguous().view(batch, len_q, self.d_model)
        return self.w_o(merged), weights
"""],
    "feed_forward": ["""
        self.linear1 = nn.Linear(d_model, d_ff)
        self.activation = nn.ReLU()
        self.dropout = nn.Dropout(dropout)
        self.linear2 = nn.Linear(d_ff, d_model)
""", """
        x = self.linear1(x)
        x = self.activation(x)
        x = self.dropout(x)
        x = self.linear2(x)
        return x
"""],
    "encoder_layer": ["""
        self.self_attn = MultiHeadAttention(d_model=d_model, num_heads=num_heads, dropout=dropout)
        self.ffn = PositionwiseFeedForward(d_model=d_model, d_ff=d_ff, dropout=dropout)
        self.norm1 = nn.LayerNorm(normalized_shape=d_model)
        self.norm2 = nn.LayerNorm(normalized_shape=d_model)
        self.dropout1 = nn.Dropout(p=dropout)
        self.dropout2 = nn.Dropout(p=dropout)
        self.use_pre_norm = norm_first
""", """
        residual = x
        if self.use_pre_norm:
            x = self.norm1(x)
        out, _ = self.self_attn(x, x, x, key_padding_mask=key_padding_mask)
        x = residual + self.dropout1(out)
        if not self.use_pre_norm:
            x = self.norm1(x)
        residual = x
        if self.use_pre_norm:
            x = self.norm2(x)
        x = residual + self.dropout2(self.ffn(x))
        if not self.use_pre_norm:
            x = self.norm2(x)
        return x
"""],
    "encoder": ["""
        self.model_dim = d_model
        self.padding_token = pad_id
        self.embedding = nn.Embedding(num_embeddings=vocab_size, embedding_dim=d_model, padding_idx=pad_id)
        table = sinusoidal_positional_encoding(max_len, d_model)
        self.register_buffer("pe", table, persistent=False)
        self.input_dropout = nn.Dropout(p=dropout)
        self.layers = nn.ModuleList()
        for i in range(num_layers):
            self.layers.append(EncoderLayer(d_model, num_heads, d_ff, dropout, norm_first))
        self.final_norm = nn.LayerNorm(d_model) if norm_first else nn.Identity()
""", """
        seq_len = tokens.shape[-1]
        if key_padding_mask is None:
            key_padding_mask = (tokens == self.padding_token)
        emb = self.embedding(tokens) * math.sqrt(self.model_dim)
        hidden = self.input_dropout(emb + self.pe[:seq_len, :])
        for enc_layer in self.layers:
            hidden = enc_layer(hidden, key_padding_mask)
        hidden = self.final_norm(hidden)
        return hidden
"""],
    "parameter_count": ["""
    attn = 4 * (d_model ** 2 + d_model)
    ff = 2 * d_model * d_ff + d_ff + d_model
    ln = 4 * d_model
    emb = vocab_size * d_model
    return emb + num_layers * (attn + ff + ln) + (2 * d_model) * int(norm_first)
"""],
    "reverse_task": ["""
        self.encoder = Encoder(vocab_size=vocab_size, d_model=d_model, num_heads=num_heads, d_ff=d_ff,
                               num_layers=num_layers, max_len=max_len)
        self.head = nn.Linear(d_model, vocab_size)
""", """
        logits = self.head(self.encoder(tokens))
        return logits
""", """
    losses = []
    for x in batches:
        y = x.flip(1)
        logits = model(x)
        b, t, v = logits.shape
        total = 0.0
        for pos in range(t):
            total = total + F.cross_entropy(logits[:, pos, :], y[:, pos])
        loss = total / t
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses
""", """
    model.eval()
    correct, count = 0, 0
    with torch.no_grad():
        predicted = model(tokens).argmax(dim=2)
        for row, guess in zip(tokens, predicted):
            correct += int((guess == row.flip(0)).sum())
            count += row.numel()
    return correct / count
"""],
}

BODIES = {"honest_a": _A, "honest_b": _B, "honest_c": _C}
_BLOCK = re.compile(r"[ \t]*### BEGIN SOLUTION\n.*?### END SOLUTION\n?", re.S)


def fill(source_cell: str, bodies: list[str]) -> str:
    """The source cell with its solution blocks replaced, in order, by ``bodies``."""
    parts = iter(bodies)
    return _BLOCK.sub(lambda m: next(parts).strip("\n") + "\n", source_cell)


def notebook(source, student: str):
    """The source notebook with ``student``'s solutions (the hidden tests stay: only solutions matter)."""
    nb = copy.deepcopy(source)
    for cell in nb["cells"]:
        gid = cell.get("metadata", {}).get("nbgrader", {}).get("grade_id")
        if cell.get("metadata", {}).get("nbgrader", {}).get("solution") and gid in BODIES[student]:
            cell["source"] = fill("".join(cell["source"]), BODIES[student][gid])
    return nb
