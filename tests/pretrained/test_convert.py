"""course_lib.pretrained.convert: the packaged checkpoint under the paper's names, read without transformers."""

import json
import os
import subprocess
import sys

import pytest

from course_lib import CourseValueError
from course_lib.pretrained import HF_TO_COURSE, MiniLM, hf_to_course_state_dict, load_minilm, minilm_path
from course_lib.pretrained.convert import read_config, read_weights


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


def test_state_dict_is_course_lib_names(minilm):
    keys = set(minilm[0].state_dict())
    assert "layers.0.self_attn.w_q.weight" in keys and "layers.5.ffn.linear2.bias" in keys
    assert not any("query" in k or "LayerNorm" in k for k in keys)
    assert isinstance(minilm[0], MiniLM)


def test_every_checkpoint_tensor_is_used_once():
    hf = read_weights(minilm_path())
    config = read_config(minilm_path())
    ours = hf_to_course_state_dict(hf, config["num_layers"])
    assert set(ours) == set(MiniLM(**config).state_dict())
    used = {id(t) for t in ours.values()}
    unused = [k for k, t in hf.items() if id(t) not in used and "pooler" not in k and "position_ids" not in k]
    assert not unused, unused
    assert len(HF_TO_COURSE) * 2 * config["num_layers"] + 5 == len(ours)


def test_state_dict_with_bert_prefix():
    hf = read_weights(minilm_path())
    prefixed = {"bert." + k: v for k, v in hf.items()}
    num_layers = read_config(minilm_path())["num_layers"]
    a, b = hf_to_course_state_dict(hf, num_layers), hf_to_course_state_dict(prefixed, num_layers)
    assert a.keys() == b.keys() and all(a[k] is b[k] for k in a)


def test_other_configs_are_refused(tmp_path):
    config = json.loads((minilm_path() / "config.json").read_text())
    (tmp_path / "config.json").write_text(json.dumps(dict(config, hidden_act="relu")))
    with pytest.raises(CourseValueError, match=r"^model_dir: expected a BERT config with hidden_act='gelu'.*got "
                                               r"'relu'"):
        load_minilm(model_dir=tmp_path)
    (tmp_path / "config.json").write_text(json.dumps(config))
    with pytest.raises(FileNotFoundError, match=r"model_dir: expected model.safetensors or pytorch_model.bin"):
        load_minilm(model_dir=tmp_path)
