"""Tests of course_lib.encoder: parity with torch.nn's encoder, the contract's names, invariants, errors."""

import math

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import nn

from course_lib import (
    CourseTypeError,
    CourseValueError,
    Encoder,
    EncoderLayer,
    padding_mask_from_lengths,
    sinusoidal_positional_encoding,
)
from course_lib.interop import copy_layer_to_torch

PROPERTY = settings(max_examples=20, deadline=None, derandomize=True)


def torch_layer_like(layer: EncoderLayer, d_model, num_heads, d_ff, norm_first, activation="relu"):
    ref = nn.TransformerEncoderLayer(d_model, num_heads, d_ff, dropout=0.0, activation=activation,
                                     batch_first=True, norm_first=norm_first)
    ref = ref.to(layer.norm1.weight.dtype)
    copy_layer_to_torch(layer, ref)
    return ref


def randomize_norms(module: nn.Module) -> None:
    """LayerNorms start at weight 1, bias 0: give them random values so that copying them is tested."""
    with torch.no_grad():
        for m in module.modules():
            if isinstance(m, nn.LayerNorm):
                m.weight.uniform_(0.5, 1.5)
                m.bias.normal_(0, 0.1)


LAYER_SHAPES = [  # (B, T, d_model, num_heads, d_ff)
    (1, 1, 4, 1, 8), (2, 5, 8, 2, 16), (3, 9, 12, 3, 20), (2, 16, 32, 8, 64),
]


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("norm_first", [False, True], ids=["post_ln", "pre_ln"])
@pytest.mark.parametrize("padded", [False, True], ids=["no_mask", "padding"])
@pytest.mark.parametrize("b,t,d_model,num_heads,d_ff", LAYER_SHAPES)
def test_layer_matches_torch_encoder_layer(b, t, d_model, num_heads, d_ff, padded, norm_first, dtype):
    layer = EncoderLayer(d_model, num_heads, d_ff, norm_first=norm_first).to(dtype)
    randomize_norms(layer)
    ref = torch_layer_like(layer, d_model, num_heads, d_ff, norm_first)
    x = torch.randn(b, t, d_model, dtype=dtype)
    kpm = padding_mask_from_lengths(torch.randint(1, t + 1, (b,)), max_len=t) if padded else None
    real = ~kpm if padded else torch.ones(b, t, dtype=torch.bool)
    for mode in ("train", "eval"):                      # eval: torch's own fused fast path
        layer.train(mode == "train")
        ref.train(mode == "train")
        with torch.no_grad():
            expected = ref(x, src_key_padding_mask=kpm)
            fused = layer(x, key_padding_mask=kpm)
            explicit, weights = layer(x, key_padding_mask=kpm, return_attention=True)
        # torch's eval fast path may leave padded positions as zeros: compare real tokens.
        torch.testing.assert_close(fused[real], expected[real])
        torch.testing.assert_close(explicit[real], expected[real])
        assert weights.shape == (b, num_heads, t, t)
        assert torch.isfinite(fused).all() and torch.isfinite(explicit).all()


