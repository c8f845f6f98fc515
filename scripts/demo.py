"""The main job on the default model, end to end.

Creates a small Llama-style checkpoint with transformers (fixed seed, every parameter
re-randomized), builds it with `mobius build`, runs the package in ONNX Runtime and prints the
parity figures against transformers (padded-batch prefill, a decode step) and greedily generated
token ids from both.
"""
import sys
import tempfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "parity"))
import harness  # noqa: E402  (the parity harness: checkpoint, build, onnxruntime wrapper)


def tiny_llama(work: Path) -> None:
    hf_dir, out_dir = work / "hf", work / "onnx"
    print(f"transformers {harness.versions()['transformers']}: creating a tiny Llama checkpoint "
          f"(seed 0) in {hf_dir}")
    harness.write_checkpoint("llama", {}, hf_dir)
    ref = harness.load_reference(hf_dir)
    path = harness.build(hf_dir, out_dir)
    size = sum(f.stat().st_size for f in out_dir.iterdir())
    print(f"mobius build --config {hf_dir} {out_dir}: {size / 1024:.0f} KiB")
    lm = harness.OnnxLM(path, ref.config)

    ids, mask, pos = harness.prefill_batch(ref.config.vocab_size)
    hf_logits, cache = harness.hf_forward(ref, ids, mask, pos)
    ox_logits, past = lm(ids, mask, pos)
    valid = mask.astype(bool)
    print(f"prefill (batch 2, {ids.shape[1]} tokens, left padding {harness.PAD}): "
          f"max |Δlogits| = {harness.max_abs(ox_logits[valid], hf_logits[valid]):.2e}")
    nxt = np.array([[5], [7]], np.int64)
    mask2 = np.concatenate([mask, np.ones((2, 1), np.int64)], axis=1)
    hf2, _ = harness.hf_forward(ref, nxt, mask2, pos[:, -1:] + 1, cache)
    ox2, _ = lm(nxt, mask2, pos[:, -1:] + 1, past)
    print(f"decode step with cache: max |Δlogits| = {harness.max_abs(ox2, hf2):.2e}")

    prompt = np.arange(1, 11, dtype=np.int64)
    hf_tokens = harness.greedy(lambda i, m, p, c: harness.hf_forward(ref, i, m, p, c), prompt, 16)
    ox_tokens = harness.greedy(lambda i, m, p, c: lm(i, m, p, c), prompt, 16)
    print(f"greedy from prompt {prompt.tolist()}:")
    print(f"  transformers: {hf_tokens}")
    print(f"  onnxruntime : {ox_tokens}")
    print("tokens equal" if hf_tokens == ox_tokens else "TOKENS DIFFER")
    if hf_tokens != ox_tokens:
        sys.exit(1)


if __name__ == "__main__":
    with tempfile.TemporaryDirectory(prefix="mobius-demo-") as d:
        tiny_llama(Path(d))
