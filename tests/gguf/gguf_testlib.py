"""Shared by tests/gguf: the mobius-gguf-dump tool, and writing a transformers model as a GGUF file
the way llama.cpp's convert_hf_to_gguf.py does (LlamaModel: Q/K rows permuted; Gemma3Model: every
*norm.weight stored as 1 + w), with tensor names from the gguf package's own TensorNameMap."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import gguf
import numpy as np
import torch

import harness as H

QT = gguf.GGMLQuantizationType


def dump_bin() -> Path:
    return Path(os.environ.get("MOBIUS_GGUF_DUMP", H.mobius_bin().parent / "mobius-gguf-dump"))


def run_dump(*args) -> subprocess.CompletedProcess:
    return subprocess.run([str(dump_bin()), *map(str, args)], capture_output=True, text=True, timeout=300)


def dump_json(*args):
    r = run_dump(*args)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def dump_floats(cmd: str, path: Path, name: str, tmp: Path) -> np.ndarray:
    out = tmp / "dump.f32"
    r = run_dump(cmd, path, name, out)
    assert r.returncode == 0, r.stderr
    return np.fromfile(out, dtype=np.float32)


# --- HF -> GGUF, after convert_hf_to_gguf.py -------------------------------------------------------
def llama_permute(w: np.ndarray, n_head: int) -> np.ndarray:
    """convert_hf_to_gguf.py LlamaModel.permute: interleaves the two rotary halves of each head."""
    return w.reshape(n_head, 2, w.shape[0] // n_head // 2, *w.shape[1:]).swapaxes(1, 2).reshape(w.shape)


def _add(writer: gguf.GGUFWriter, name: str, data: np.ndarray, qtype) -> None:
    if data.ndim == 1 or qtype == QT.F32:  # llama.cpp keeps 1-D tensors (norms, biases) in F32
        writer.add_tensor(name, data.astype(np.float32))
    elif qtype == QT.F16:
        writer.add_tensor(name, data.astype(np.float16))
    else:
        q = gguf.quants.quantize(data.astype(np.float32), qtype)
        writer.add_tensor(name, q, raw_shape=q.shape, raw_dtype=qtype)


def write_gguf(model, path: Path, qtype=QT.F32, tokenizer=None) -> None:
    """Writes a transformers LlamaForCausalLM, Qwen2ForCausalLM, Qwen3ForCausalLM or Gemma3ForCausalLM
    as llama.cpp would convert it;
    `tokenizer(writer)`, when given, writes the tokenizer.* metadata (gemma3 otherwise gets a
    placeholder token list, which gives it its vocab_size)."""
    cfg = model.config
    gemma = cfg.model_type == "gemma3_text"
    arch = {"gemma3_text": gguf.MODEL_ARCH.GEMMA3, "llama": gguf.MODEL_ARCH.LLAMA, "qwen2": gguf.MODEL_ARCH.QWEN2,
            "qwen3": gguf.MODEL_ARCH.QWEN3}[cfg.model_type]
    arch_name = gguf.MODEL_ARCH_NAMES[arch]
    permute = arch == gguf.MODEL_ARCH.LLAMA  # LlamaModel.permute; Qwen2Model / Qwen3Model keep the rows
    head_dim = getattr(cfg, "head_dim", None) or cfg.hidden_size // cfg.num_attention_heads
    w = gguf.GGUFWriter(str(path), arch_name)
    w.add_name(f"tiny-{arch_name}")
    w.add_context_length(cfg.max_position_embeddings)
    w.add_embedding_length(cfg.hidden_size)
    w.add_block_count(cfg.num_hidden_layers)
    w.add_feed_forward_length(cfg.intermediate_size)
    w.add_head_count(cfg.num_attention_heads)
    w.add_head_count_kv(cfg.num_key_value_heads)
    w.add_layer_norm_rms_eps(cfg.rms_norm_eps)
    if gemma:  # Gemma3Model.set_gguf_parameters
        w.add_key_length(head_dim)
        w.add_value_length(head_dim)
        w.add_rope_freq_base(cfg.rope_parameters["full_attention"]["rope_theta"])
        w.add_sliding_window(cfg.sliding_window)
        if tokenizer is None:
            w.add_token_list([f"<t{i}>" for i in range(cfg.vocab_size)])  # vocab_size comes from here
    else:  # LlamaModel / Qwen2Model / Qwen3Model.set_gguf_parameters (TextModel's: key_length for qwen3)
        w.add_vocab_size(cfg.vocab_size)
        w.add_rope_dimension_count(head_dim)
        w.add_rope_freq_base(cfg.rope_parameters["rope_theta"])
        if arch == gguf.MODEL_ARCH.QWEN3:
            w.add_key_length(head_dim)
            w.add_value_length(head_dim)
    w.add_file_type(int(qtype))
    if tokenizer is not None:
        tokenizer(w)

    names = gguf.get_tensor_name_map(arch, cfg.num_hidden_layers)
    for hf_name, t in model.state_dict().items():
        if hf_name == "lm_head.weight" and cfg.tie_word_embeddings:
            continue
        data = t.detach().to(torch.float32).numpy()
        if gemma and hf_name.endswith("norm.weight"):
            data = data + 1  # Gemma3Model.modify_tensors: norm_shift
        if permute and hf_name.endswith(("q_proj.weight", "q_proj.bias")):
            data = llama_permute(data, cfg.num_attention_heads)
        if permute and hf_name.endswith(("k_proj.weight", "k_proj.bias")):
            data = llama_permute(data, cfg.num_key_value_heads)
        stem, suffix = hf_name.rsplit(".", 1)
        gguf_name = names.get_name(stem)
        assert gguf_name is not None, f"no GGUF name for {hf_name}"
        _add(w, f"{gguf_name}.{suffix}", data, qtype)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


# --- tokenizers and onnxruntime-genai ---------------------------------------------------------------
# Prompts for tokenizer comparisons: ASCII, unicode, digits, whitespace runs, code, special tokens.
TOKENIZER_CORPUS = [
    "Hello world",
    "The quick brown fox",
    "  leading spaces and  double  spaces",
    "tabs\tand\nnewlines\n\n\nend",
    "digits 1234567890 3.14159 -42",
    "unicode: café naïve 日本語 中文 😀 🚀 Ελληνικά русский",
    "code: def f(x):\n    return x**2  # square\n",
    "<|im_start|>user\nhi<|im_end|>",
    "<bos><start_of_turn>user\nhi<end_of_turn>",
    "<think>reasoning</think> answer",
    "",
    " ",
    "a",
    "trailing space ",
    "UPPER lower MiXeD's we'll I'd",
    "\u00a0nbsp\u3000ideographic zero\u200bwidth",
]


def genai_tokenizer(package: Path):
    """(og.Model, og.Tokenizer) of a package as onnxruntime-genai loads it. genai's encode adds no
    special tokens unless asked; transformers' adds those of its post-processor (Gemma's <bos>)."""
    import onnxruntime_genai as og

    model = og.Model(str(package))
    tokenizer = og.Tokenizer(model)
    tokenizer.update_options(add_special_tokens="true")
    return model, tokenizer


def genai_greedy_text(package: Path, prompt: str, new_tokens: int) -> tuple[list[int], list[int]]:
    """onnxruntime-genai alone on the package as written: its tokenizer's ids of `prompt`, and the
    tokens its greedy search generates after them (at most new_tokens, fewer at an eos)."""
    import onnxruntime_genai as og

    model, tokenizer = genai_tokenizer(package)
    ids = [int(t) for t in tokenizer.encode(prompt)]
    params = og.GeneratorParams(model)
    params.set_search_options(max_length=len(ids) + new_tokens, do_sample=False)
    generator = og.Generator(model, params)
    generator.append_tokens(np.asarray(ids, np.int32))
    while not generator.is_done():
        generator.generate_next_token()
    return ids, [int(t) for t in generator.get_sequence(0)][len(ids):]
