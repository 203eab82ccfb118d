"""The references a part process gets for its dependencies attend with course_lib's own explicit
attention: no second implementation of attention in the grader, and the numbers of torch's fused path."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

import course_lib
from course_grader import guard, references
from course_lib.grading.parts import DEPENDENCIES, NAMES

TORCH_SDPA = F.scaled_dot_product_attention


@pytest.fixture(scope="module")
def loaded():
    _, exports = references.for_part("encoder_layer")             # MultiHeadAttention and the FFN
    codes = references.compiled("encoder_layer")
    return guard.load_dependencies("_references_test", [[m, i] for i, (m, _) in enumerate(codes)], exports,
                                   [code for _, code in codes])


def test_references_call_course_lib_attention(loaded):
    mha = loaded["MultiHeadAttention"]
    their_f = mha.forward.__globals__["F"]
    attend = their_f.scaled_dot_product_attention
    assert their_f is not F and attend is not TORCH_SDPA and F.scaled_dot_product_attention is TORCH_SDPA
    torch.manual_seed(0)
    q, k, v = torch.randn(2, 3, 5, 4), torch.randn(2, 3, 6, 4), torch.randn(2, 3, 6, 4)
    mask = torch.rand(2, 1, 5, 6) > 0.3
    mask[..., 0] = True
    want, _ = course_lib.scaled_dot_product_attention(q, k, v, attn_mask=mask)
    assert torch.equal(attend(q, k, v, attn_mask=mask), want)
    assert torch.allclose(attend(q, k, v, attn_mask=mask), F.scaled_dot_product_attention(q, k, v, attn_mask=mask),
                          atol=1e-6)
    with pytest.raises(RuntimeError, match="is_causal"):
        attend(q, k, v, is_causal=True)


def test_fast_path_of_the_references_matches_course_lib(loaded):
    torch.manual_seed(1)
    ours = course_lib.MultiHeadAttention(16, 4).eval()
    theirs = loaded["MultiHeadAttention"](16, 4).eval()
    theirs.load_state_dict(ours.state_dict())
    x = torch.randn(2, 7, 16)
    pad = torch.zeros(2, 7, dtype=torch.bool)
    pad[1, 5:] = True
    with torch.no_grad():
        want, _ = ours(x, x, x, key_padding_mask=pad, need_weights=False)     # torch's fused kernel
        got, _ = theirs(x, x, x, key_padding_mask=pad, need_weights=False)    # course_lib's explicit maths
    assert torch.allclose(got, want, atol=1e-6)


def test_the_graded_reference_is_cut_out_before_compiling():
    """The code a part process gets for its dependencies holds no code object of the graded part."""
    for part, name in (("multi_head_attention", "MultiHeadAttention"), ("encoder_layer", "EncoderLayer"),
                       ("encoder", "Encoder")):
        import marshal

        def names(code):
            yield code.co_name
            for const in code.co_consts:
                if hasattr(const, "co_name"):
                    yield from names(const)
        found = {n for _, blob in references.compiled(part) for n in names(marshal.loads(blob.tobytes()))}
        assert name not in found, part
        assert {NAMES[d] for d in DEPENDENCIES[part]} <= found, (part, sorted(found))
