"""The checks of lecture 02's practice say what is wrong for the usual mistakes, in one line."""


import torch

from course_lib.practice import lecture02


def said(capsys, check, *args) -> str:
    assert check(*args) is None
    out = capsys.readouterr().out.strip()
    assert len(out.splitlines()) == 1, out
    return out


QUERY = torch.tensor([1.0, 1.0, 0.0])
KEYS = {"north-east": torch.tensor([0.9, 1.1, 0.0]), "east": torch.tensor([3.0, 0.5, 0.0]),
        "up": torch.tensor([0.0, 0.2, 2.0])}


def test_prediction(capsys):
    assert said(capsys, lecture02.check_prediction, "east", QUERY, KEYS).startswith("✓")
    assert "length" in said(capsys, lecture02.check_prediction, "north-east", QUERY, KEYS)
    assert "largest score" in said(capsys, lecture02.check_prediction, "up", QUERY, KEYS)
    assert "not one of the keys" in said(capsys, lecture02.check_prediction, "west", QUERY, KEYS)
    assert "not done yet" in said(capsys, lecture02.check_prediction, None, QUERY, KEYS)


def test_additive_scores(capsys):
    def right(q, K, W_a, U_a, v_a):
        return torch.tanh(q @ W_a + K @ U_a) @ v_a

    def softmaxed(q, K, W_a, U_a, v_a):
        return torch.softmax(right(q, K, W_a, U_a, v_a), dim=0)

    def apart(q, K, W_a, U_a, v_a):
        return torch.tanh(q @ W_a) @ v_a + torch.tanh(K @ U_a) @ v_a

    def one_key(q, K, W_a, U_a, v_a):
        return torch.tanh(q @ W_a + K[0] @ U_a) @ v_a

    def raises(q, K, W_a, U_a, v_a):
        return q @ K

    assert said(capsys, lecture02.check_additive_scores, right).startswith("✓")
    assert "sum to 1" in said(capsys, lecture02.check_additive_scores, softmaxed)
    assert "on their own" in said(capsys, lecture02.check_additive_scores, apart)
    assert "shape ()" in said(capsys, lecture02.check_additive_scores, one_key)
    assert "raised RuntimeError" in said(capsys, lecture02.check_additive_scores, raises)


def test_split_merge(capsys):
    def split(x, h):
        B, T, d_model = x.shape
        return x.reshape(B, T, h, d_model // h).transpose(1, 2)

    def merge(x):
        B, h, T, d_k = x.shape
        return x.transpose(1, 2).reshape(B, T, h * d_k)

    def split_straight(x, h):
        B, T, d_model = x.shape
        return x.reshape(B, h, T, d_model // h)

    def merge_straight(x):
        B, h, T, d_k = x.shape
        return x.reshape(B, T, h * d_k)

    check = lecture02.check_split_merge
    assert said(capsys, check, split, merge).startswith("✓")
    assert "across tokens" in said(capsys, check, split_straight, merge)
    assert "does not give the input back" in said(capsys, check, split, merge_straight)
    assert "RuntimeError" in said(capsys, check, split, lambda x: x.transpose(1, 2).view(2, 3, 8))
    assert said(capsys, check, lambda x, h: ..., merge).startswith("○")


def masked_attention(q, k, v, key_padding_mask=None, causal=False, **mistake):
    from course_lib.practice.lecture02 import _masked_reference
    out, weights, _ = _masked_reference(q, k, v, key_padding_mask, causal, **mistake)
    return out, weights


def test_masked_attention(capsys):
    check = lecture02.check_masked_attention

    def wrong(**mistake):
        return lambda q, k, v, key_padding_mask=None, causal=False: masked_attention(q, k, v, key_padding_mask,
                                                                                       causal, **mistake)
    assert said(capsys, check, masked_attention).startswith("✓")
    assert "a score of 0" in said(capsys, check, wrong(fill=0.0))
    assert "rows sum to" in said(capsys, check, wrong(after=True))
    assert "padded queries" in said(capsys, check, wrong(pad_rows=True))
    assert "keys after it" in said(capsys, check, wrong(causal_upper=True))
    assert "too sharp" in said(capsys, check, wrong(scale=False))
    inverted = lambda q, k, v, key_padding_mask=None, causal=False: masked_attention(   # noqa: E731
        q, k, v, None if key_padding_mask is None else ~key_padding_mask, causal)
    assert "NaN" in said(capsys, check, inverted) or "padded keys get all" in said(capsys, check, inverted)
    assert "output is not" in said(capsys, check, lambda q, k, v, key_padding_mask=None, causal=False: (
        q, masked_attention(q, k, v, key_padding_mask, causal)[1]))
    assert said(capsys, check, lambda q, k, v, key_padding_mask=None, causal=False: None).startswith("○")


def test_head_follows_meaning(capsys):
    from course_lib.pretrained import load_minilm

    model, tokenizer = load_minilm()
    check = lecture02.check_head_follows_meaning
    tired = "The animal didn't cross the street because it was too tired"
    wide = tired.replace("tired", "wide")
    batch = tokenizer([wide])
    tokens = batch["tokens"][0]
    with torch.no_grad():
        _, att = model(batch["input_ids"], key_padding_mask=batch["key_padding_mask"], return_attention=True)
    row = att[3][0, 1, tokens.index("it")]
    a, s = row[tokens.index("animal")].item(), row[tokens.index("street")].item()
    right = s > a
    assert said(capsys, check, tired, None, 0.6, 0.1, model, tokenizer).startswith("○")
    assert said(capsys, check, wide, None, ..., ..., model, tokenizer).startswith("○")
    assert said(capsys, check, wide, None, a, s, model, tokenizer).startswith("○")
    assert "end it in 'wide'" in said(capsys, check, "... it was too big", False, a, s, model, tokenizer)
    assert "not the weight" in said(capsys, check, wide, right, a + 0.1, s, model, tokenizer)
    assert "do not say that" in said(capsys, check, wide, not right, a, s, model, tokenizer)
    assert said(capsys, check, wide, right, a, s, model, tokenizer).startswith("✓")


def test_quizzes(capsys):
    assert said(capsys, lecture02.check_score_divisor, 16).startswith("✓")
    assert "one product" in said(capsys, lecture02.check_score_divisor, 8)
    assert "what dividing by c" in said(capsys, lecture02.check_score_divisor, 256)
    assert "too small" in said(capsys, lecture02.check_score_divisor, 12)
    assert said(capsys, lecture02.check_score_divisor, ...).startswith("○")
    assert said(capsys, lecture02.check_unconverted_mask, "NaN").startswith("✓")
    assert "no future" in said(capsys, lecture02.check_unconverted_mask, "only the future")
    assert said(capsys, lecture02.check_unconverted_mask, ...).startswith("○")
    assert said(capsys, lecture02.check_flop_ratio, 3.9).startswith("✓")
    assert "larger one" in said(capsys, lecture02.check_flop_ratio, 0.256)
