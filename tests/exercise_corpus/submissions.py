"""The corpus of submissions the round-trip test grades, built from the exercise's source notebook.

``solved(release, source)`` is the release with every solution cell filled from the source (the markers
removed) and every written answer filled in: a student who got everything right. Each entry of
``CORPUS`` is a list of edits to that notebook and the set of parts that must lose their points.
Edits are plain text substitutions in one cell (the substitution must apply: a corpus entry that no
longer matches the source fails loudly instead of testing nothing).
"""

from __future__ import annotations

import copy

from nbformat.v4 import new_code_cell

PARTS = ("positional_encoding", "attention", "multi_head_attention", "feed_forward", "encoder_layer", "encoder",
         "parameter_count", "reverse_task")

# (name, edits, parts that lose their points)
# edit kinds: ("sub", grade_id, old, new) | ("set", grade_id, text) | ("prepend", grade_id, text)
#             | ("delete", grade_id) | ("add_code_after", grade_id, text)
MISTAKES = [
    ("pe_sin_cos_swapped", [("sub", "positional_encoding",
                             "pe[:, 0::2] = torch.sin(angle)\n    pe[:, 1::2] = torch.cos(angle)",
                             "pe[:, 0::2] = torch.cos(angle)\n    pe[:, 1::2] = torch.sin(angle)")],
     {"positional_encoding"}),
    ("pe_halves", [("sub", "positional_encoding",
                    "pe[:, 0::2] = torch.sin(angle)\n    pe[:, 1::2] = torch.cos(angle)",
                    "pe[:, : d_model // 2] = torch.sin(angle)\n    pe[:, d_model // 2:] = torch.cos(angle)")],
     {"positional_encoding"}),
    ("pe_float64", [("sub", "positional_encoding", "return pe.float()", "return pe")], {"positional_encoding"}),
    ("attn_missing_scaling", [("sub", "attention", " / math.sqrt(d_k)", "")], {"attention"}),
    ("attn_softmax_wrong_axis", [("sub", "attention", "torch.softmax(scores, dim=-1)",
                                  "torch.softmax(scores, dim=-2)")],
     {"attention"}),
    ("attn_inverted_mask", [("sub", "attention", "masked_fill(~attn_mask", "masked_fill(attn_mask")], {"attention"}),
    ("attn_causal", [("sub", "attention", "    weights = torch.softmax(",
                      "    scores = scores.masked_fill(torch.ones(scores.shape[-2:], dtype=torch.bool).triu(1), -1e9)\n"
                      "    weights = torch.softmax(")], {"attention"}),
    ("mha_wrong_head_split", [("sub", "multi_head_attention",
                               "x.view(b, t, self.num_heads, self.d_k).transpose(1, 2)",
                               "x.view(b, t, self.d_k, self.num_heads).permute(0, 3, 1, 2)")],
     {"multi_head_attention"}),
    ("mha_no_output_projection", [("sub", "multi_head_attention", "return self.w_o(out), weights",
                                   "return out, weights")],
     {"multi_head_attention"}),
    ("mha_inverted_padding_mask", [("sub", "multi_head_attention", "mask = ~key_padding_mask[",
                                    "mask = key_padding_mask[")],
     {"multi_head_attention"}),
    ("mha_scaled_by_d_model", [("sub", "multi_head_attention", "math.sqrt(d_k)", "math.sqrt(self.d_model)")],
     {"multi_head_attention"}),
    ("mha_causal_mask", [("sub", "multi_head_attention", "        weights = torch.softmax(",
                          "        scores = scores.masked_fill(torch.ones(t_q, t_k, dtype=torch.bool).triu(1), -1e9)\n"
                          "        weights = torch.softmax(")], {"multi_head_attention"}),
    ("mha_dropout_always_on", [("sub", "multi_head_attention", "out = self.dropout(weights) @ v",
                                "out = F.dropout(weights, p=self.dropout.p, training=True) @ v")],
     {"multi_head_attention"}),
    ("mha_weights_after_dropout", [("sub", "multi_head_attention", "out = self.dropout(weights) @ v",
                                    "weights = self.dropout(weights)\n        out = weights @ v")],
     {"multi_head_attention"}),
    ("mha_no_dropout", [("sub", "multi_head_attention", "out = self.dropout(weights) @ v", "out = weights @ v")],
     {"multi_head_attention"}),
    ("ffn_no_relu", [("sub", "feed_forward", "torch.relu(self.linear1(x))", "self.linear1(x)")], {"feed_forward"}),
    ("ffn_gelu", [("sub", "feed_forward", "torch.relu(self.linear1(x))", "F.gelu(self.linear1(x))")], {"feed_forward"}),
    ("ffn_dropout_after_linear2", [("sub", "feed_forward",
                                    "return self.linear2(self.dropout(torch.relu(self.linear1(x))))",
                                    "return self.dropout(self.linear2(torch.relu(self.linear1(x))))")],
     {"feed_forward"}),
    ("layer_no_residual", [("sub", "encoder_layer", "x = self.norm1(x + self.dropout1(attn(x)))",
                            "x = self.norm1(self.dropout1(attn(x)))")], {"encoder_layer"}),
    ("layer_norm_order_swapped", [("sub", "encoder_layer", "if self.norm_first:", "if not self.norm_first:")],
     {"encoder_layer"}),
    ("layer_pre_ln_wrong", [("sub", "encoder_layer", "x = x + self.dropout1(attn(self.norm1(x)))",
                             "x = self.norm1(x + self.dropout1(attn(x)))")], {"encoder_layer"}),
    ("layer_pre_ln_residual_from_norm", [("sub", "encoder_layer", "x = x + self.dropout1(attn(self.norm1(x)))\n"
                                          "            x = x + self.dropout2(self.ffn(self.norm2(x)))",
                                          "x = self.norm1(x)\n            x = x + self.dropout1(attn(x))\n"
                                          "            x = self.norm2(x)\n"
                                          "            x = x + self.dropout2(self.ffn(x))")],
     {"encoder_layer"}),
    ("layer_no_dropout1", [("sub", "encoder_layer", "x = self.norm1(x + self.dropout1(attn(x)))",
                            "x = self.norm1(x + attn(x))")], {"encoder_layer"}),
    ("layer_mask_not_passed", [("sub", "encoder_layer", "key_padding_mask=key_padding_mask)[0]",
                                "key_padding_mask=None)[0]")],
     {"encoder_layer"}),
    ("encoder_no_embedding_scale", [("sub", "encoder", " * math.sqrt(self.d_model)", "")], {"encoder"}),
    ("encoder_no_positions", [("sub", "encoder", " + self.pe[:t]", "")], {"encoder"}),
    ("encoder_no_padding_mask", [("sub", "encoder", "key_padding_mask = tokens == self.pad_id", "pass")],
     {"encoder"}),
    ("encoder_pad_id_hard_coded", [("sub", "encoder", "key_padding_mask = tokens == self.pad_id",
                                    "key_padding_mask = tokens == 0")], {"encoder"}),
    ("encoder_dropout_before_positions", [("sub", "encoder",
                                           "x = self.embedding(tokens) * math.sqrt(self.d_model)",
                                           "x = self.dropout(self.embedding(tokens)) * math.sqrt(self.d_model)"),
                                          ("sub", "encoder", "        x = self.dropout(x)\n", "")], {"encoder"}),
    ("encoder_persistent_pe", [("sub", "encoder",
                                "sinusoidal_positional_encoding(max_len, d_model), persistent=False)",
                                "sinusoidal_positional_encoding(max_len, d_model))")], {"encoder"}),
    ("encoder_no_final_norm", [("sub", "encoder", "nn.LayerNorm(d_model) if norm_first else nn.Identity()",
                                "nn.Identity()")], {"encoder"}),
    ("count_no_layer_norms", [("sub", "parameter_count", "norms = 2 * (2 * d_model)", "norms = 0")],
     {"parameter_count"}),
    ("count_final_norm_always", [("sub", "parameter_count", "final = 2 * d_model if norm_first else 0",
                                  "final = 2 * d_model")], {"parameter_count"}),
    ("reverser_no_head", [("sub", "reverse_task", "return self.head(self.encoder(tokens))",
                           "return self.encoder(tokens)")], {"reverse_task"}),
    ("reverser_softmax", [("sub", "reverse_task", "return self.head(self.encoder(tokens))",
                           "return torch.softmax(self.head(self.encoder(tokens)), dim=-1)")], {"reverse_task"}),
    ("reverser_frozen_encoder", [("sub", "reverse_task", "return self.head(self.encoder(tokens))",
                                  "return self.head(self.encoder(tokens).detach())")], {"reverse_task"}),
    # the student's cases of issue 29: real bugs that must fail, visibly and hidden
    ("layer_inplace_residual", [("sub", "encoder_layer", "x = x + self.dropout1(attn(self.norm1(x)))",
                                 "x += self.dropout1(attn(self.norm1(x)))")], {"encoder_layer"}),
    ("attn_softmax_overflow", [("sub", "attention",
                                "weights = torch.softmax(scores, dim=-1)"
                                "                                # over the keys",
                                "e = torch.exp(scores)\n    weights = e / e.sum(dim=-1, keepdim=True)")],
     {"attention"}),
    ("attn_minus_inf_fill", [("sub", "attention", "torch.finfo(scores.dtype).min", "float('-inf')")], {"attention"}),
    ("count_no_attention_biases", [("sub", "parameter_count", "attention = 4 * (d_model * d_model + d_model)",
                                    "attention = 4 * d_model * d_model")], {"parameter_count"}),
    ("mha_dropout_unscaled_mask", [("sub", "multi_head_attention", "out = self.dropout(weights) @ v",
                                    "keep = (torch.rand_like(weights) >= self.dropout.p).to(weights.dtype)\n"
                                    "        out = (weights * keep if self.training else weights) @ v")],
     {"multi_head_attention"}),
    ("mha_dropout_keeps_p", [("sub", "multi_head_attention", "out = self.dropout(weights) @ v",
                              "p = self.dropout.p\n"
                              "        keep = (torch.rand_like(weights) < p).to(weights.dtype) / (1 - p)\n"
                              "        out = (weights * keep if self.training else weights) @ v")],
     {"multi_head_attention"}),
    ("ffn_dropout_wrong_rate", [("sub", "feed_forward", "self.dropout = nn.Dropout(dropout)",
                                 "self.dropout = nn.Dropout(dropout / 4)")],
     {"feed_forward"}),
    ("layer_dropout_on_sum", [("sub", "encoder_layer", "x = x + self.dropout1(attn(self.norm1(x)))\n"
                               "            x = x + self.dropout2(self.ffn(self.norm2(x)))",
                               "x = self.dropout1(x + attn(self.norm1(x)))\n"
                               "            x = self.dropout2(x + self.ffn(self.norm2(x)))")], {"encoder_layer"}),
    ("train_no_step", [("sub", "reverse_task", "        optimizer.step()\n", "")], {"reverse_task"}),
    ("train_target_not_reversed", [("sub", "reverse_task", "x.flip(1).reshape(-1))", "x.reshape(-1))")],
     {"reverse_task"}),
    ("accuracy_not_reversed", [("sub", "reverse_task", "return (predicted == tokens.flip(1)).float().mean().item()",
                                "return (predicted == tokens).float().mean().item()")], {"reverse_task"}),
    # the one-bug cases of issue 40, each named by its own mistake id
    ("layer_norm_eps", [("sub", "encoder_layer",
                         "self.norm1 = nn.LayerNorm(d_model)\n        self.norm2 = nn.LayerNorm(d_model)",
                         "self.norm1 = nn.LayerNorm(d_model, eps=0.1)\n"
                         "        self.norm2 = nn.LayerNorm(d_model, eps=0.1)")],
     {"encoder_layer"}),
    ("mha_merge_without_transpose", [("sub", "multi_head_attention",
                                      "out = out.transpose(1, 2).reshape(b, t_q, self.d_model)",
                                      "out = out.reshape(b, t_q, self.d_model)")], {"multi_head_attention"}),
    ("encoder_pe_off_by_one_row", [("sub", "encoder", " + self.pe[:t]", " + self.pe[1:t + 1]")], {"encoder"}),
    ("pe_positions_from_one", [("sub", "positional_encoding", "torch.arange(max_len, dtype=torch.float64)",
                                "torch.arange(1, max_len + 1, dtype=torch.float64)")], {"positional_encoding"}),
    ("encoder_final_norm_post_ln", [("sub", "encoder", "nn.LayerNorm(d_model) if norm_first else nn.Identity()",
                                     "nn.LayerNorm(d_model)")], {"encoder"}),
    ("train_no_zero_grad", [("sub", "reverse_task", "        optimizer.zero_grad()\n", "")], {"reverse_task"}),
    ("mha_softmax_overflow", [("sub", "multi_head_attention", "        weights = torch.softmax(scores, dim=-1)\n",
                               "        e = torch.exp(scores)\n        weights = e / e.sum(dim=-1, keepdim=True)\n")],
     {"multi_head_attention"}),
    # the one-bug cases of issue 52, each named by its own mistake id
    ("train_drops_last_batch", [("sub", "reverse_task", "    for x in batches:\n", "    for x in batches[:-1]:\n")],
     {"reverse_task"}),
    ("train_two_epochs", [("sub", "reverse_task", "    for x in batches:\n", "    for x in batches + batches:\n")],
     {"reverse_task"}),
    ("encoder_scale_on_sum", [("sub", "encoder", "x = self.embedding(tokens) * math.sqrt(self.d_model) + self.pe[:t]",
                               "x = (self.embedding(tokens) + self.pe[:t]) * math.sqrt(self.d_model)")], {"encoder"}),
    ("encoder_one_layer_shared", [("sub", "encoder",
                                   "norm_first) for _ in range(num_layers)]", "norm_first)] * num_layers")],
     {"encoder"}),
    ("mha_projections_without_bias", [("sub", "multi_head_attention", f"self.{w} = nn.Linear(d_model, d_model)",
                                       f"self.{w} = nn.Linear(d_model, d_model, bias=False)")
                                      for w in ("w_q", "w_k", "w_v", "w_o")], {"multi_head_attention"}),
    ("two_bugs", [("sub", "attention", " / math.sqrt(d_k)", ""),
                  ("sub", "encoder", " * math.sqrt(self.d_model)", "")], {"attention", "encoder"}),
]