@pytest.mark.parametrize("activation", ["relu", "gelu"])
@pytest.mark.parametrize("norm_first", [False, True], ids=["post_ln", "pre_ln"])
def test_layer_gradients_match_torch(norm_first, activation):
    torch.manual_seed(0)
    layer = EncoderLayer(16, 4, 24, norm_first=norm_first, activation=activation).double()
    randomize_norms(layer)
    ref = torch_layer_like(layer, 16, 4, 24, norm_first, activation)
    x = torch.randn(3, 7, 16, dtype=torch.float64, requires_grad=True)
    kpm = padding_mask_from_lengths([7, 4, 2])
    target = torch.randn(3, 7, 16, dtype=torch.float64)
    loss = ((layer(x, kpm) - target)[~kpm] ** 2).sum()
    ref_loss = ((ref(x, src_key_padding_mask=kpm) - target)[~kpm] ** 2).sum()
    torch.testing.assert_close(loss, ref_loss)
    grads = torch.autograd.grad(loss, [x, layer.self_attn.w_q.weight, layer.self_attn.w_v.bias,
                                       layer.ffn.linear1.weight, layer.norm1.weight])
    ref_grads = torch.autograd.grad(ref_loss, [x, ref.self_attn.in_proj_weight, ref.self_attn.in_proj_bias,
                                               ref.linear1.weight, ref.norm1.weight])
    torch.testing.assert_close(grads[0], ref_grads[0])
    torch.testing.assert_close(grads[1], ref_grads[1][:16])                     # w_q = in_proj rows [0, d)
    torch.testing.assert_close(grads[2], ref_grads[2][32:])                     # w_v = rows [2d, 3d)
    torch.testing.assert_close(grads[3], ref_grads[3])
    torch.testing.assert_close(grads[4], ref_grads[4])


def test_layer_state_dict_keys_are_the_contracts():
    keys = [f"self_attn.w_{n}.{p}" for n in "qkvo" for p in ("weight", "bias")]
    keys += [f"ffn.linear{i}.{p}" for i in (1, 2) for p in ("weight", "bias")]
    keys += [f"norm{i}.{p}" for i in (1, 2) for p in ("weight", "bias")]
    for norm_first in (False, True):
        layer = EncoderLayer(8, 2, 16, dropout=0.1, norm_first=norm_first)
        assert list(layer.state_dict()) == keys
        assert isinstance(layer.dropout1, nn.Dropout) and isinstance(layer.dropout2, nn.Dropout)
        assert isinstance(layer.norm1, nn.LayerNorm) and layer.norm1.normalized_shape == (8,)


def test_layer_formulas_written_out():
    torch.manual_seed(0)
    x = torch.randn(2, 4, 8)
    post = EncoderLayer(8, 2, 16, norm_first=False)
    a = post.self_attn(x, x, x)[0]
    h = post.norm1(x + a)
    torch.testing.assert_close(post(x), post.norm2(h + post.ffn(h)))
    pre = EncoderLayer(8, 2, 16, norm_first=True)
    n1 = pre.norm1(x)
    h = x + pre.self_attn(n1, n1, n1)[0]
    torch.testing.assert_close(pre(x), h + pre.ffn(pre.norm2(h)))


def test_layer_dropout_only_in_training():
    layer = EncoderLayer(8, 2, 16, dropout=0.3)
    x = torch.randn(2, 5, 8)
    layer.eval()
    torch.testing.assert_close(layer(x), layer(x))
    layer.train()
    assert not torch.allclose(layer(x), layer(x))


# --- Encoder ------------------------------------------------------------------------------------

def make_encoder(**kwargs):
    config = dict(vocab_size=20, d_model=16, num_heads=4, d_ff=32, num_layers=2, max_len=32)
    config.update(kwargs)
    encoder = Encoder(**config)
    randomize_norms(encoder)
    return encoder


def torch_encoder_like(encoder: Encoder, norm_first: bool, activation="relu") -> nn.TransformerEncoder:
    layer0 = encoder.layers[0]
    attn = layer0.self_attn
    ref_layer = nn.TransformerEncoderLayer(attn.d_model, attn.num_heads, layer0.ffn.d_ff, dropout=0.0,
                                           activation=activation, batch_first=True, norm_first=norm_first)
    final = nn.LayerNorm(attn.d_model) if norm_first else None
    ref = nn.TransformerEncoder(ref_layer, len(encoder.layers), norm=final, enable_nested_tensor=False)
    ref = ref.to(encoder.embedding.weight.dtype)
    for layer, ref_layer in zip(encoder.layers, ref.layers):
        copy_layer_to_torch(layer, ref_layer)
    if norm_first:
        ref.norm.load_state_dict(encoder.final_norm.state_dict())
    return ref


