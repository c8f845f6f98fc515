"""The CLI a user expects (issue 13, point 5): --version, a mistyped command, `mobius info` (read from
headers only; its figures checked against the safetensors / gguf packages and against a real
build), the config and tokenizer files copied for every task (a feature-extraction package used
alone: its tokenizer + onnxruntime + mean pooling give sentence-transformers-style embeddings equal
to transformers'), and the human build summary. Tiny models: about 15 s."""

import json
import re
import shutil
from pathlib import Path

import gguf
import numpy as np
import onnxruntime as ort
import pytest
import torch
from safetensors.numpy import load_file
from transformers import AutoModel, AutoModelForCausalLM, AutoTokenizer, BertTokenizerFast

import gguf_testlib as G
import harness as H

REPO = Path(__file__).resolve().parents[2]


def test_version():
    r = H.run_mobius("--version")
    version = re.search(r"project\(mobius VERSION (\S+)", (REPO / "CMakeLists.txt").read_text()).group(1)
    assert r.returncode == 0 and r.stdout.strip() == f"mobius {version}", r.stdout + r.stderr


def test_mistyped_command():
    r = H.run_mobius("biuld", "--config", "x", "y")
    lines = r.stderr.splitlines()
    assert r.returncode == 1 and len(lines) == 1, r.stderr
    assert lines[0].startswith("mobius: error: unknown command 'biuld'") and "did you mean build?" in lines[0]


def info(*args, returncode=0) -> str:
    r = H.run_mobius("info", *args)
    assert r.returncode == returncode, r.stderr
    return r.stdout


def field(text: str, label: str) -> str:
    return re.search(rf"^{label}:\s+(.*)$", text, re.M).group(1)


def mib(text: str) -> float:
    return float(re.search(r"([\d.]+) MiB", text).group(1))


@pytest.mark.parametrize("args", [(), ("--precision", "int4", "--ep", "cpu"), ("--dtype", "f16", "--ep", "cuda")])
def test_info_checkpoint(args, tiny, tmp_path):
    out = info(tiny, *args)
    tensors = load_file(tiny / "model.safetensors")
    assert field(out, "model type").startswith("llama (text-generation), registered (verification: docs/models.md)")
    assert field(out, "parameters") == f"{sum(t.size for t in tensors.values()):,}"
    f32 = re.search(r"^  FLOAT: (\d+) tensors, ([\d,]+) elements, ([\d.]+) MiB", out, re.M)
    assert int(f32.group(1)) == len(tensors) and f32.group(2) == f"{sum(t.size for t in tensors.values()):,}"
    # the output size is the build's: same options, the real model.onnx.data
    H.build(tiny, tmp_path / "out", *args)
    built = H.data_path(tmp_path / "out").stat().st_size
    line = next(x for x in out.splitlines() if x.startswith("build "))
    assert mib(line) == round(built / 2**20, 1), (line, built)
    eps = dict(re.findall(r"^  (\S+)\s+(.*)$", out.split("execution providers (--ep):\n")[1], re.M))
    assert list(eps) == ["default", "onnx-standard", "cpu", "cuda", "dml", "webgpu"]
    if not args:
        assert eps["default"] == "the canonical graph (standard ONNX ops)"
    assert "2 attention layers as GroupQueryAttention" in eps["cpu"]


def test_info_names_each_graphs_data_file(tmp_path):
    """A two-graph package: info gives onnx/encoder_model.onnx_data and
    onnx/decoder_model_merged.onnx_data, each the size the build writes."""
    import seq2seq_harness as S
    row = next(r for r in S.ROWS if r.model_type == "t5")
    S.write_checkpoint(row, tmp_path / "hf")
    line = next(x for x in info(tmp_path / "hf").splitlines() if x.startswith("build "))
    H.build(tmp_path / "hf", tmp_path / "out")
    sizes = re.findall(r"(onnx/\w+\.onnx_data) ([\d.]+) MiB", line)
    assert [name for name, _ in sizes] == [H.data_file(r, "hf") for r in ("encoder", "decoder")], line
    for name, size in sizes:
        assert float(size) == round((tmp_path / "out" / name).stat().st_size / 2**20, 1), line
    # apply-weights takes single-graph packages: a two-graph one is refused in one line, nothing written
    H.build(tmp_path / "hf", tmp_path / "nw", "--no-weights")
    r = H.run_mobius("apply-weights", tmp_path / "nw", tmp_path / "hf", tmp_path / "aw")
    assert r.returncode == 1 and len(r.stderr.splitlines()) == 1, r.stderr
    assert "a multi-graph package" in r.stderr and not (tmp_path / "aw").exists(), r.stderr