# honest choices that must cost nothing (issue 29): type hints, a namedtuple, and dropout drawn
# three ways (nn.Dropout is the source's own)
HONEST = [
    ("type_hints", [("prepend", "attention", "from typing import Optional, Tuple\n"),
                    ("sub", "attention", "def scaled_dot_product_attention(q, k, v, attn_mask=None):",
                     "def scaled_dot_product_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor,\n"
                     "                                 attn_mask: Optional[torch.Tensor] = None"
                     ") -> Tuple[torch.Tensor, torch.Tensor]:"),
                    ("prepend", "multi_head_attention", "from typing import Tuple\n"),
                    ("sub", "multi_head_attention", "def forward(self, query, key, value, key_padding_mask=None):",
                     "def forward(self, query, key, value, key_padding_mask=None)"
                     " -> Tuple[torch.Tensor, torch.Tensor]:")],
     set()),
    ("namedtuple_result", [("prepend", "attention", "import collections\nAttended = collections.namedtuple('Attended', "
                                                    "'out weights')\n"),
                           ("sub", "attention", "return weights @ v, weights",
                            "return Attended(weights @ v, weights)")],
     set()),
    ("dropout_functional", [("sub", "feed_forward", "self.linear2(self.dropout(torch.relu(self.linear1(x))))",
                             "self.linear2(F.dropout(torch.relu(self.linear1(x)), self.dropout.p, self.training))"),
                            ("sub", "encoder", "        x = self.dropout(x)\n",
                             "        x = F.dropout(x, p=self.dropout.p, training=self.training)\n")], set()),
    ("dropout_by_hand", [("sub", "multi_head_attention", "out = self.dropout(weights) @ v",
                          "p = self.dropout.p\n"
                          "        if self.training and p > 0:\n"
                          "            keep = (torch.rand(weights.shape) >= p).to(weights.dtype) / (1 - p)\n"
                          "            out = (weights * keep) @ v\n"
                          "        else:\n"
                          "            out = weights @ v"),
                         ("sub", "encoder_layer", "x = self.norm1(x + self.dropout1(attn(x)))",
                          "a = attn(x)\n"
                          "            if self.training:\n"
                          "                a = a * torch.bernoulli(torch.full_like(a, 1 - self.dropout1.p))"
                          " / (1 - self.dropout1.p)\n"
                          "            x = self.norm1(x + a)")], set()),
]