def hand_embedding(encoder: Encoder, tokens):
    """embedding(tokens) * sqrt(d_model) + PE[:T], written out."""
    d_model = encoder.d_model
    pe = sinusoidal_positional_encoding(encoder.max_len, d_model).to(encoder.embedding.weight.dtype)
    return encoder.embedding.weight[tokens] * math.sqrt(d_model) + pe[: tokens.shape[1]]


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("activation", ["relu", "gelu"])
@pytest.mark.parametrize("norm_first", [False, True], ids=["post_ln", "pre_ln"])
@pytest.mark.parametrize("b,t", [(1, 1), (3, 7), (2, 32)])
def test_encoder_matches_torch_transformer_encoder(b, t, norm_first, activation, dtype):
    encoder = make_encoder(norm_first=norm_first, activation=activation).to(dtype)
    ref = torch_encoder_like(encoder, norm_first, activation)
    tokens = torch.randint(1, 20, (b, t))
    lengths = torch.randint(1, t + 1, (b,))
    kpm = padding_mask_from_lengths(lengths, max_len=t)
    tokens[kpm] = 0                                                           # pad_id
    real = ~kpm
    for mode in ("train", "eval"):
        encoder.train(mode == "train")
        ref.train(mode == "train")
        with torch.no_grad():
            expected = ref(hand_embedding(encoder, tokens), src_key_padding_mask=kpm)
            out = encoder(tokens)                                             # mask from tokens == pad_id
            out_explicit, attentions = encoder(tokens, key_padding_mask=kpm, return_attention=True)
        torch.testing.assert_close(out[real], expected[real])
        torch.testing.assert_close(out_explicit[real], expected[real])
        assert len(attentions) == 2 and all(a.shape == (b, 4, t, t) for a in attentions)
        assert torch.isfinite(out).all()


@pytest.mark.filterwarnings("ignore:The PyTorch API of nested tensors:UserWarning")
def test_encoder_nested_tensor_fast_path_parity():
    # torch.nn.TransformerEncoder in eval mode with nested tensors (its default) zeroes padded positions.
    encoder = make_encoder().eval()
    ref = nn.TransformerEncoder(nn.TransformerEncoderLayer(16, 4, 32, dropout=0.0, batch_first=True), 2).eval()
    for layer, ref_layer in zip(encoder.layers, ref.layers):
        copy_layer_to_torch(layer, ref_layer)
    tokens = torch.tensor([[3, 4, 5, 6, 7], [8, 9, 0, 0, 0]])
    kpm = tokens == 0
    with torch.no_grad():
        expected = ref(hand_embedding(encoder, tokens), src_key_padding_mask=kpm)
        out = encoder(tokens)
    torch.testing.assert_close(out[~kpm], expected[~kpm])


def test_encoder_embedding_and_positions_by_hand():
    encoder = make_encoder(num_layers=1)
    tokens = torch.tensor([[1, 2, 3, 0], [4, 5, 0, 0]])
    torch.testing.assert_close(encoder.embed(tokens), hand_embedding(encoder, tokens))
    assert (encoder.embedding.weight[0] == 0).all()                           # padding_idx row
    learned = make_encoder(positional="learned")
    expected = learned.embedding(tokens) * 4.0 + learned.pos_embedding.weight[:4]
    torch.testing.assert_close(learned.embed(tokens), expected)
    none = make_encoder(positional="none")
    torch.testing.assert_close(none.embed(tokens), none.embedding(tokens) * 4.0)