def test_info_gguf(tmp_path):
    torch.manual_seed(0)
    model = AutoModelForCausalLM.from_config(H.make_config("llama", {}))
    path = tmp_path / "tiny.gguf"
    G.write_gguf(model, path, gguf.GGMLQuantizationType.Q8_0)
    reader = gguf.GGUFReader(path)
    out = info(path)
    assert field(out, "source") == f"{path} (GGUF)"
    assert field(out, "parameters") == f"{sum(int(t.n_elements) for t in reader.tensors):,}"
    for qtype in {t.tensor_type for t in reader.tensors}:
        ts = [t for t in reader.tensors if t.tensor_type == qtype]
        m = re.search(rf"^  {qtype.name}: (\d+) tensors, ([\d,]+) elements", out, re.M)
        assert m and int(m.group(1)) == len(ts) and m.group(2) == f"{sum(int(t.n_elements) for t in ts):,}", out


def test_info_exits_1_when_the_build_it_describes_is_refused(tiny):
    out = info(tiny, "--dtype", "bf16", "--ep", "cpu", returncode=1)
    assert field(out, "build --dtype bf16 --ep cpu").startswith("refused: --dtype bf16 --ep cpu: onnxruntime's CPU")
    r = H.run_mobius("build", "--config", tiny, "--dtype", "bf16", "--ep", "cpu", tiny.parent / "refused")
    assert r.returncode == 1 and not (tiny.parent / "refused").exists()  # as the build itself
    info(tiny, "--dtype", "bf16", "--ep", "cuda")  # the same dtype where it loads


def test_info_checks_the_tensors_as_the_build(tiny, tmp_path):
    """A config.json whose sizes the tensors do not have: info refuses as the build would (the
    tensor, its shape and the expected one), and exits 1."""
    hf = tmp_path / "hf"
    shutil.copytree(tiny, hf)
    cfg = json.loads((hf / "config.json").read_text())
    cfg["intermediate_size"] += 4
    (hf / "config.json").write_text(json.dumps(cfg))
    out = info(hf, returncode=1)
    refused = field(out, "build --dtype f32 --ep default")
    assert refused.startswith("refused: ") and "mlp." in refused and "has shape" in refused, refused
    r = H.run_mobius("build", "--config", hf, tmp_path / "out")
    assert r.returncode == 1 and refused[len("refused: "):] in r.stderr, r.stderr


def test_info_unregistered(tmp_path):
    from transformers import CONFIG_MAPPING
    CONFIG_MAPPING["speech_to_text"]().save_pretrained(tmp_path / "hf")
    shutil.copy(REPO / "tests" / "cli" / "test_commands.py", tmp_path / "hf" / "unrelated.txt")
    # no weights at all: said, and why it is not built; the exit status says the build would fail
    out = info(tmp_path / "hf", returncode=1)
    assert field(out, "model type").startswith(
        "speech_to_text: not registered: speech model type 'speech_to_text' (transformers' "
        "Speech2TextForConditionalGeneration) is not supported yet")
    assert field(out, "parameters").startswith("unknown: ") and "no *.safetensors files" in out


def test_feature_extraction_package_is_usable_alone(tmp_path):
    """The package alone (no checkpoint at hand): its tokenizer and config load, and tokenizer +
    onnxruntime + mean pooling give the embeddings of transformers on the checkpoint."""
    hf = tmp_path / "hf"
    model = H.write_checkpoint("bert", {}, hf)
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"] + [f"w{i}" for i in range(model.config.vocab_size - 5)]
    (tmp_path / "vocab.txt").write_text("\n".join(vocab) + "\n")
    BertTokenizerFast(str(tmp_path / "vocab.txt")).save_pretrained(hf)
    r = H.run_mobius("build", "--config", hf, tmp_path / "pkg")
    assert r.returncode == 0, r.stderr
    pkg = tmp_path / "pkg"
    assert not H.copy_problems(hf, pkg, ("config.json", "tokenizer.json", "tokenizer_config.json"))
    sentences = ["w1 w2 w3", "w7 w3 w9 w11 w2 w5"]
    tok = AutoTokenizer.from_pretrained(pkg)  # the README's embedding quickstart, as written there
    enc = tok(sentences, padding=True, return_tensors="np")
    sess = ort.InferenceSession(str(H.graph_path(pkg, "model")))
    feeds = {i.name: enc[i.name].astype(np.int64) for i in sess.get_inputs()}
    hidden = sess.run(["last_hidden_state"], feeds)[0]
    mask = enc["attention_mask"][..., None]
    ours = (hidden * mask).sum(1) / mask.sum(1)
    ref = H.float64(AutoModel.from_pretrained(hf).eval())
    with torch.no_grad():
        tenc = AutoTokenizer.from_pretrained(hf)(sentences, padding=True, return_tensors="pt")
        h = ref(**tenc).last_hidden_state
        m = tenc["attention_mask"][..., None]
        want = ((h * m).sum(1) / m.sum(1)).numpy()
    assert H.max_abs(ours, want) <= H.TOL