# an FFN that keeps linear1 and linear2 and also holds them in an nn.Sequential: the same tensors under two
# names in its state_dict (issue 40)
HONEST.append(("ffn_alias_sequential", [
    ("sub", "feed_forward", "        self.dropout = nn.Dropout(dropout)\n",
     "        self.dropout = nn.Dropout(dropout)\n"
     "        self.net = nn.Sequential(self.linear1, nn.ReLU(), self.dropout, self.linear2)\n"),
    ("sub", "feed_forward", "return self.linear2(self.dropout(torch.relu(self.linear1(x))))", "return self.net(x)")],
    set()))

# Part 8 is the student's design (issue 52): the optimiser's settings, a schedule, clipping, another torch.optim
# optimiser and the batches' order are theirs, one step per batch
_LOOP_START = "    model.train()\n    losses = []\n    for x in batches:\n"
HONEST += [
    ("train_warmup_schedule_clipped", [
        ("sub", "reverse_task", _LOOP_START,
         "    model.train()\n    losses = []\n"
         "    for group in optimizer.param_groups:\n        group[\"lr\"] = 0.02\n"
         "    warmup = torch.optim.lr_scheduler.LambdaLR(\n"
         "        optimizer, lambda step: min(1.0, (step + 1) / 5) * (1 - step / len(batches)) + 0.05)\n"
         "    for x in batches:\n"),
        ("sub", "reverse_task", "        loss.backward()\n        optimizer.step()\n",
         "        loss.backward()\n        torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)\n"
         "        optimizer.step()\n        warmup.step()\n")], set()),
    ("train_own_adamw_shuffled", [
        ("sub", "reverse_task", _LOOP_START,
         "    model.train()\n    losses = []\n"
         "    optimizer = torch.optim.AdamW(model.parameters(), lr=0.01, weight_decay=0.01)\n"
         "    order = torch.randperm(len(batches), generator=torch.Generator().manual_seed(0)).tolist()\n"
         "    for x in [batches[i] for i in order]:\n")], set()),
    ("train_onecycle_state_dict", [
        ("sub", "reverse_task", _LOOP_START,
         "    model.train()\n    losses = []\n"
         "    schedule = torch.optim.lr_scheduler.OneCycleLR(optimizer, max_lr=0.02, total_steps=len(batches))\n"
         "    start = optimizer.state_dict()\n"
         "    for x in batches:\n"),
        ("sub", "reverse_task", "        optimizer.step()\n",
         "        optimizer.step()\n        schedule.step()\n"),
        ("sub", "reverse_task", "    return losses\n",
         "    assert len(start[\"param_groups\"]) == 1\n    return losses\n")], set()),
]