@pytest.mark.parametrize("d_model", [64, 512])
def test_encoder_init_tokens_and_positions_on_one_scale(d_model):
    """At init, embedding * sqrt(d_model) has RMS ~1 and the sinusoidal table RMS ~0.71: both visible.

    nn.Embedding's default N(0, 1) would make the tokens sqrt(2 * d_model) times larger (32x at 512)."""
    encoder = Encoder(vocab_size=1000, d_model=d_model, num_heads=4, d_ff=8, num_layers=1, max_len=256)
    tokens = torch.arange(1, 257)[None]                                        # 256 ids, no padding
    with torch.no_grad():
        token_part = encoder.embedding(tokens) * math.sqrt(d_model)
    positions = encoder.pe[:256]
    rms = lambda t: t.pow(2).mean().sqrt().item()                              # noqa: E731
    ratio = rms(token_part) / rms(positions)
    assert 0.8 < rms(token_part) < 1.2                                        # unit-variance entries
    assert 1.0 < ratio < 2.0                                                   # sqrt(2) expected, not ~32
    assert (encoder.embedding.weight[encoder.pad_id] == 0).all()
    untouched = nn.Embedding(1000, d_model)                                    # torch's default, for contrast
    assert rms(untouched(tokens) * math.sqrt(d_model)) / rms(positions) > 0.5 * math.sqrt(2 * d_model)


def test_encoder_default_mask_is_tokens_equal_pad_id():
    encoder = make_encoder(pad_id=3)
    tokens = torch.tensor([[1, 2, 3, 3], [4, 5, 6, 3]])
    torch.testing.assert_close(encoder(tokens), encoder(tokens, key_padding_mask=tokens == 3))
    assert not torch.allclose(encoder(tokens), encoder(tokens, key_padding_mask=torch.zeros(2, 4, dtype=torch.bool)))
    no_padding = torch.tensor([[1, 2, 4, 5], [4, 5, 6, 7]])                   # the mask is dropped: same numbers
    torch.testing.assert_close(encoder(no_padding), encoder(no_padding, key_padding_mask=no_padding == 3))
    torch.testing.assert_close(encoder(no_padding), encoder(no_padding, return_attention=True)[0])


def test_encoder_allow_mask_is_passed_to_every_layer():
    encoder = make_encoder()
    tokens = torch.randint(1, 20, (2, 5))
    allowed = torch.ones(5, 5, dtype=torch.bool).tril()
    out, attentions = encoder(tokens, allow_mask=allowed, return_attention=True)
    for weights in attentions:
        assert (weights[..., ~allowed] == 0).all()
    torch.testing.assert_close(encoder(tokens, allow_mask=allowed), out)


EXPECTED_ENCODER_KEYS = {
    # (norm_first, positional) -> the keys besides the layers'
    (False, "sinusoidal"): ["embedding.weight"],
    (True, "sinusoidal"): ["embedding.weight", "final_norm.weight", "final_norm.bias"],
    (False, "learned"): ["embedding.weight", "pos_embedding.weight"],
    (True, "none"): ["embedding.weight", "final_norm.weight", "final_norm.bias"],
}


@pytest.mark.parametrize("norm_first,positional", list(EXPECTED_ENCODER_KEYS))
def test_encoder_state_dict_keys_are_the_contracts(norm_first, positional):
    encoder = Encoder(10, 8, 2, 16, 2, norm_first=norm_first, positional=positional)
    layer_keys = list(EncoderLayer(8, 2, 16).state_dict())
    keys = list(encoder.state_dict())
    assert "pe" not in keys and not any(k.endswith(".pe") for k in keys)
    assert sorted(keys) == sorted(EXPECTED_ENCODER_KEYS[norm_first, positional]
                                  + [f"layers.{i}.{k}" for i in range(2) for k in layer_keys])
    assert isinstance(encoder.layers, nn.ModuleList) and len(encoder.layers) == 2
    assert isinstance(encoder.final_norm, nn.LayerNorm if norm_first else nn.Identity)
    assert encoder.embedding.padding_idx == 0
    if positional == "sinusoidal":
        torch.testing.assert_close(encoder.pe, sinusoidal_positional_encoding(512, 8))
        assert "pe" in dict(encoder.named_buffers())


