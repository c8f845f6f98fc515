"""Custom registration (src/registry/custom.h): a tiny Llama saved under another model_type with
renamed config fields and tensor names, registered from Python, and a tiny Mixtral with renamed
experts, registered from a JSON file for `mobius build --register`: both give transformers'
logits on the original checkpoint. Tiny models: about 10 s."""

import json
import re
from pathlib import Path

import numpy as np
import pytest
from safetensors.numpy import load_file, save_file

import harness as H
import mobius_cpp


def renamed_copy(hf: Path, out: Path, model_type: str, fields: dict, keys: list) -> None:
    """`hf` saved as another model: config fields renamed (ours -> theirs) and model_type,
    tensor names rewritten by `keys` [(python regex, replacement)]."""
    out.mkdir()
    cfg = json.loads((hf / "config.json").read_text())
    cfg = {fields.get(k, k): v for k, v in cfg.items()} | {"model_type": model_type}
    (out / "config.json").write_text(json.dumps(cfg))
    tensors = {}
    for name, t in load_file(hf / "model.safetensors").items():
        for pattern, replacement in keys:
            name = re.sub(pattern, replacement, name)
        tensors[name] = t
    save_file(tensors, out / "model.safetensors")


def assert_logits_equal(model_path: Path, reference) -> None:
    lm = H.OnnxLM(model_path, reference.config)
    assert lm.io_problems() == []
    ids, mask, pos = H.prefill_batch(reference.config.vocab_size)
    got, _ = lm(ids, mask, pos)
    want, _ = H.hf_forward(H.float64(reference), ids, mask, pos)
    valid = mask.astype(bool)  # the left padding's logits are not compared
    assert H.max_abs(got[valid], want[valid]) <= H.TOL


def test_renamed_llama_from_python(tmp_path):
    H.write_checkpoint("llama", {}, tmp_path / "llama")
    theirs = tmp_path / "my_llama"
    renamed_copy(tmp_path / "llama", theirs, "my_llama", {"hidden_size": "d_model", "num_hidden_layers": "n_layers"},
                 [(r"^model\.layers\.", "transformer.h."), (r"\.self_attn\.", ".attn."),
                  (r"^model\.embed_tokens\.", "transformer.wte.")])
    with pytest.raises(ValueError):  # not registered yet: the CLI's unknown-type error
        mobius_cpp.build(theirs, tmp_path / "out", runtime="none")
    mobius_cpp.register("my_llama", base="llama", config_renames={"d_model": "hidden_size", "n_layers": "num_hidden_layers"},
                        key_renames=[(r"^transformer\.h\.", "model.layers."), (r"\.attn\.", ".self_attn."),
                                     (r"^transformer\.wte\.", "model.embed_tokens.")])
    pkg = mobius_cpp.build(theirs, tmp_path / "out", runtime="none")
    assert pkg.unused_tensors == [] and pkg.num_weights == len(load_file(theirs / "model.safetensors"))
    assert_logits_equal(H.graph_path(pkg.path, "model"), H.load_reference(tmp_path / "llama"))


def test_mixtral_with_renamed_experts_from_cli_json(tmp_path):
    H.write_checkpoint("mixtral", {}, tmp_path / "mixtral")
    theirs = tmp_path / "moe"
    names = {"w1": "gate", "w3": "up", "w2": "down"}
    renamed_copy(tmp_path / "mixtral", theirs, "my_moe", {},
                 [(rf"\.block_sparse_moe\.experts\.(\d+)\.{w}\.", rf".moe.expert_\1.{n}.") for w, n in names.items()]
                 + [(r"\.block_sparse_moe\.gate\.", ".moe.router.")])
    spec = tmp_path / "types.json"
    spec.write_text(json.dumps([{"model_type": "my_moe", "base": "mixtral",
                                 "key_renames": [[rf"\.moe\.expert_(\d+)\.{n}\.", rf".block_sparse_moe.experts.$1.{w}."]
                                                 for w, n in names.items()]
                                 + [[r"\.moe\.router\.", ".block_sparse_moe.gate."]]}]))
    r = H.run_mobius("build", "--config", theirs, tmp_path / "out", "--runtime", "none", "--register", spec)
    assert r.returncode == 0 and "warning" not in r.stderr, r.stderr
    assert_logits_equal(H.graph_path(tmp_path / "out", "model"), H.load_reference(tmp_path / "mixtral"))
    # the same file from Python builds the same bytes
    mobius_cpp.register_file(spec)
    mobius_cpp.build(theirs, tmp_path / "py", runtime="none")
    for name in H.graph_files(["model"], "hf"):
        assert (tmp_path / "py" / name).read_bytes() == (tmp_path / "out" / name).read_bytes()


