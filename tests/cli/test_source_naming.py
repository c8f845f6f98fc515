"""One way to name a source (issue 25): `mobius build SOURCE OUTPUT_DIR` with a positional source of
any kind (directory, .gguf file, a GGUF told by its content), `--config` and `--gguf` as synonyms
for any kind, the ORT GenAI model builder's habits (-m/-i/-o/-p/-e, `--ep CPU`, `-p fp16`) read as
the mobius options they mean, misspelt options answered with the nearest one, `mobius list`,
`export` / `convert` / `version`, and a --help with defaults and examples. Each accepted spelling
must write the package the canonical spelling writes, byte for byte. Tiny models: about 20 s."""

import re
import shutil
from pathlib import Path

import gguf
import pytest
import torch
from transformers import AutoModelForCausalLM

import gguf_testlib as G
import harness as H


def files(d: Path) -> dict:
    return {f: (d / f).read_bytes() for f in sorted(H.package_files(d))}


def built(*args) -> Path:
    """Runs `mobius ARGS...` (a build whose output directory is the last word or follows -o)."""
    r = H.run_mobius(*args)
    assert r.returncode == 0, r.stderr
    return Path(args[args.index("-o") + 1] if "-o" in args else args[-1])


def one_line_error(*args) -> str:
    r = H.run_mobius(*args)
    lines = r.stderr.splitlines()
    assert r.returncode == 1 and len(lines) == 1 and lines[0].startswith("mobius: error: "), r.stderr
    return lines[0]


@pytest.fixture(scope="module")
def tiny_gguf(tmp_path_factory) -> Path:
    torch.manual_seed(0)
    path = tmp_path_factory.mktemp("gguf") / "tiny.gguf"
    G.write_gguf(AutoModelForCausalLM.from_config(H.make_config("llama", {})), path, gguf.GGMLQuantizationType.Q8_0)
    return path


def test_positional_source_equals_config(tiny, tmp_path):
    canonical = files(built("build", "--config", tiny, tmp_path / "config"))
    assert files(built("build", tiny, tmp_path / "positional")) == canonical
    assert files(built("build", "--gguf", tiny, tmp_path / "gguf_flag")) == canonical  # --gguf names a directory too
    assert files(built("build", tiny / "config.json", tmp_path / "config_json")) == canonical  # its directory


def test_gguf_by_any_name(tiny_gguf, tmp_path):
    canonical = files(built("build", "--gguf", tiny_gguf, tmp_path / "gguf"))
    assert files(built("build", tiny_gguf, tmp_path / "positional")) == canonical
    assert files(built("build", "--config", tiny_gguf, tmp_path / "config")) == canonical
    renamed = tmp_path / "weights.bin"  # a GGUF is told by its magic, not by its name
    shutil.copy(tiny_gguf, renamed)
    assert files(built("build", renamed, tmp_path / "renamed")) == canonical
    # and `mobius info` reads it the same way
    r = H.run_mobius("info", renamed)
    assert r.returncode == 0 and f"source:      {renamed} (GGUF)" in r.stdout, r.stdout + r.stderr


def test_a_file_that_is_no_source(tiny, tmp_path):
    (tmp_path / "notes.txt").write_text("not a model")
    line = one_line_error("build", tmp_path / "notes.txt", tmp_path / "out")
    assert "notes.txt: neither a GGUF file" in line and "checkpoint directory" in line
    ggufs = tmp_path / "ggufs"
    ggufs.mkdir()
    (ggufs / "model-q4.gguf").write_bytes(b"")
    line = one_line_error("build", ggufs, tmp_path / "out")
    assert f"{ggufs}: a directory without config.json that holds model-q4.gguf" in line
    assert "pass the .gguf file itself" in line and not (tmp_path / "out").exists()


@pytest.mark.parametrize("args,error", [
    (("build",), "no SOURCE given"),
    (("build", "{out}"), "no SOURCE given ({out} is taken as OUTPUT_DIR)"),
    (("build", "{ckpt}"), "no OUTPUT_DIR given ({ckpt} is a source): mobius build SOURCE OUTPUT_DIR"),
    (("build", "{out}/absent", "{out}"), "{out}/absent: no such file or directory (a checkpoint directory"),
    (("build", "{ckpt}/config.json/x", "{out}"), "{ckpt}/config.json/x: no such file or directory"),
    (("frobnicate",), "unknown command 'frobnicate' (commands: build info apply-weights list version; see --help)"),
    (("biuld", "{ckpt}", "{out}"), "unknown command 'biuld' (did you mean build? commands:"),
    (("build", "--config", "{ckpt}"), "no OUTPUT_DIR given"),
    (("build", "--config", "{ckpt}", "{ckpt}", "{out}"), "two sources given ({ckpt} and {ckpt})"),
    (("info",), "no SOURCE given: mobius info SOURCE"),
])
def test_missing_or_extra_source(args, error, tiny, tmp_path):
    words = {"out": tmp_path / "out", "ckpt": tiny}
    line = one_line_error(*[a.format(**words) for a in args])
    assert error.format(**words) in line, line