def test_build_summary_in_words(tiny, tmp_path):
    r = H.run_mobius("build", "--config", tiny, tmp_path / "out", "--ep", "cpu", "--precision", "int4")
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith(f"built llama (text-generation) -> {tmp_path / 'out'}\n"), r.stdout
    for internal in ("pack_matmuls", "group_query_attention", "skip_simplified_layer_norm", "matmul_nbits"):
        assert internal not in r.stdout
    assert "2 attention layers as GroupQueryAttention" in r.stdout
    assert "accuracy level 4, LM head quantized, embeddings float" in r.stdout  # untied llama: the builder's
    assert "genai_config.json" in r.stdout and "config.json" in r.stdout


def test_build_summary_of_a_model_without_lm_head(tmp_path):
    """An encoder has no LM head: the --precision line does not speak of one (or of tied embeddings)."""
    hf = tmp_path / "hf"
    H.write_checkpoint("bert", {}, hf)
    r = H.run_mobius("build", "--config", hf, tmp_path / "out", "--precision", "int4")
    assert r.returncode == 0, r.stderr
    line = next(l for l in r.stdout.splitlines() if l.strip().startswith("--precision int4"))
    assert "accuracy level" in line and "LM head" not in line and "embeddings" not in line, line


def test_info_takes_the_task(tmp_path):
    """`mobius info --task` describes the build of that head: a BertForQuestionAnswering checkpoint
    is question-answering from its architectures, and --task feature-extraction describes the
    encoder alone, each with the data-file size its build writes."""
    import encoder_harness as E
    H.write_checkpoint("bert", {}, tmp_path / "hf", E.HEAD_CLASSES["question-answering"][0])
    for task in ("question-answering", "feature-extraction"):
        args = () if task == "question-answering" else ("--task", task)
        out = info(tmp_path / "hf", *args)
        assert f"model type:  bert ({task})" in out, out
        line = next(x for x in out.splitlines() if x.startswith("build "))
        H.build(tmp_path / "hf", tmp_path / task, *args)
        (size,) = re.findall(r"onnx/model\.onnx_data ([\d.]+) MiB", line)
        assert float(size) == round(H.data_path(tmp_path / task).stat().st_size / 2**20, 1), line


def test_task_words_and_heads_the_checkpoint_lacks(tmp_path):
    """--task in any case; a misspelt task gets the nearest one; a head the checkpoint does not hold
    (its architectures name another) is refused naming both, not as a missing tensor; a decoder
    checkpoint saved with a classification head says that head is not supported."""
    import encoder_harness as E
    from transformers import AutoModelForSequenceClassification
    qa = tmp_path / "qa"
    H.write_checkpoint("bert", {}, qa, E.HEAD_CLASSES["question-answering"][0])
    H.build(qa, tmp_path / "upper", "--task", "QUESTION-ANSWERING")
    H.build(qa, tmp_path / "plain")
    assert H.package_files(tmp_path / "upper") == H.package_files(tmp_path / "plain")
    for f in H.graph_files(["model"], "hf"):
        assert (tmp_path / "upper" / f).read_bytes() == (tmp_path / "plain" / f).read_bytes(), f
    for task, needles in (("text-clasification", ["has no such head (did you mean text-classification?",
                                                  "sentence-embedding for a sentence-transformers model"]),
                          ("fill-mask", ["--task fill-mask:", "names architectures BertForQuestionAnswering, a "
                                         "question-answering checkpoint: it holds that head, not fill-mask's"])):
        r = H.run_mobius("build", qa, tmp_path / task, "--task", task)
        assert r.returncode == 1 and len(r.stderr.splitlines()) == 1, r.stderr
        assert all(n in r.stderr for n in needles), r.stderr
        assert not (tmp_path / task).exists()
    cls = tmp_path / "llama-cls"
    H.write_checkpoint("llama", {"pad_token_id": 0}, cls, AutoModelForSequenceClassification)
    r = H.run_mobius("build", cls, tmp_path / "llama-out")
    assert r.returncode == 1 and "architectures LlamaForSequenceClassification: the text-classification head of a " \
        "llama decoder is not supported yet" in r.stderr, r.stderr
