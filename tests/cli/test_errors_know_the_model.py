"""Errors and hints that know the model (issue 25): an unregistered type is said to be what
transformers says it is (its kind and model class, from the generated table
src/registry/hf_model_types.inc), state-space and hybrid types are said to be planned and never get
--try-generic suggested although their configs have Llama's fields, nor do multimodal ones; the
nearest registered names are given only for a misspelling, never for a type transformers knows.
(mobius_cpp.inspect() raising where `mobius info` exits 1: tests/python/test_inspect.py.) Config
files only: about 10 s."""

import re

import pytest
import transformers.models.auto.modeling_auto as auto
from transformers import CONFIG_MAPPING

import harness as H


def one_line_error(*args) -> str:
    r = H.run_mobius(*args)
    lines = r.stderr.splitlines()
    assert r.returncode == 1 and len(lines) == 1 and lines[0].startswith("mobius: error: "), r.stderr
    return lines[0]


def saved(model_type: str, path):
    CONFIG_MAPPING[model_type]().save_pretrained(path)
    return path


@pytest.mark.parametrize("model_type", ["inkling2_text"])
def test_state_space_types_are_named_and_planned(model_type, tmp_path):
    hf = saved(model_type, tmp_path / "hf")
    cls = auto.MODEL_FOR_CAUSAL_LM_MAPPING_NAMES[model_type]  # transformers' own class for the type
    for extra in ((), ("--try-generic",)):
        line = one_line_error("build", hf, tmp_path / "out", *extra)
        assert f"text-generation model type '{model_type}' (transformers' {cls})" in line, line
        assert "state-space / hybrid recurrent model" in line, line
        assert "try-generic builds it" not in line and "did you mean" not in line, line
        if not extra:
            assert "planned (issue \"state-space\")" in line, line
        assert not (tmp_path / "out").exists()
    out = H.run_mobius("info", hf)
    assert out.returncode == 1 and "state-space" in out.stdout and "--try-generic can build it" not in out.stdout


def test_multimodal_type_gets_no_try_generic(tmp_path):
    hf = saved("chameleon", tmp_path / "hf")
    cls = auto.MODEL_FOR_IMAGE_TEXT_TO_TEXT_MAPPING_NAMES["chameleon"]
    line = one_line_error("build", hf, tmp_path / "out")
    assert f"vision-language model type 'chameleon' (transformers' {cls}) is not supported yet" in line, line
    assert "try-generic" not in line
    line = one_line_error("build", hf, tmp_path / "out", "--try-generic")
    assert "not a text-generation model: the generic Llama decoder builds decoders only" in line, line


def test_nearest_names_only_for_a_misspelling(tiny, tmp_path):
    for model_type, near in [("lama", "did you mean llama"), ("qwen22", "did you mean qwen2"),
                             ("completely_unknown_type", None)]:
        hf = tmp_path / model_type
        hf.mkdir()
        cfg = (tiny / "config.json").read_text()
        (hf / "config.json").write_text(re.sub(r'"model_type": "llama"', f'"model_type": "{model_type}"', cfg))
        line = one_line_error("build", hf, tmp_path / "out", "--no-weights")
        assert f"unknown model type '{model_type}'" in line, line
        if near:
            assert near in line, line
        else:
            assert "did you mean" not in line and "see `mobius list models`" in line, line


def test_task_the_model_does_not_have(tmp_path):
    """--task (src/tasks/text_heads.h with_task, driver/build.h create_for_task): a head a text
    encoder lacks lists the ones it has; any other model takes only its own task; sentence-embedding
    needs modules.json. Config files only (--no-weights)."""
    bert, llama = saved("bert", tmp_path / "bert"), saved("llama", tmp_path / "llama")
    line = one_line_error("build", bert, tmp_path / "o1", "--no-weights", "--task", "summarization")
    assert ("--task summarization: bert has no such head (its tasks: feature-extraction, fill-mask, "
            "text-classification, token-classification, question-answering, multiple-choice; sentence-embedding for "
            "a sentence-transformers model)") in line, line
    line = one_line_error("build", llama, tmp_path / "o2", "--no-weights", "--task", "fill-mask")
    assert "--task fill-mask: llama builds text-generation only" in line, line
    line = one_line_error("build", bert, tmp_path / "o3", "--no-weights", "--task", "sentence-embedding")
    assert "--task sentence-embedding: " in line and "has no modules.json" in line, line
