"""Hostile inputs through the Python API (docs/security.md): each case runs in a child
interpreter with a time limit, so that a crash (a stack overflow in a regex engine kills the
interpreter), a hang (a FIFO read) or a runaway is a failure here, not a dead or stuck test run.
The child must raise the one MobiusError the CLI would print, quickly."""

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import harness as H

REPO = Path(__file__).resolve().parents[2]


def in_child(code: str, timeout: int = 60) -> str:
    """Runs `code` (mobius_cpp imported, `expect(fn, *needles)` defined) in a new interpreter;
    returns its stdout, asserting it exited 0."""
    prelude = textwrap.dedent("""
        import mobius_cpp
        def expect(fn, *needles):
            try:
                fn()
            except mobius_cpp.MobiusError as e:
                for n in needles:
                    assert n in str(e), (n, str(e)[:300])
                assert "internal error" not in str(e) and "\\n" not in str(e)
                print("raised:", str(e)[:300])
                return
            raise AssertionError("no error")
    """)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO / "build" / "python"), os.environ.get("PYTHONPATH", "")])}
    r = subprocess.run([sys.executable, "-c", prelude + textwrap.dedent(code)], capture_output=True, text=True,
                       timeout=timeout, env=env)
    assert r.returncode == 0, f"exit {r.returncode}: {r.stderr[-2000:]}"
    return r.stdout


@pytest.fixture
def package(tiny, tmp_path) -> Path:
    import mobius_cpp  # noqa: PLC0415
    mobius_cpp.build(tiny, tmp_path / "pkg", weights=False, runtime="none")
    return tmp_path / "pkg"


def test_package_open_fifo_does_not_block(package):
    os.mkfifo(H.graph_path(package, "encoder"))  # every graph file of the package is read
    in_child(f"expect(lambda: mobius_cpp.Package.open({str(package)!r}), "
             f"{H.graph_file('encoder', 'hf')!r}, 'FIFO')", timeout=30)


def test_package_open_link_out_of_the_package(package):
    (H.graph_path(package, "model")).rename(package.parent / "elsewhere.onnx")
    (H.graph_path(package, "model")).symlink_to(package.parent / "elsewhere.onnx")
    in_child(f"expect(lambda: mobius_cpp.Package.open({str(package)!r}), 'model.onnx', 'outside')")


def test_package_open_huge_graph_is_refused_by_size(package):
    extra = H.graph_path(package, "decoder")  # a graph file of the package
    extra.write_bytes(b"\0")
    os.truncate(extra, 3 << 30)  # sparse
    in_child(f"expect(lambda: mobius_cpp.Package.open({str(package)!r}), "
             f"{H.graph_file('decoder', 'hf')!r}, 'more than the')", timeout=30)


def test_register_pattern_that_would_crash_or_hang(tmp_path):
    out = in_child("""
        expect(lambda: mobius_cpp.register("x", base="llama", key_renames=[("(" * 60000 + ")" * 60000, "")]),
               "key_renames[0]", "longer than 1024 bytes")
        expect(lambda: mobius_cpp.register("x", base="llama", key_renames=[(r"(a)\\1", "")]), "backreferences")
        mobius_cpp.register("x", base="llama", key_renames=[("(.*)*(.*)*(.*)*Z", "")])  # fine: linear time
        print("registered")
    """)
    assert "registered" in out


def test_lora_tensor_with_a_100k_name_is_an_error_not_a_crash(tiny, tmp_path):
    name = f"base_model.model.{'x' * 100_000}.lora_A.weight"
    adapter = H.write_raw_lora_adapter(tiny, tmp_path / "adapter", extra_tensors={name: np.zeros((2, 2), np.float32)})
    in_child(f"expect(lambda: mobius_cpp.build({str(tiny)!r}, {str(tmp_path / 'out')!r}, lora={str(adapter)!r}), "
             "'adapter_model.safetensors', 'limit of 4096')")
    assert not (tmp_path / "out").exists()


def test_lora_rank_pattern_that_would_hang(tiny, tmp_path):
    adapter = H.write_raw_lora_adapter(tiny, tmp_path / "adapter", rank_pattern={"(.*)*(.*)*(.*)*Z": 3})
    out = in_child(f"""
        pkg = mobius_cpp.build({str(tiny)!r}, {str(tmp_path / 'out')!r}, lora={str(adapter)!r}, runtime="none")
        print("built", pkg.num_weights)
    """)
    assert "built" in out  # the pattern matches no module: r = 2, the tensors' rank (3 would be refused)