FAULTS = [
    ("infinite_loop", [("prepend", "attention", "while True:\n    pass\n")], {"attention"}),
    ("interrupt_ignoring_loop", [("prepend", "feed_forward",
                                  "while True:\n    try:\n        while True:\n            pass\n"
                                  "    except BaseException:\n        pass\n")], {"feed_forward"}),
    ("loop_inside_forward", [("sub", "encoder_layer", "        def attn(y):",
                              "        while True:\n            pass\n        def attn(y):")],
     {"encoder_layer"}),
    ("exception", [("sub", "encoder", "        return self.final_norm(x)", "        raise RuntimeError('oops')")],
     {"encoder"}),
    ("sys_exit", [("prepend", "positional_encoding", "raise SystemExit(0)\n")], {"positional_encoding"}),
    ("exit_builtin_in_call", [("sub", "feed_forward", "        return self.linear2(",
                               "        exit(3)\n        return self.linear2(")],
     {"feed_forward"}),
    ("huge_allocation", [("sub", "multi_head_attention", "        b, t_q, t_k =",
                          "        waste = torch.ones(200_000, 200_000)\n        b, t_q, t_k =")],
     {"multi_head_attention"}),
    ("memory_hog_list", [("prepend", "attention", "hog = [bytearray(1 << 30) for _ in range(64)]\n")], {"attention"}),
    ("syntax_error", [("sub", "encoder_layer", "def forward(self, x, key_padding_mask=None):",
                       "def forward(self, x, key_padding_mask=None)")],
     {"encoder_layer"}),
    ("recursion", [("sub", "encoder", "        t = tokens.shape[1]",
                    "        return self.forward(tokens, key_padding_mask)")],
     {"encoder"}),
    ("cell_deleted", [("delete", "feed_forward")], {"feed_forward"}),
    ("import_os", [("prepend", "encoder", "import os\n")], {"encoder"}),
    ("harmless_warning", [("prepend", "feed_forward",
                           "import warnings\nwarnings.warn('a harmless warning on stderr')\n"),
                          ("sub", "feed_forward", "        return self.linear2(",
                           "        warnings.warn('another one, at every call')\n        return self.linear2(")],
     set()),
]

