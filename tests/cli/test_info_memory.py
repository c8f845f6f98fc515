"""`mobius info` predicts the build's peak memory from the shapes and the options (issue 25: it said
"about 64.0 MiB" for every input): the prediction is checked against the maximum resident set of
the real build (getrusage of the child), within 25 %, for a float32, a float16 and an int4 --ep cpu
build of a 100 MB checkpoint, its Q8_0 GGUF, and a tiny model. About 40 s."""

import re
import subprocess
import sys

import gguf
import pytest

import gguf_testlib as G
import harness as H

TOLERANCE = 0.25  # |predicted / measured - 1|


def measured_peak(*args) -> float:
    """The maximum resident set of `mobius ARGS...`, in MiB (a fresh Python whose only child it is)."""
    code = ("import resource, subprocess, sys; r = subprocess.run(sys.argv[1:], capture_output=True, text=True); "
            "assert r.returncode == 0, r.stderr; print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)")
    r = subprocess.run([sys.executable, "-c", code, str(H.mobius_bin()), *map(str, args)], capture_output=True,
                       text=True)
    assert r.returncode == 0, r.stderr
    return int(r.stdout) / 1024


def predicted_peak(source, *options) -> float:
    r = H.run_mobius("info", source, *options)
    assert r.returncode == 0, r.stdout + r.stderr
    line = next(x for x in r.stdout.splitlines() if x.startswith("build "))
    return float(re.search(r"peak memory about ([\d.]+) MiB", line).group(1))


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
