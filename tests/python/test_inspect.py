"""mobius_cpp.inspect() raises exactly where `mobius info` exits 1 (issue 25): the build it
describes would fail (an unregistered or state-space type, tensors that cannot be listed, the build
refused for the ep). The exception's message is the build's own error line, and its `info` the
report. Config files and a tiny checkpoint: about 10 s."""

from transformers import CONFIG_MAPPING

import harness as H
import mobius_cpp
import pytest


def saved(model_type: str, path):
    CONFIG_MAPPING[model_type]().save_pretrained(path)
    return path


def info_failure_cases(tiny, tmp_path):
    """(source, options) pairs of `mobius info` that exit 0 and that exit 1."""
    speech = saved("speech_to_text", tmp_path / "speech")  # unregistered, and no weights
    inkling = saved("inkling2_text", tmp_path / "inkling")  # state-space, unregistered
    return [(tiny, {}), (tiny, {"dtype": "bf16", "ep": "cpu"}), (tiny, {"dtype": "bf16", "ep": "cuda"}),
            (speech, {}), (inkling, {}), (tiny, {"precision": "int4", "ep": "cpu"})]


def test_inspect_raises_where_info_fails(tiny, tmp_path):
    for source, options in info_failure_cases(tiny, tmp_path):
        cli = []
        for k, v in options.items():
            cli += [f"--{k}", v]
        r = H.run_mobius("info", source, *cli)
        assert r.returncode in (0, 1), r.stderr
        if r.returncode == 0:
            info = mobius_cpp.inspect(source, **options)
            assert info.task and not info.not_registered and not info.no_weights
            continue
        with pytest.raises(mobius_cpp.MobiusError) as e:
            mobius_cpp.inspect(source, **options)
        info = e.value.info
        assert info is not None and info.model_type in r.stdout
        # the message is the one the build itself would fail with
        b = H.run_mobius("build", source, tmp_path / "out", *cli)
        assert b.returncode == 1 and f"mobius: error: {e.value}\n" == b.stderr, (str(e.value), b.stderr)


def test_any_source_from_python(tiny, tmp_path):
    """build() and inspect() take what `mobius build SOURCE` takes, told apart by the same C++ code:
    a GGUF by its content whatever its name, a directory's config.json as the directory."""
    import shutil

    import gguf
    import torch
    from transformers import AutoModelForCausalLM

    import gguf_testlib as G

    torch.manual_seed(0)
    G.write_gguf(AutoModelForCausalLM.from_config(H.make_config("llama", {})), tmp_path / "tiny.gguf",
                 gguf.GGMLQuantizationType.Q8_0)
    shutil.copy(tmp_path / "tiny.gguf", tmp_path / "weights.bin")
    assert mobius_cpp.inspect(tmp_path / "weights.bin").format == "GGUF"
    a = mobius_cpp.build(tmp_path / "weights.bin", tmp_path / "a")
    b = mobius_cpp.build(tmp_path / "tiny.gguf", tmp_path / "b")
    assert H.data_path(a.path).read_bytes() == H.data_path(b.path).read_bytes()
    assert mobius_cpp.inspect(tiny / "config.json").source == str(tiny)
    with pytest.raises(mobius_cpp.MobiusValueError, match="neither a GGUF file"):
        mobius_cpp.build(tmp_path / "a" / "genai_config.json", tmp_path / "c")