CHEATS = [
    # wrong attention and wrong FFN, plus every trick to turn red into green
    ("patch_everything", [
        ("sub", "attention", " / math.sqrt(d_k)", ""),
        ("sub", "feed_forward", "torch.relu(self.linear1(x))", "self.linear1(x)"),
        ("add_code_after", "setup",
         "import numpy.testing, course_lib.checks\n"
         "torch.allclose = lambda *a, **k: True\n"
         "torch.testing.assert_close = lambda *a, **k: None\n"
         "numpy.testing.assert_allclose = lambda *a, **k: None\n"
         "course_lib.checks.judge_case = lambda *a, **k: None\n"
         "course_lib.checks.check = lambda *a, **k: 0\n"
         "ip = get_ipython()\n"
         "ip.showtraceback = lambda *a, **k: None\n"
         "ip.run_cell_async = None\n"
         "print('all tests passed')\n"),
    ], {"attention", "feed_forward"}),
    ("patch_inside_solution_cell", [
        ("sub", "attention", " / math.sqrt(d_k)", ""),
        ("prepend", "attention", "torch.allclose = lambda *a, **k: True\nprint('all tests passed')\n"),
    ], {"attention"}),
    ("test_cells_edited", [
        ("sub", "attention", " / math.sqrt(d_k)", ""),
        ("set", "test_attention", "print('all tests passed')"),
        ("set", "test_encoder", "pass"),
    ], {"attention"}),
    ("test_cell_deleted", [
        ("sub", "multi_head_attention", "return self.w_o(out), weights", "return out, weights"),
        ("delete", "test_multi_head_attention"),
        ("delete", "test_encoder"),
    ], {"multi_head_attention"}),
    ("delegates_to_torch", [
        ("set", "attention", "def scaled_dot_product_attention(q, k, v, attn_mask=None):\n"
                             "    out = F.scaled_dot_product_attention(q, k, v, attn_mask=attn_mask)\n"
                             "    w = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), -1)\n"
                             "    return out, w\n"),
    ], {"attention"}),
    ("delegates_hidden_getattr", [
        ("set", "attention", "def scaled_dot_product_attention(q, k, v, attn_mask=None):\n"
                             "    fn = getattr(F, 'scaled_dot_' + 'product_attention')\n"
                             "    s = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])\n"
                             "    if attn_mask is not None:\n"
                             "        s = s.masked_fill(~attn_mask, -1e9)\n"
                             "    return fn(q, k, v, attn_mask=attn_mask), torch.softmax(s, -1)\n"),
    ], {"attention"}),
    ("delegates_nn_multihead", [
        ("set", "multi_head_attention",
         "class MultiHeadAttention(nn.Module):\n"
         "    def __init__(self, d_model, num_heads, dropout=0.0):\n"
         "        super().__init__()\n"
         "        self.inner = nn.MultiheadAttention(d_model, num_heads, dropout, batch_first=True)\n"
         "    def forward(self, query, key, value, key_padding_mask=None):\n"
         "        return self.inner(query, key, value, key_padding_mask=key_padding_mask,"
         " average_attn_weights=False)\n"),
    ], {"multi_head_attention"}),
    ("delegates_course_lib", [
        ("set", "encoder_layer", "from course_lib import EncoderLayer\n"),
    ], {"encoder_layer"}),
    ("reverser_counts_calls", [  # issue 30: uniform while untrained, the one-hot answer afterwards
        ("sub", "reverse_task", "        return self.head(self.encoder(tokens))"
                                "                             # (B, T, vocab_size)",
         "        self.calls = getattr(self, 'calls', 0) + 1\n"
         "        honest = self.head(self.encoder(tokens))\n"
         "        if self.calls == 1:\n"
         "            return honest\n"
         "        return honest * 0 + F.one_hot(tokens.flip(1), honest.shape[-1]).float() * 20"),
    ], {"reverse_task"}),
    ("steals_reference_by_subclasses", [
        ("set", "encoder",
         "Encoder = [c for c in nn.Module.__subclasses__() if c.__name__ == 'Encoder'][0]\n"),
    ], {"encoder"}),
]

