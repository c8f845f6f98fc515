"""`mobius info` predicts the build's peak memory and disk from the shapes and the options (issue 25:
it said "about 64.0 MiB" for every input): the memory prediction is checked against the maximum
resident set of the real build (getrusage of the child), within 25 %, for a float32, a float16 and
an int4 --ep cpu build of a 100 MB checkpoint, its Q8_0 GGUF, and a tiny model; the disk prediction
against the bytes of the package written, within DISK_TOLERANCE; and a build whose package does not
fit the output's file system (a tmpfs of 8 MiB, mounted in a private mount namespace) is refused
before anything is written. About 50 s."""

import re
import subprocess

import gguf
import pytest

import gguf_testlib as G
import harness as H

TOLERANCE = 0.25  # |predicted / measured - 1|
# the disk prediction leaves out the files written after the graphs (genai_config.json, a GGUF's
# synthesized tokenizer: a few KiB for these models, up to MiBs for a real vocabulary)
DISK_TOLERANCE = 0.01
DISK_SLACK = 64 << 10


def measured_peak(*args) -> float:
    """The maximum resident set of `mobius ARGS...`, in MiB, as GNU time reports it (%M). Not
    getrusage(RUSAGE_CHILDREN) from Python: a forked child's high-water mark starts at the forking
    Python's resident set (about 11 MiB), above a tiny build's own (8 MiB since the CLI links
    protobuf statically)."""
    r = subprocess.run(["/usr/bin/time", "-f", "%M", str(H.mobius_bin()), *map(str, args)], capture_output=True,
                       text=True)
    assert r.returncode == 0, r.stderr
    return int(r.stderr.strip().splitlines()[-1]) / 1024


def predicted_peak(source, *options) -> float:
    r = H.run_mobius("info", source, *options)
    assert r.returncode == 0, r.stdout + r.stderr
    line = next(x for x in r.stdout.splitlines() if x.startswith("build "))
    return float(re.search(r"peak memory about ([\d.]+) MiB", line).group(1))


def predicted_disk(source, *options) -> int:
    r = H.run_mobius("info", source, *options)
    assert r.returncode == 0, r.stdout + r.stderr
    return int(re.search(r"^disk: +the package takes about [\d.]+ MiB \((\d+) bytes;", r.stdout, re.M).group(1))


@pytest.fixture(scope="module")
def medium(tmp_path_factory):
    """A llama of 100 MB in float32 (a 32000 x 512 embedding and LM head: the largest tensors),
    and its Q8_0 GGUF."""
    d = tmp_path_factory.mktemp("medium")
    model = H.write_checkpoint("llama", {"hidden_size": 512, "intermediate_size": 1376, "num_hidden_layers": 4,
                                         "vocab_size": 32000, "num_attention_heads": 8, "num_key_value_heads": 4},
                               d / "hf")
    G.write_gguf(model, d / "model.gguf", gguf.GGMLQuantizationType.Q8_0)
    return d


@pytest.mark.parametrize("source,options", [
    ("hf", ()), ("hf", ("--dtype", "f16")), ("hf", ("--ep", "cpu", "--precision", "int4")),
    ("model.gguf", ()), ("model.gguf", ("--ep", "cpu", "--precision", "int4")), ("tiny", ()),
])
def test_info_predicts_the_peak_memory(source, options, medium, tiny, tmp_path):
    path = tiny if source == "tiny" else medium / source
    predicted = predicted_peak(path, *options)
    measured = measured_peak("build", path, tmp_path / "out", *options)
    print(f"\n{source} {' '.join(options)}: predicted {predicted:.1f} MiB, measured {measured:.1f} MiB")
    assert abs(predicted / measured - 1) <= TOLERANCE, (predicted, measured)


@pytest.mark.parametrize("source,options", [
    ("hf", ()), ("hf", ("--ep", "cpu", "--precision", "int4")), ("model.gguf", ()), ("tiny", ()),
])
def test_info_predicts_the_disk(source, options, medium, tiny, tmp_path):
    path = tiny if source == "tiny" else medium / source
    predicted = predicted_disk(path, *options)
    r = H.run_mobius("build", path, tmp_path / "out", *options)
    assert r.returncode == 0, r.stderr
    written = sum(f.stat().st_size for f in (tmp_path / "out").rglob("*") if f.is_file())
    print(f"\n{source} {' '.join(options)}: predicted {predicted} bytes, written {written}")
    assert predicted <= written and written - predicted <= DISK_TOLERANCE * written + DISK_SLACK, (predicted, written)


def test_build_refuses_a_package_larger_than_the_free_disk(medium, tiny, tmp_path):
    """The 100 MB checkpoint into a tmpfs of 8 MiB: refused with the sizes, nothing left in the
    file system; the tiny model fits and builds there."""
    small = tmp_path / "small"
    small.mkdir()
    mobius = H.mobius_bin()
    script = (f"mount -t tmpfs -o size=8m tmpfs {small} && "
              f"{{ {mobius} build {medium / 'hf'} {small}/big; echo big=$?; ls -A {small}; "
              f"{mobius} build {tiny} {small}/tiny >/dev/null; echo tiny=$?; ls -A {small}; }}")
    r = subprocess.run(["unshare", "--map-root-user", "--mount", "sh", "-c", script], capture_output=True, text=True,
                       timeout=300)
    lines = r.stdout.split()
    assert lines == ["big=1", "tiny=0", "tiny"], r.stdout + r.stderr
    want = re.compile(rf"mobius: error: {re.escape(str(small))}/big: the package needs about [\d.]+ MiB and the "
                      rf"file system of {re.escape(str(small))} has [\d.]+ MiB free: ")
    assert want.search(r.stderr), r.stderr