def test_encoder_loads_its_own_state_dict_and_moves_pe_with_dtype():
    a, b = make_encoder(), make_encoder()
    b.load_state_dict(a.state_dict())                                         # strict: no missing `pe`
    tokens = torch.randint(0, 20, (2, 6))
    torch.testing.assert_close(a(tokens), b(tokens))
    assert a.double().pe.dtype == torch.float64
    assert a(tokens).dtype == torch.float64


# --- properties ---------------------------------------------------------------------------------

@PROPERTY
@given(lengths=st.lists(st.integers(1, 6), min_size=1, max_size=3), extra=st.integers(1, 4),
       norm_first=st.booleans(), positional=st.sampled_from(["sinusoidal", "learned", "none"]),
       seed=st.integers(0, 2**16))
def test_padding_invariance(lengths, extra, norm_first, positional, seed):
    """Adding more padding at the end does not change the outputs at the real tokens."""
    torch.manual_seed(seed)
    encoder = make_encoder(norm_first=norm_first, positional=positional).eval()
    t = max(lengths)
    kpm = padding_mask_from_lengths(lengths, max_len=t)
    tokens = torch.randint(1, 20, (len(lengths), t)).masked_fill(kpm, 0)
    longer = torch.cat([tokens, torch.zeros(len(lengths), extra, dtype=torch.long)], dim=1)
    with torch.no_grad():
        out = encoder(tokens)
        out_longer = encoder(longer)
        out_explicit, _ = encoder(longer, return_attention=True)
    torch.testing.assert_close(out_longer[:, :t][~kpm], out[~kpm], rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(out_explicit[:, :t][~kpm], out[~kpm], rtol=1e-5, atol=1e-5)
    assert torch.isfinite(out_longer).all()


@PROPERTY
@given(t=st.integers(2, 7), seed=st.integers(0, 2**16), norm_first=st.booleans())
def test_permutation_equivariance_without_positions(t, seed, norm_first):
    """Without positional information, permuting the tokens permutes the outputs (and nothing else)."""
    torch.manual_seed(seed)
    encoder = make_encoder(norm_first=norm_first, positional="none").eval()
    tokens = torch.randint(0, 20, (2, t))
    tokens[:, 0] = 1                                                          # at least one real token
    perm = torch.randperm(t)
    with torch.no_grad():
        out = encoder(tokens)
        out_perm = encoder(tokens[:, perm])
    torch.testing.assert_close(out_perm, out[:, perm], rtol=1e-5, atol=1e-5)


@PROPERTY
@given(t=st.integers(2, 7), seed=st.integers(0, 2**16), return_attention=st.booleans())
def test_layer_permutation_equivariance(t, seed, return_attention):
    torch.manual_seed(seed)
    layer = EncoderLayer(8, 2, 16).eval()
    x = torch.randn(2, t, 8)
    kpm = torch.rand(2, t) > 0.6
    perm = torch.randperm(t)
    with torch.no_grad():
        out = layer(x, kpm, return_attention=return_attention)
        out_perm = layer(x[:, perm], kpm[:, perm], return_attention=return_attention)
    if return_attention:
        (out, w), (out_perm, w_perm) = out, out_perm
        torch.testing.assert_close(w_perm, w[:, :, perm][..., perm])
    torch.testing.assert_close(out_perm, out[:, perm], rtol=1e-5, atol=1e-5)


def test_positions_break_permutation_equivariance():
    encoder = make_encoder(positional="sinusoidal").eval()
    tokens = torch.tensor([[1, 2, 3, 4]])
    perm = torch.tensor([3, 2, 1, 0])
    assert not torch.allclose(encoder(tokens[:, perm]), encoder(tokens)[:, perm], atol=1e-3)


@PROPERTY
@given(b=st.integers(1, 3), t=st.integers(1, 5), norm_first=st.booleans(), return_attention=st.booleans())
def test_all_padding_batch_is_finite_with_finite_gradients(b, t, norm_first, return_attention):
    encoder = make_encoder(norm_first=norm_first, dropout=0.1).train()
    tokens = torch.zeros(b, t, dtype=torch.long)                              # nothing but padding
    out = encoder(tokens, return_attention=return_attention)
    if return_attention:
        out, attentions = out
        assert all((a == 0).all() for a in attentions)                        # no key to attend to
    assert torch.isfinite(out).all()
    out.square().sum().backward()
    assert all(torch.isfinite(p.grad).all() for p in encoder.parameters() if p.grad is not None)


# --- errors -------------------------------------------------------------------------------------

@pytest.mark.parametrize("kwargs,error,match", [
    (dict(d_model=10, num_heads=4), CourseValueError, r"^num_heads: expected a divisor of d_model=10, got 4"),
    (dict(vocab_size=0), CourseValueError, r"^vocab_size: expected a positive int, got 0"),
    (dict(d_model=-4), CourseValueError, r"^d_model: expected a positive int, got -4"),
    (dict(num_heads=0), CourseValueError, r"^num_heads: expected a positive int, got 0"),
    (dict(d_ff=0), CourseValueError, r"^d_ff: expected a positive int, got 0"),
    (dict(num_layers=0), CourseValueError, r"^num_layers: expected a positive int, got 0"),
    (dict(max_len=0), CourseValueError, r"^max_len: expected a positive int, got 0"),
    (dict(num_layers=2.0), CourseTypeError, r"^num_layers: expected a positive int, got float"),
    (dict(dropout=1.0), CourseValueError, r"^dropout: expected a float in \[0, 1\), got 1.0"),
    (dict(dropout=-0.5), CourseValueError, r"^dropout: expected a float in \[0, 1\), got -0.5"),
    (dict(pad_id=20), CourseValueError, r"^pad_id: expected an id in \[0, 20\) \(inside the vocabulary\), got 20"),
    (dict(pad_id=-1), CourseValueError, r"^pad_id: expected an id in \[0, 20\)"),
    (dict(pad_id=1.0), CourseTypeError,
     r"^pad_id: expected an id in \[0, 20\) \(inside the vocabulary\), got float 1.0"),
    (dict(positional="rotary"), CourseValueError, r"^positional: expected one of .*got 'rotary'"),
    (dict(activation="swish"), CourseValueError, r"^activation: expected one of"),
])
def test_encoder_constructor_errors(kwargs, error, match):
    with pytest.raises(error, match=match):
        make_encoder(**kwargs)


@pytest.mark.parametrize("kwargs,error,match", [
    (dict(d_model=10, num_heads=4, d_ff=8), CourseValueError, r"^num_heads: expected a divisor of d_model=10"),
    (dict(d_model=8, num_heads=2, d_ff=0), CourseValueError, r"^d_ff: expected a positive int, got 0"),
    (dict(d_model=0, num_heads=2, d_ff=8), CourseValueError, r"^d_model: expected a positive int, got 0"),
    (dict(d_model=8, num_heads=2, d_ff=8, dropout=1.5), CourseValueError, r"^dropout: expected a float in \[0, 1\)"),
])
def test_layer_constructor_errors(kwargs, error, match):
    with pytest.raises(error, match=match):
        EncoderLayer(**kwargs)


@pytest.mark.parametrize("x,kwargs,error,match", [
    (torch.randn(2, 5, 6), {}, CourseValueError,
     r"^x: expected shape \(batch, seq, d_model=8\), got torch.float32 of shape \(2, 5, 6\)"),
    (torch.randn(5, 8), {}, CourseValueError, r"^x: expected shape \(batch, seq, d_model=8\)"),
    (torch.ones(2, 5, 8, dtype=torch.long), {}, CourseTypeError, r"^x: expected a floating-point tensor"),
    (torch.randn(2, 5, 8), dict(key_padding_mask=torch.zeros(2, 4, dtype=torch.bool)), CourseValueError,
     r"^key_padding_mask: expected bool of shape \(2, 5\), got torch.bool of shape \(2, 4\)"),
    (torch.randn(2, 5, 8), dict(key_padding_mask=torch.zeros(2, 5, dtype=torch.long)), CourseTypeError,
     r"^key_padding_mask: expected bool .*ambiguous"),
    (torch.randn(2, 5, 8), dict(allow_mask=torch.ones(2, 3, 5, 5, dtype=torch.bool)), CourseValueError,
     r"^allow_mask: expected a bool mask broadcastable to \(2, 2, 5, 5\)"),
])
@pytest.mark.parametrize("return_attention", [False, True])
def test_layer_forward_errors(x, kwargs, error, match, return_attention):
    with pytest.raises(error, match=match):
        EncoderLayer(8, 2, 16)(x, return_attention=return_attention, **kwargs)


@pytest.mark.parametrize("tokens,kwargs,error,match", [
    (torch.tensor([1, 2, 3]), {}, CourseValueError,
     r"^tokens: expected shape \(batch, seq\), got torch.int64 of shape \(3,\) \(add a batch axis: tokens\[None\]\)"),
    (torch.ones(2, 3, 4, dtype=torch.long), {}, CourseValueError,
     r"^tokens: expected shape \(batch, seq\), got .*\(2, 3, 4\)"),
    (torch.ones(2, 3), {}, CourseTypeError, r"^tokens: expected integer token ids \(torch.long\), got torch.float32"),
    (torch.ones(2, 3, dtype=torch.bool), {}, CourseTypeError, r"^tokens: expected integer token ids"),
    ([[1, 2, 3]], {}, CourseTypeError, r"^tokens: expected a torch.Tensor, got list"),
    (torch.tensor([[1, -1, 3]]), {}, CourseValueError,
     r"^tokens: expected ids in \[0, 20\) \(vocab_size=20\), got ids from -1 to 3"),
    (torch.tensor([[1, 2, 20]]), {}, CourseValueError, r"^tokens: expected ids in \[0, 20\) .*got ids from 1 to 20"),
    (torch.ones(1, 33, dtype=torch.long), {}, CourseValueError,
     r"^tokens: expected a sequence of at most max_len=32 positions, got 33"),
    (torch.ones(2, 3, dtype=torch.long), dict(key_padding_mask=torch.zeros(2, 4, dtype=torch.bool)), CourseValueError,
     r"^key_padding_mask: expected bool of shape \(2, 3\)"),
    (torch.ones(2, 3, dtype=torch.long), dict(key_padding_mask=torch.ones(2, 3, dtype=torch.long)), CourseTypeError,
     r"^key_padding_mask: expected bool .*ambiguous"),
    (torch.ones(2, 3, dtype=torch.long), dict(allow_mask=torch.ones(4, 4, dtype=torch.bool)), CourseValueError,
     r"^allow_mask: expected a bool mask broadcastable to \(2, 4, 3, 3\)"),
])
@pytest.mark.parametrize("return_attention", [False, True])
def test_encoder_forward_errors(tokens, kwargs, error, match, return_attention):
    with pytest.raises(error, match=match):
        make_encoder()(tokens, return_attention=return_attention, **kwargs)


@pytest.mark.parametrize("dtype", [torch.int32, torch.int16, torch.uint8])
def test_encoder_accepts_other_integer_ids(dtype):
    encoder = make_encoder()
    tokens = torch.tensor([[1, 2, 3, 0]])
    torch.testing.assert_close(encoder(tokens.to(dtype)), encoder(tokens))


def test_encoder_without_positions_has_no_length_limit():
    encoder = make_encoder(positional="none", max_len=4)
    assert encoder(torch.ones(1, 6, dtype=torch.long)).shape == (1, 6, 16)