CORPUS = MISTAKES + HONEST + FAULTS + CHEATS


def _strip_markers(source: str) -> str:
    return "\n".join(line for line in source.split("\n")
                     if line.strip() not in ("### BEGIN SOLUTION", "### END SOLUTION"))


def _gid(cell):
    return cell.get("metadata", {}).get("nbgrader", {}).get("grade_id")


def solved(release, source):
    """The release with the source's solutions and written answers filled in."""
    nb = copy.deepcopy(release)
    src = {_gid(c): c for c in source["cells"] if _gid(c)}
    for cell in nb["cells"]:
        meta = cell.get("metadata", {}).get("nbgrader", {})
        if meta.get("solution"):
            cell["source"] = _strip_markers("".join(src[meta["grade_id"]]["source"]))
    return nb


def apply(nb, edits):
    nb = copy.deepcopy(nb)
    for edit in edits:
        kind, gid = edit[0], edit[1]
        idx = [i for i, c in enumerate(nb["cells"]) if _gid(c) == gid]
        if len(idx) != 1:
            raise ValueError(f"no single cell {gid!r}")
        cell = nb["cells"][idx[0]]
        text = "".join(cell["source"])
        if kind == "sub":
            if edit[2] not in text:
                raise ValueError(f"edit {edit[2]!r} does not apply to cell {gid!r}")
            cell["source"] = text.replace(edit[2], edit[3])
        elif kind == "set":
            cell["source"] = edit[2]
        elif kind == "prepend":
            cell["source"] = edit[2] + text
        elif kind == "delete":
            del nb["cells"][idx[0]]
        elif kind == "add_code_after":
            nb["cells"].insert(idx[0] + 1, new_code_cell(edit[2]))
        else:
            raise ValueError(kind)
    return nb


def define(nb, part: str, name: str, as_cell: bool = False):
    """Run the solution cell ``part`` of ``nb`` in a fresh namespace (the notebook's imports) and
    return what it defines under ``name``: the candidate a check or the grader calls. ``as_cell``: as
    IPython runs a cell, its text kept in linecache under a file name that is not on disk (the checks
    then read the cell and apply the grader's rules to it)."""
    import linecache
    import math

    import numpy as np
    import torch
    import torch.nn.functional as F
    from torch import nn

    cell = next(c for c in nb["cells"] if _gid(c) == part)
    ns = {"__name__": "__submission__", "math": math, "np": np, "torch": torch, "nn": nn, "F": F}
    source = "".join(cell["source"])
    filename = f"<{part}>"
    if as_cell:
        filename = f"/nonexistent/ipykernel_0/{part}_{abs(hash(source))}.py"
        linecache.cache[filename] = (len(source), None, source.splitlines(keepends=True), filename)
    exec(compile(source, filename, "exec", dont_inherit=True), ns)      # as a kernel: no __future__ of ours
    return ns[name]