def test_builder_habits(tiny, tmp_path):
    """The ORT GenAI model builder's command line, read as the mobius options it means."""
    canonical = files(built("build", "--dtype", "f16", "--ep", "cpu", tiny, tmp_path / "canonical"))
    r = H.run_mobius("build", "-m", tiny, "-o", tmp_path / "builder", "-p", "fp16", "-e", "CPU")
    assert r.returncode == 0, r.stderr
    assert files(tmp_path / "builder") == canonical
    assert "mobius: note: --precision fp16 read as --dtype f16" in r.stderr, r.stderr
    int4 = files(built("build", "--precision", "int4", "--ep", "cpu", tiny, tmp_path / "int4"))
    assert files(built("build", "-i", tiny, "-o", tmp_path / "int4b", "-p", "INT4",
                       "--execution_provider", "CPUExecutionProvider")) == int4
    # -c is the builder's cache directory: the Hugging Face cache a model id is looked up in
    line = one_line_error("build", "-m", "Org/missing-model", "-c", tmp_path / "hub", "-o", tmp_path / "x", "-p", "int4",
                          "-e", "cpu")
    assert str(tmp_path / "hub" / "models--Org--missing-model") in line and "hf download Org/missing-model" in line


@pytest.mark.parametrize("args,needles", [
    (("--precison", "int4"), ("unknown option '--precison'", "did you mean --precision?")),
    (("--ep", "cpu", "--quant-schme", "asym"), ("unknown option '--quant-schme'", "did you mean --quant-scheme?")),
    (("--extra_options", "int4_block_size=64"), ("--block-size", "--accuracy-level", "--quant-scheme")),
    (("--frobnicate",), ("unknown option '--frobnicate' for mobius build; see mobius build --help",)),
    (("-e", "NvTensorRtRtx"), ("NvTensorRtRtx", "default", "onnx-standard", "cpu", "cuda", "dml", "webgpu")),
    (("-p", "int2"), ("'int2'", "int4, int8 or keep", "f32, f16, bf16")),
])
def test_wrong_option_is_answered(args, needles, tiny, tmp_path):
    line = one_line_error("build", tiny, tmp_path / "out", *args)
    for n in needles:
        assert n in line, line
    if args[0] == "--frobnicate":
        assert "did you mean" not in line, line  # another word, not a misspelling: no suggestion
    assert not (tmp_path / "out").exists()


def test_commands_users_try(tiny, tmp_path):
    models = H.run_mobius("list", "models")
    assert models.returncode == 0 and H.run_mobius("list").stdout == models.stdout
    rows = models.stdout.splitlines()
    header = rows[0]
    starts = [m.start() for m in re.finditer(r"(?<=  )\S", header)]  # columns 2..4 start after 2+ spaces
    assert len(starts) == 3, header
    for row in rows[1:]:  # every cell of a column starts where its header does
        for s in starts:
            assert row[s - 1] == " " and row[s] != " ", (header, row)
    version = H.run_mobius("--version").stdout
    assert H.run_mobius("version").stdout == version and version.startswith("mobius ")
    canonical = files(built("build", tiny, tmp_path / "build"))
    assert files(built("export", tiny, tmp_path / "export")) == canonical
    assert files(built("convert", tiny, tmp_path / "convert")) == canonical


def test_help_shows_defaults_and_examples():
    r = H.run_mobius("build", "--help")
    assert r.returncode == 0
    text = r.stdout
    assert "{false}" not in text and "{true}" not in text, text
    for option, default in [("--dtype", "f32"), ("--ep", "default"), ("--block-size", "32"),
                            ("--quant-scheme", "sym"), ("--runtime", "ort-genai")]:
        line = next(x for x in text.splitlines() if re.match(rf"\s*(-\w,)?{option}[ ,]", x))
        assert f"={default}" in line, line  # CLI11's "NAME TYPE=DEFAULT"
    assert "Examples:" in text and "mobius build Qwen/Qwen2.5-0.5B qwen-onnx" in text
    assert "--no-quantize-lm-head" in text and "SOURCE" in text
    top = H.run_mobius("--help").stdout
    assert "mobius build SOURCE OUTPUT_DIR" in top and "Qwen/Qwen2.5-0.5B" in top


def test_info_takes_the_same_spellings(tiny, tiny_gguf):
    def report(*args) -> str:  # the peak memory is this process' resident set plus a prediction: it varies
        r = H.run_mobius("info", *args)
        assert r.returncode == 0, r.stderr
        return re.sub(r"peak memory about [\d.]+ MiB", "peak memory about N MiB", r.stdout)

    for source in (tiny, tiny_gguf):
        canonical = report(source)
        for flag in ("--config", "--gguf", "-m"):
            assert report(flag, source) == canonical
    r = H.run_mobius("info", tiny, "-p", "INT4", "-e", "CPU")
    assert r.returncode == 0 and "build --dtype f32 --ep cpu --precision int4:" in r.stdout, r.stdout + r.stderr
    line = one_line_error("info", tiny, "--precison", "int4")
    assert "unknown option '--precison' for mobius info (did you mean --precision?)" in line
