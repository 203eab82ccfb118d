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


def test_offset_profile(capsys):
    def right(attentions, max_offset):
        return torch.stack([torch.stack([torch.diagonal(a[0, :, 1:-1, 1:-1], offset=o, dim1=1, dim2=2).mean(-1)
                                         for o in range(-max_offset, max_offset + 1)], dim=-1) for a in attentions])

    check = lecture02.check_offset_profile
    assert said(capsys, check, right).startswith("✓")
    assert said(capsys, check, lambda attentions, max_offset: ...).startswith("○")
    assert "shape" in said(capsys, check, lambda attentions, max_offset: right(attentions, max_offset)[0])


def test_window_reach(capsys):
    def window_mask(T, window):
        offset = torch.arange(T)[:, None] - torch.arange(T)[None, :]
        return (offset >= 0) & (offset < window)

    def reach(mask, layers):
        total = torch.eye(mask.shape[0], dtype=torch.long)
        for _ in range(layers):
            total = (total @ mask.long()).clamp(max=1)
        return total.bool()

    check = lecture02.check_window_reach
    assert said(capsys, check, window_mask, reach).startswith("✓")
    assert said(capsys, check, lambda T, window: ..., reach).startswith("○")
    assert "bool" in said(capsys, check, lambda T, window: window_mask(T, window).int(), reach)


def test_kv_cache(capsys):
    from course_lib import scaled_dot_product_attention

    def decode_with_cache(xs, w_q, w_k, w_v):
        keys, values, outputs = [], [], []
        for x in xs:
            keys.append(x @ w_k)
            values.append(x @ w_v)
            out, _ = scaled_dot_product_attention((x @ w_q)[None], torch.stack(keys), torch.stack(values))
            outputs.append(out[0])
        return torch.stack(outputs), torch.stack(keys), torch.stack(values)

    check = lecture02.check_kv_cache
    assert said(capsys, check, decode_with_cache).startswith("✓")
    assert said(capsys, check, lambda xs, w_q, w_k, w_v: (..., ..., ...)).startswith("○")
    assert "three tensors" in said(capsys, check, lambda xs, w_q, w_k, w_v: (xs, xs))
    assert said(capsys, check, lambda xs, w_q, w_k, w_v: ...).startswith("○")


def test_quizzes(capsys):
    assert said(capsys, lecture02.check_score_divisor, 16).startswith("✓")
    assert "one product" in said(capsys, lecture02.check_score_divisor, 8)
    assert "what dividing by c" in said(capsys, lecture02.check_score_divisor, 256)
    assert "too small" in said(capsys, lecture02.check_score_divisor, 12)
    assert said(capsys, lecture02.check_score_divisor, ...).startswith("○")
    assert said(capsys, lecture02.check_unconverted_mask, "no key").startswith("✓")
    assert "symptom" in said(capsys, lecture02.check_unconverted_mask, "NaN")
    assert said(capsys, lecture02.check_unconverted_mask, ...).startswith("○")
    assert said(capsys, lecture02.check_projection_share, 512 / 1512).startswith("✓")
    assert said(capsys, lecture02.check_projection_share, ...).startswith("○")
