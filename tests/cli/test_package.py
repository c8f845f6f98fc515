"""The ONNX Runtime GenAI package: genai_config.json facts come from config.json,
generation_config.json and the architecture; tokenizer files are copied next to the model;
`--runtime none` writes the model only."""

import json
import shutil

import pytest

import harness as H


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory):
    hf = tmp_path_factory.mktemp("pkg") / "hf"
    H.write_checkpoint("llama", {"head_dim": 32}, hf)
    (hf / "generation_config.json").write_text(json.dumps(
        {"bos_token_id": 1, "eos_token_id": [2, 7], "do_sample": True, "temperature": 0.6, "top_p": 0.9}))
    (hf / "tokenizer.json").write_text('{"version": "1.0"}')
    (hf / "tokenizer_config.json").write_text('{"model_max_length": 512}')
    return hf


def test_genai_config(checkpoint, tmp_path):
    H.build(checkpoint, tmp_path / "out")
    g = json.loads((tmp_path / "out" / "genai_config.json").read_text())
    cfg = json.loads((checkpoint / "config.json").read_text())
    m, d = g["model"], g["model"]["decoder"]
    assert m["type"] == "llama"
    assert m["eos_token_id"] == [2, 7] and m["bos_token_id"] == 1 and m["pad_token_id"] == 2
    assert m["vocab_size"] == cfg["vocab_size"] and m["context_length"] == cfg["max_position_embeddings"]
    assert (d["head_size"], d["hidden_size"]) == (32, cfg["hidden_size"])
    assert (d["num_attention_heads"], d["num_key_value_heads"], d["num_hidden_layers"]) == (
        cfg["num_attention_heads"], cfg["num_key_value_heads"], cfg["num_hidden_layers"])
    assert d["inputs"]["past_key_names"] == "past_key_values.%d.key"
    assert d["outputs"]["present_value_names"] == "present.%d.value"
    assert g["search"]["do_sample"] is True and g["search"]["temperature"] == 0.6
    assert g["search"]["top_k"] == 50  # not in generation_config.json: transformers' default
    assert g["search"]["past_present_share_buffer"] is False  # no GroupQueryAttention in the graph
    for f in ("tokenizer.json", "tokenizer_config.json", "generation_config.json"):
        assert (tmp_path / "out" / f).read_bytes() == (checkpoint / f).read_bytes()


@pytest.mark.parametrize("model_type, genai_type", [("gpt_oss", "gptoss"), ("hunyuan_v1_dense", "hunyuandensev1"),
                                                    ("qwen2", "qwen2"), ("gpt2", "decoder")])
def test_genai_model_type(model_type, genai_type, tmp_path):
    """model.type is onnxruntime-genai's name for the model type, "decoder" where genai has none
    that fits (its gpt2 type expects the combined past cache of old GPT-2 exports)."""
    H.write_checkpoint(model_type, {}, tmp_path / "hf")
    H.build(tmp_path / "hf", tmp_path / "out")
    assert json.loads((tmp_path / "out" / "genai_config.json").read_text())["model"]["type"] == genai_type


def test_runtime_none_writes_model_only(checkpoint, tmp_path):
    H.build(checkpoint, tmp_path / "out", "--runtime", "none")
    assert H.package_files(tmp_path / "out") == H.graph_files(["model"], "hf")


def test_genai_package_without_tokenizer_is_warned_about(checkpoint, tmp_path):
    """A genai package needs the tokenizer files (og.Tokenizer reads them from the package): a
    checkpoint without them builds, with one warning naming the checkpoint and the output; with a
    tokenizer.json, or with --runtime none, no warning."""
    hf = tmp_path / "hf"
    shutil.copytree(checkpoint, hf)
    for f in ("tokenizer.json", "tokenizer_config.json"):
        (hf / f).unlink(missing_ok=True)
    r = H.run_mobius("build", hf, tmp_path / "out")
    assert r.returncode == 0 and (tmp_path / "out" / "genai_config.json").is_file(), r.stderr
    assert r.stderr.splitlines() == [f"mobius: warning: no tokenizer files in {hf}: onnxruntime-genai's og.Tokenizer "
                                     "reads tokenizer.json and tokenizer_config.json from the package; copy the "
                                     f"model's tokenizer files into {tmp_path / 'out'} before running it there"], r.stderr
    r = H.run_mobius("build", hf, tmp_path / "none", "--runtime", "none")
    assert r.returncode == 0 and r.stderr == "", r.stderr
    (hf / "tokenizer.json").write_text('{"version": "1.0"}')
    r = H.run_mobius("build", hf, tmp_path / "with")
    assert r.returncode == 0 and r.stderr == "", r.stderr


@pytest.mark.parametrize("adds_bos", [True, False])
def test_bos_warning_follows_the_post_processor(checkpoint, tmp_path, adds_bos):
    """The <bos> warning is said when the tokenizer's post-processor adds the bos token (as
    transformers' tokenizer then does), not because the token is in the vocabulary (a new-user
    trial: a BPE tokenizer without a template was warned about)."""
    from tokenizers import Tokenizer, models, processors
    from transformers import AutoTokenizer, PreTrainedTokenizerFast
    hf = tmp_path / "hf"
    shutil.copytree(checkpoint, hf)
    tok = Tokenizer(models.BPE(vocab={"<s>": 0, "</s>": 1, "a": 2, "b": 3, "ab": 4}, merges=[("a", "b")]))
    if adds_bos:
        tok.post_processor = processors.TemplateProcessing(single="<s> $A", special_tokens=[("<s>", 0)])
    PreTrainedTokenizerFast(tokenizer_object=tok, bos_token="<s>", eos_token="</s>").save_pretrained(hf)
    assert (AutoTokenizer.from_pretrained(hf)("ab").input_ids[0] == 0) == adds_bos  # transformers' own answer
    r = H.run_mobius("build", hf, tmp_path / "out")
    assert r.returncode == 0, r.stderr
    assert ("mobius: warning: the tokenizer adds <s> to every text" in r.stderr) == adds_bos, r.stderr
