"""course_lib.pretrained.modeling_minilm: MiniLM is course_lib's Encoder, and it computes what BERT and
sentence-transformers compute."""

import pytest
import torch

from course_lib import CourseTypeError, CourseValueError, Encoder
from course_lib.pretrained import load_minilm, mean_pool, minilm_path

TOL = 1e-4


def test_hidden_states_and_attention_match_bert(minilm, batch, hf, sentences):
    model = minilm[0]
    ref_batch = hf[0](sentences, padding=True, return_tensors="pt")
    with torch.no_grad():
        ref = hf[1](**ref_batch, output_attentions=True)
        hidden, attentions = model(batch["input_ids"], key_padding_mask=batch["key_padding_mask"],
                                   return_attention=True)
    assert hidden.shape == (len(sentences), batch["input_ids"].shape[1], 384)
    assert len(attentions) == 6
    assert (hidden - ref.last_hidden_state).abs().max() < TOL
    for ours, theirs in zip(attentions, ref.attentions):
        T = batch["input_ids"].shape[1]
        assert ours.shape == theirs.shape == (len(sentences), 12, T, T)
        assert (ours - theirs).abs().max() < TOL
    # padded keys get exactly zero attention; every row sums to 1
    pad = batch["key_padding_mask"][:, None, None, :].expand_as(attentions[0])
    assert attentions[-1][pad].abs().max() == 0
    assert torch.allclose(attentions[-1].sum(-1), torch.ones(()), atol=1e-5)


def test_fused_path_equals_explicit_path(minilm, batch):
    model = minilm[0]
    with torch.no_grad():
        fused = model(batch["input_ids"], key_padding_mask=batch["key_padding_mask"])
        explicit, _ = model(batch["input_ids"], key_padding_mask=batch["key_padding_mask"],
                            return_attention=True)
        default_mask = model(batch["input_ids"])                                   # mask = ids == [PAD]
    assert (fused - explicit).abs().max() < TOL
    assert torch.equal(default_mask, fused)


def test_sentence_embedding_matches_sentence_transformers(minilm, batch, sentences):
    import sentence_transformers as st

    reference = st.SentenceTransformer(str(minilm_path()), device="cpu")
    expected = torch.as_tensor(reference.encode(sentences, convert_to_tensor=True)).cpu()
    ours = minilm[0].sentence_embedding(batch)
    assert ours.shape == (len(sentences), 384)
    assert torch.allclose(ours.norm(dim=-1), torch.ones(()), atol=1e-5)
    assert (ours - expected).abs().max() < TOL
    assert torch.allclose(minilm[0].encode(sentences, minilm[1]), ours)


def test_mean_pool_ignores_padding():
    hidden = torch.randn(2, 4, 3)
    pad = torch.tensor([[False, False, True, True], [False, False, False, False]])
    pooled = mean_pool(hidden, pad, normalize=False)
    assert torch.allclose(pooled[0], hidden[0, :2].mean(0))
    assert torch.allclose(pooled[1], hidden[1].mean(0))


def test_minilm_is_an_encoder_running_its_layer_stack(minilm, batch):
    model = minilm[0]
    assert isinstance(model, Encoder) and type(model).run_layers is Encoder.run_layers
    assert model.positional == "learned" and isinstance(model.final_norm, torch.nn.Identity)
    with torch.no_grad():
        x = model.embed(batch["input_ids"])
        by_hand = x
        for layer in model.layers:
            by_hand = layer(by_hand, key_padding_mask=batch["key_padding_mask"])
        torch.testing.assert_close(model(batch["input_ids"], key_padding_mask=batch["key_padding_mask"]), by_hand)


def test_token_type_ids_are_added(minilm, batch):
    model = minilm[0]
    ids, pad = batch["input_ids"], batch["key_padding_mask"]
    with torch.no_grad():
        zeros = model(ids, key_padding_mask=pad, token_type_ids=torch.zeros_like(ids))
        ones = model(ids, key_padding_mask=pad, token_type_ids=torch.ones_like(ids))
        torch.testing.assert_close(model(ids, key_padding_mask=pad), zeros)
    assert not torch.allclose(zeros, ones)


@pytest.mark.parametrize("dtype", [torch.int32, torch.int16])
def test_other_integer_ids_as_the_encoder(minilm, batch, dtype):
    model = minilm[0]
    with torch.no_grad():
        torch.testing.assert_close(model(batch["input_ids"].to(dtype)), model(batch["input_ids"]))


def test_bad_input_raises(minilm):
    model, tokenizer = minilm
    ids = tokenizer(["hello world", "hi"])["input_ids"]
    with pytest.raises(CourseTypeError, match=r"^input_ids: expected integer token ids \(torch.long\), got "
                                              r"torch.float32 of shape \(2, 4\)"):
        model(ids.float())
    with pytest.raises(CourseValueError, match=r"^input_ids: expected shape \(batch, seq\), got torch.int64 of shape "
                                               r"\(4,\) \(add a batch axis: input_ids\[None\]\)"):
        model(ids[0])
    with pytest.raises(CourseTypeError, match=r"^key_padding_mask: expected bool of shape \(2, 4\)"):
        model(ids, key_padding_mask=(ids == 0).long())
    with pytest.raises(CourseValueError,
                       match=r"^input_ids: expected a sequence of at most max_len=512 positions, got 513"):
        model(torch.ones(1, 513, dtype=torch.long))
    with pytest.raises(CourseValueError, match=r"^input_ids: expected ids in \[0, 30522\) \(vocab_size=30522\), got "
                                               r"ids from 1 to 30522"):
        model(torch.tensor([[1, 30522]]))
    with pytest.raises(CourseValueError, match=r"^token_type_ids: expected ids in \[0, 2\) \(type_vocab_size=2\), got "
                                               r"ids from 2 to 2"):
        model(ids, token_type_ids=torch.full_like(ids, 2))
    with pytest.raises(CourseValueError, match=r"^token_type_ids: expected shape \(2, 4\) \(as the token ids\), got "
                                               r"torch.int64 of shape \(2, 3\)"):
        model(ids, token_type_ids=ids[:, :3])


# Every device this machine has: the CPU always, CUDA where a GPU is present (never skipped).
DEVICES = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])


@pytest.mark.parametrize("device", DEVICES)
def test_runs_on_device(minilm, batch, device):
    model, _ = load_minilm(device=device)
    with torch.no_grad():
        gpu, attn = model(batch["input_ids"].to(device), key_padding_mask=batch["key_padding_mask"].to(device),
                          return_attention=True)
        cpu = minilm[0](batch["input_ids"], key_padding_mask=batch["key_padding_mask"])
    assert gpu.device.type == device and attn[0].device.type == device
    keep = ~batch["key_padding_mask"]
    assert (gpu.cpu() - cpu)[keep].abs().max() < 1e-3                                # TF32 may be on
    assert torch.allclose(model.sentence_embedding(batch).cpu(), minilm[0].sentence_embedding(batch), atol=1e-3)