def test_registration_errors(tmp_path):
    with pytest.raises(ValueError, match=r"base 'lama' is not a registered model type \(nearest: llama"):
        mobius_cpp.register("x", base="lama")
    with pytest.raises(ValueError, match="'llama': already registered"):
        mobius_cpp.register("llama", base="mistral")
    with pytest.raises(ValueError, match=r"key_renames\[0\]: pattern '\(': unbalanced '\(' at byte 1"):
        mobius_cpp.register("x", base="llama", key_renames=[("(", "")])
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"model_type": "x", "base": "llama", "key_renames": {"a": "b"}}))
    r = H.run_mobius("build", "--config", tmp_path, tmp_path / "out", "--register", bad)
    assert r.returncode == 1 and r.stderr == (f"mobius: error: {bad}: field 'key_renames': expected an array of "
                                              "[pattern, replacement] pairs\n")
    with pytest.raises(ValueError) as e:
        mobius_cpp.register_file(bad)
    assert e.value.field == "key_renames" and e.value.file == str(bad)
    assert not (tmp_path / "out").exists()


def test_fused_qkv_and_gate_up_split(tmp_path):
    """A Llama checkpoint whose q/k/v and gate/up weights (and q/k/v biases) are stored fused, as
    Phi-3 stores them, registered with fused_qkv / fused_gate_up: transformers' logits; and with
    --precision int8 (MatMulNBits reads the parts untransposed, by rows) the same bytes as the
    unfused checkpoint's int8 build."""
    hf = tmp_path / "llama"
    H.write_checkpoint("llama", {"attention_bias": True, "num_key_value_heads": 1}, hf)
    fused = tmp_path / "fused"
    fused.mkdir()
    cfg = json.loads((hf / "config.json").read_text()) | {"model_type": "fused_llama"}
    (fused / "config.json").write_text(json.dumps(cfg))
    tensors = load_file(hf / "model.safetensors")
    for key in [k for k in tensors if ".q_proj." in k]:
        tensors[key.replace("q_proj", "qkv_proj")] = np.concatenate(
            [tensors.pop(key.replace("q_proj", p)) for p in ("q_proj", "k_proj", "v_proj")])
    for key in [k for k in tensors if ".gate_proj." in k]:
        tensors[key.replace("gate_proj", "gate_up_proj")] = np.concatenate(
            [tensors.pop(key.replace("gate_proj", p)) for p in ("gate_proj", "up_proj")])
    save_file(tensors, fused / "model.safetensors")
    mobius_cpp.register("fused_llama", base="llama", fused_qkv="qkv_proj", fused_gate_up="gate_up_proj")
    pkg = mobius_cpp.build(fused, tmp_path / "out", runtime="none")
    assert pkg.unused_tensors == []
    assert_logits_equal(H.graph_path(pkg.path, "model"), H.load_reference(hf))
    # the same registration as JSON for the CLI builds the same bytes
    spec = tmp_path / "types.json"
    spec.write_text(json.dumps({"model_type": "fused_llama", "base": "llama", "fused_qkv": "qkv_proj",
                                "fused_gate_up": "gate_up_proj"}))
    r = H.run_mobius("build", "--config", fused, tmp_path / "cli", "--runtime", "none", "--register", spec)
    assert r.returncode == 0, r.stderr
    assert H.data_path(tmp_path / "cli").read_bytes() == H.data_path(pkg.path).read_bytes()
    spec.write_text(json.dumps({"model_type": "fused_llama", "base": "llama", "fused_qkv": 3}))
    r = H.run_mobius("build", "--config", fused, tmp_path / "cli2", "--register", spec)
    assert r.returncode == 1 and r.stderr == (f"mobius: error: {spec}: field 'fused_qkv': expected a string (the "
                                              "fused module's name, e.g. \"qkv_proj\")\n")
    mobius_cpp.build(fused, tmp_path / "fused_int8", runtime="none", precision="int8")
    mobius_cpp.build(hf, tmp_path / "int8", runtime="none", precision="int8")
    assert H.data_path(tmp_path / "fused_int8").read_bytes() == H.data_path(tmp_path / "int8").read_bytes()
    # a fused tensor whose rows are not the parts' sum
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "config.json").write_text(json.dumps(cfg | {"num_key_value_heads": 2}))
    save_file(tensors, bad / "model.safetensors")
    with pytest.raises(ValueError, match=r"tensor 'model\.layers\.0\.self_attn\.qkv_proj\.bias' has shape \[96\], but model "
                                         r"type 'fused_llama' splits it along its first axis into 3 parts of 64 \+ 32 \+ 32 rows"):
        mobius_cpp.build(bad, tmp_path / "bad_out", runtime="none")
    assert not (tmp_path / "bad_out").exists()
