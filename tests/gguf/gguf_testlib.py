"""Shared by tests/gguf: the mobius-gguf-dump tool, and writing a transformers model as a GGUF file
the way llama.cpp's convert_hf_to_gguf.py does (LlamaModel: Q/K rows permuted; Gemma3Model: every
*norm.weight stored as 1 + w), with tensor names from the gguf package's own TensorNameMap."""

from __future__ import annotations

import copy
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


def quantize_q6_k(x: np.ndarray) -> np.ndarray:
    """Q6_K blocks of the rows of `x` [rows, k], k a multiple of 256 (the gguf package cannot
    quantize K-quants): per 16-element sub-block the scale max|x| / 31, as an int8 multiple of the
    super-block's fp16 d = max scale / 127; q = round(x / (d * scale)) + 32 in 0..63. The layout
    of ggml-quants.c block_q6_K: ql[128] (low nibbles), qh[64] (high 2 bits), int8 scales[16], d;
    element e = 128 h + r has its low bits in ql[64 h + r % 64] (high nibble when r >= 64), its high
    bits in qh[32 h + r % 32] at bit 2 (r // 32). Not llama.cpp's quantizer (no error search):
    valid blocks, which is what reading them needs."""
    x = np.asarray(x, np.float32)
    rows, k = x.shape
    b = x.reshape(-1, 16, 16)
    sub = np.abs(b).max(-1) / 31.0
    d = (sub.max(-1) / 127.0).astype(np.float16)
    df = d.astype(np.float32)[:, None]
    sc = np.rint(np.divide(sub, df, where=df > 0, out=np.zeros_like(sub))).clip(-128, 127).astype(np.int8)
    ds = (df * sc.astype(np.float32))[..., None]
    q = (np.rint(np.divide(b, ds, where=ds != 0, out=np.zeros_like(b))) + 32).clip(0, 63).astype(np.uint8)
    lo, hi = (q & 0x0F).reshape(-1, 2, 128), (q >> 4).reshape(-1, 2, 128)
    ql = (lo[:, :, :64] | lo[:, :, 64:] << 4).reshape(-1, 128)
    qh = (hi[:, :, 0:32] | hi[:, :, 32:64] << 2 | hi[:, :, 64:96] << 4 | hi[:, :, 96:] << 6).reshape(-1, 64)
    blocks = np.concatenate([ql, qh, sc.view(np.uint8), d.reshape(-1, 1).view(np.uint8)], axis=1)
    return blocks.reshape(rows, k // 256 * 210)


def _add(writer: gguf.GGUFWriter, name: str, data: np.ndarray, qtype) -> None:
    # llama.cpp keeps 1-D tensors (norms, biases) and rows that are not whole blocks in F32
    if data.ndim == 1 or qtype == QT.F32 or data.shape[-1] % gguf.GGML_QUANT_SIZES[qtype][0]:
        writer.add_tensor(name, data.astype(np.float32))
    elif qtype == QT.F16:
        writer.add_tensor(name, data.astype(np.float16))
    else:
        flat = data.astype(np.float32)
        q = (quantize_q6_k(flat.reshape(-1, flat.shape[-1])).reshape(*flat.shape[:-1], -1) if qtype == QT.Q6_K
             else gguf.quants.quantize(flat, qtype))
        writer.add_tensor(name, q, raw_shape=q.shape, raw_dtype=qtype)


# model_type -> (gguf arch, eps key: "rms" / "ln", *norm.weight stored as 1 + w, LlamaModel.permute,
# placeholder token list: the converter writes no <arch>.vocab_size, so the vocabulary size is the
# token list's length)
ARCHS = {
    "llama": (gguf.MODEL_ARCH.LLAMA, "rms", False, True, False),
    "qwen2": (gguf.MODEL_ARCH.QWEN2, "rms", False, False, False),
    "qwen3": (gguf.MODEL_ARCH.QWEN3, "rms", False, False, False),
    "gemma3_text": (gguf.MODEL_ARCH.GEMMA3, "rms", True, False, True),
    "gemma2": (gguf.MODEL_ARCH.GEMMA2, "rms", True, False, True),
    "phi3": (gguf.MODEL_ARCH.PHI3, "rms", False, False, False),
    "starcoder2": (gguf.MODEL_ARCH.STARCODER2, "ln", False, False, True),
    "stablelm": (gguf.MODEL_ARCH.STABLELM, "ln", False, False, True),
    "nemotron": (gguf.MODEL_ARCH.NEMOTRON, "ln", True, False, False),
    "qwen2_moe": (gguf.MODEL_ARCH.QWEN2MOE, "rms", False, False, False),
    "qwen3_moe": (gguf.MODEL_ARCH.QWEN3MOE, "rms", False, False, False),
    # llama.cpp converts Mistral as llama; general.name "mistral" makes transformers read it as Mistral
    "mistral": (gguf.MODEL_ARCH.LLAMA, "rms", False, True, False),
    "minimax_m2": (gguf.MODEL_ARCH.MINIMAXM2, "rms", False, False, False),
}


def _rope(cfg) -> tuple[float, float]:
    """(rope_theta, partial_rotary_factor) of a config's rope_parameters (Gemma 3: the global layers')."""
    rp = cfg.rope_parameters
    rp = rp.get("full_attention", rp)
    return rp["rope_theta"], rp.get("partial_rotary_factor", 1.0)


def _add_special_ids(w: gguf.GGUFWriter, cfg) -> None:
    """tokenizer.ggml.{bos,eos,padding}_token_id from the config's ids (the converter takes them
    from the tokenizer)."""
    for key, add in (("bos_token_id", w.add_bos_token_id), ("eos_token_id", w.add_eos_token_id),
                     ("pad_token_id", w.add_pad_token_id)):
        if getattr(cfg, key, None) is not None:
            add(getattr(cfg, key))


def _write_tensors(w: gguf.GGUFWriter, model, arch, qtype, transform) -> None:
    """Every state-dict tensor under its TensorNameMap name (a parameter such as mamba's A_log by its
    whole name, a module's weight / bias by its stem plus the suffix), after transform(hf_name, data)."""
    cfg = model.config
    names = gguf.get_tensor_name_map(arch, cfg.num_hidden_layers)
    for hf_name, t in model.state_dict().items():
        if hf_name == "lm_head.weight" and cfg.tie_word_embeddings:
            continue
        data = transform(hf_name, t.detach().to(torch.float32).numpy())
        if hf_name.endswith("mlp.experts.gate_up_proj"):  # [E, 2 * ff, hidden]: gate | up halves
            prefix = names.get_name(hf_name.replace("experts.gate_up_proj", "experts.down_proj")).rsplit(".", 1)[0]
            half = data.shape[1] // 2
            _add(w, f"{prefix}.ffn_gate_exps.weight", np.ascontiguousarray(data[:, :half]), qtype)
            _add(w, f"{prefix}.ffn_up_exps.weight", np.ascontiguousarray(data[:, half:]), qtype)
            continue
        if hf_name.endswith("mlp.experts.down_proj"):  # [E, hidden, ff]
            prefix = names.get_name(hf_name).rsplit(".", 1)[0]
            _add(w, f"{prefix}.ffn_down_exps.weight", data, qtype)
            continue
        if hf_name.endswith("shared_expert_gate.weight"):  # [1, hidden] stored as [hidden]
            data = data[0]
        if hf_name.endswith("mlp.e_score_correction_bias"):  # MiniMaxM2Model: the router's score bias
            prefix = names.get_name(hf_name.replace("e_score_correction_bias", "gate")).rsplit(".", 1)[0]
            _add(w, f"{prefix}.exp_probs_b.bias", data, qtype)
            continue
        stem, suffix = hf_name.rsplit(".", 1)
        if suffix in ("weight", "bias"):
            # BloomModel.modify_tensors maps the names without their "transformer." prefix
            gguf_name = names.get_name(stem) or names.get_name(stem.removeprefix("transformer."))
            gguf_name = gguf_name and f"{gguf_name}.{suffix}"
        else:
            gguf_name = names.get_name(hf_name)
        assert gguf_name is not None, f"no GGUF name for {hf_name}"
        _add(w, gguf_name, data, qtype)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


def write_mamba_gguf(model, path: Path, qtype=QT.F32) -> None:
    """A transformers MambaForCausalLM as convert_hf_to_gguf.py MambaModel writes it: mamba.ssm.*
    metadata, A_log stored as A = -exp(A_log), the conv1d weight [channels, 1, kernel] squeezed."""
    cfg = model.config
    w = gguf.GGUFWriter(str(path), "mamba")
    w.add_name("tiny-mamba")
    w.add_context_length(2 ** 20)  # MambaModel: no limit
    w.add_embedding_length(cfg.hidden_size)
    w.add_feed_forward_length(0)
    w.add_head_count(0)
    w.add_block_count(cfg.num_hidden_layers)
    w.add_ssm_conv_kernel(cfg.conv_kernel)
    w.add_ssm_inner_size(cfg.intermediate_size)
    w.add_ssm_state_size(cfg.state_size)
    w.add_ssm_time_step_rank(cfg.time_step_rank)
    w.add_layer_norm_rms_eps(cfg.layer_norm_epsilon)
    w.add_vocab_size(cfg.vocab_size)
    _add_special_ids(w, cfg)
    w.add_file_type(int(qtype))

    def transform(name, data):
        if name.endswith("A_log"):
            return -np.exp(data)
        if name.endswith("conv1d.weight"):
            return data.squeeze(1)
        return data

    _write_tensors(w, model, gguf.MODEL_ARCH.MAMBA, qtype, transform)


def write_gpt2_gguf(model, path: Path, qtype=QT.F32) -> None:
    """A transformers GPT2LMHeadModel as convert_hf_to_gguf.py GPT2Model writes it: gpt2.* metadata
    (feed_forward_length 4 * n_embd), the Conv1D weights transposed to [out, in], a placeholder
    token list (the vocabulary size)."""
    cfg = model.config
    w = gguf.GGUFWriter(str(path), "gpt2")
    w.add_name("tiny-gpt2")
    w.add_block_count(cfg.n_layer)
    w.add_context_length(cfg.n_positions)
    w.add_embedding_length(cfg.n_embd)
    w.add_feed_forward_length(4 * cfg.n_embd)
    w.add_head_count(cfg.n_head)
    w.add_layer_norm_eps(cfg.layer_norm_epsilon)
    w.add_token_list([f"<t{i}>" for i in range(cfg.vocab_size)])
    _add_special_ids(w, cfg)
    w.add_file_type(int(qtype))
    conv1d = (".attn.c_attn.weight", ".attn.c_proj.weight", ".mlp.c_fc.weight", ".mlp.c_proj.weight")
    _write_tensors(w, model, gguf.MODEL_ARCH.GPT2, qtype,
                   lambda name, data: np.ascontiguousarray(data.T) if name.endswith(conv1d) else data)


def write_bloom_gguf(model, path: Path, qtype=QT.F32) -> None:
    """A transformers BloomForCausalLM as convert_hf_to_gguf.py BloomModel writes it: bloom.*
    metadata, the fused query_key_value rows (and bias) reordered from per-head [q, k, v] to
    [q; k; v] of all heads, a placeholder token list."""
    cfg = model.config
    heads, embd = cfg.n_head, cfg.hidden_size
    w = gguf.GGUFWriter(str(path), "bloom")
    w.add_name("tiny-bloom")
    w.add_context_length(embd)  # BloomModel: seq_length, else n_embed
    w.add_embedding_length(embd)
    w.add_feed_forward_length(4 * embd)
    w.add_block_count(cfg.n_layer)
    w.add_head_count(heads)
    w.add_head_count_kv(heads)
    w.add_layer_norm_eps(cfg.layer_norm_epsilon)
    w.add_token_list([f"<t{i}>" for i in range(cfg.vocab_size)])
    w.add_file_type(int(qtype))

    def transform(name, data):
        if "query_key_value" not in name:
            return data
        qkv = data.reshape(heads, 3, embd // heads, *data.shape[1:])
        return np.ascontiguousarray(np.concatenate([qkv[:, j].reshape(-1, *data.shape[1:]) for j in range(3)]))

    _write_tensors(w, model, gguf.MODEL_ARCH.BLOOM, qtype, transform)


def write_falcon_gguf(model, path: Path, qtype=QT.F32) -> None:
    """A transformers FalconForCausalLM as convert_hf_to_gguf.py FalconModel writes it: falcon.*
    metadata (context length 2048, feed_forward_length 4 * hidden whatever ffn_hidden_size is,
    head_count_kv num_kv_heads else 1), query_key_value regrouped from [queries | key | value] per
    KV group to [all queries; all keys; all values], a placeholder token list."""
    cfg = model.config
    heads, hidden = cfg.num_attention_heads, cfg.hidden_size
    kv = cfg.num_kv_heads if cfg.new_decoder_architecture else 1
    w = gguf.GGUFWriter(str(path), "falcon")
    w.add_name("tiny-falcon")
    w.add_context_length(2048)
    w.add_tensor_data_layout("jploski")
    w.add_embedding_length(hidden)
    w.add_feed_forward_length(4 * hidden)
    w.add_block_count(cfg.num_hidden_layers)
    w.add_head_count(heads)
    w.add_head_count_kv(kv)
    w.add_layer_norm_eps(cfg.layer_norm_epsilon)
    w.add_token_list([f"<t{i}>" for i in range(cfg.vocab_size)])
    _add_special_ids(w, cfg)
    w.add_file_type(int(qtype))

    def transform(name, data):
        if "query_key_value" not in name:
            return data
        qkv = data.reshape(kv, heads // kv + 2, hidden // heads, hidden)
        q = qkv[:, :-2].reshape(-1, hidden)
        return np.ascontiguousarray(np.concatenate([q, qkv[:, -2].reshape(-1, hidden), qkv[:, -1].reshape(-1, hidden)]))

    _write_tensors(w, model, gguf.MODEL_ARCH.FALCON, qtype, transform)


def write_lfm2_gguf(model, path: Path, qtype=QT.F32) -> None:
    """A transformers Lfm2ForCausalLM as convert_hf_to_gguf.py LFM2Model writes it: lfm2.* metadata,
    attention.head_count_kv per layer (0 for a conv layer), feed_forward_length the MLP's width
    (w1's rows, after block_auto_adjust_ff_dim), shortconv.l_cache, the conv weight [hidden, 1, L]
    squeezed to [hidden, L], a placeholder token list."""
    cfg = model.config
    w = gguf.GGUFWriter(str(path), "lfm2")
    w.add_name("tiny-lfm2")
    w.add_context_length(cfg.max_position_embeddings)
    w.add_embedding_length(cfg.hidden_size)
    w.add_feed_forward_length(model.model.layers[0].feed_forward.w1.weight.shape[0])
    w.add_block_count(cfg.num_hidden_layers)
    w.add_head_count(cfg.num_attention_heads)
    w.add_head_count_kv([cfg.num_key_value_heads if t == "full_attention" else 0 for t in cfg.layer_types])
    w.add_rope_freq_base(cfg.rope_parameters["rope_theta"])
    w.add_layer_norm_rms_eps(cfg.norm_eps)
    w.add_shortconv_l_cache(cfg.conv_L_cache)
    w.add_token_list([f"<t{i}>" for i in range(cfg.vocab_size)])  # transformers' loader reads the vocabulary size there
    _add_special_ids(w, cfg)
    w.add_file_type(int(qtype))
    _write_tensors(w, model, gguf.MODEL_ARCH.LFM2, qtype,
                   lambda name, data: data.squeeze(1) if name.endswith("conv.conv.weight") else data)


def write_t5_gguf(model, path: Path, qtype=QT.F32, name: str = "tiny-t5", arch: str = "t5") -> None:
    """A transformers T5 / UMT5 ForConditionalGeneration as convert_hf_to_gguf.py T5Model writes it:
    t5.* metadata (both layer norm epsilons, decoder_block_count, relative buckets, decoder start
    id), shared.weight as token_embd (encoder / decoder.embed_tokens skipped), no tensor transform,
    a placeholder token list. general.name `name` (transformers reads a name containing "umt5" as
    UMT5). arch "t5encoder": a T5EncoderModel as T5EncoderModel (the converter class) writes it,
    without the decoder's keys."""
    cfg = model.config
    encoder_only = arch == "t5encoder"
    w = gguf.GGUFWriter(str(path), arch)
    w.add_name(name)
    w.add_context_length(512)  # T5Model: n_positions, else 512
    w.add_embedding_length(cfg.d_model)
    w.add_feed_forward_length(cfg.d_ff)
    w.add_block_count(cfg.num_layers)
    if not encoder_only:
        w.add_decoder_block_count(cfg.num_decoder_layers)
    w.add_head_count(cfg.num_heads)
    w.add_key_length(cfg.d_kv)
    w.add_value_length(cfg.d_kv)
    w.add_layer_norm_eps(cfg.layer_norm_epsilon)
    w.add_relative_attn_buckets_count(cfg.relative_attention_num_buckets)
    w.add_layer_norm_rms_eps(cfg.layer_norm_epsilon)
    if not encoder_only:
        w.add_decoder_start_token_id(cfg.decoder_start_token_id)
    w.add_token_list([f"<t{i}>" for i in range(cfg.vocab_size)])
    _add_special_ids(w, cfg)
    w.add_file_type(int(qtype))
    names = gguf.get_tensor_name_map(gguf.MODEL_ARCH.T5ENCODER if encoder_only else gguf.MODEL_ARCH.T5,
                                     max(cfg.num_layers, cfg.num_decoder_layers))
    for hf_name, t in model.state_dict().items():
        if hf_name in ("encoder.embed_tokens.weight", "decoder.embed_tokens.weight"):
            continue
        if hf_name == "lm_head.weight" and getattr(cfg, "scale_decoder_outputs", True):
            continue  # tied: not saved
        stem, suffix = hf_name.rsplit(".", 1)
        _add(w, f"{names.get_name(stem)}.{suffix}", t.detach().to(torch.float32).numpy(), qtype)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


def stored_values(data: np.ndarray, qtype) -> np.ndarray:
    """What a tensor written by _add as `qtype` reads back as (float32): the values a quantized
    file holds, to compare a build of it with the model those values make."""
    if data.ndim == 1 or qtype == QT.F32 or data.shape[-1] % gguf.GGML_QUANT_SIZES[qtype][0]:
        return data.astype(np.float32)
    if qtype == QT.F16:
        return data.astype(np.float16).astype(np.float32)
    flat = data.astype(np.float32)
    q = (quantize_q6_k(flat.reshape(-1, flat.shape[-1])).reshape(*flat.shape[:-1], -1) if qtype == QT.Q6_K
         else gguf.quants.quantize(flat, qtype))
    return gguf.quants.dequantize(q, qtype).reshape(data.shape)


def _gpt_oss_qtype(hf_name: str, qtype, experts_qtype):
    """The ggml type convert_hf_to_gguf.py gives a GPT-OSS tensor (ModelBase.prepare_tensors): 1-D
    tensors, biases and the router (ffn_gate_inp) F32, the experts' matrices `experts_qtype` (MXFP4
    in llama.cpp's releases), the other matrices `qtype`."""
    leaf = hf_name.rpartition(".")[2]
    if ".mlp.experts." in hf_name:
        return experts_qtype if leaf in ("gate_up_proj", "down_proj") else QT.F32
    return QT.F32 if leaf != "weight" or ".mlp.router." in hf_name else qtype


def gpt_oss_tensors(model, qtype=QT.F32, experts_qtype=None, fuse_gate_up=False):
    """(GGUF name, float32 data, ggml type) of a transformers GptOssForCausalLM as convert_hf_to_gguf.py
    GptOssModel.modify_tensors writes a checkpoint that is not in MXFP4: gate_up_proj [E, hidden, 2I]
    transposed to [E, 2I, hidden] and split into its even rows (ffn_gate_exps) and odd rows
    (ffn_up_exps), or, with --fuse-gate-up-exps, the two concatenated (ffn_gate_up_exps [E, 2I,
    hidden]); gate_up_proj_bias split (or concatenated) the same way; down_proj transposed to [E,
    hidden, I]; self_attn.sinks as attn_sinks.weight; the types of _gpt_oss_qtype."""
    cfg = model.config
    names = gguf.get_tensor_name_map(gguf.MODEL_ARCH.GPT_OSS, cfg.num_hidden_layers)
    experts_qtype = experts_qtype or qtype
    out = []
    for hf_name, t in model.state_dict().items():
        if hf_name == "lm_head.weight" and cfg.tie_word_embeddings:
            continue
        data = t.detach().to(torch.float32).numpy()
        q = _gpt_oss_qtype(hf_name, qtype, experts_qtype)
        stem, _, leaf = hf_name.rpartition(".")
        if ".mlp.experts." in hf_name:
            block = names.get_name(f"{stem}.down_proj").rsplit(".", 1)[0]  # blk.N
            weight = leaf in ("gate_up_proj", "down_proj")
            suffix = "weight" if weight else "bias"
            if weight:
                data = data.swapaxes(-1, -2)
            if leaf.startswith("down_proj"):
                out.append((f"{block}.ffn_down_exps.{suffix}", np.ascontiguousarray(data), q))
                continue
            gate, up = (data[:, ::2], data[:, 1::2]) if weight else (data[..., ::2], data[..., 1::2])
            parts = ([("ffn_gate_up_exps", np.concatenate([gate, up], axis=1))] if fuse_gate_up
                     else [("ffn_gate_exps", gate), ("ffn_up_exps", up)])
            out += [(f"{block}.{role}.{suffix}", np.ascontiguousarray(d), q) for role, d in parts]
        elif leaf == "sinks":
            out.append((f"{names.get_name(hf_name)}.weight", data, q))
        else:
            out.append((f"{names.get_name(stem)}.{leaf}", data, q))
    return out


def gpt_oss_stored_model(model, qtype=QT.F32, experts_qtype=None):
    """A copy of the GptOssForCausalLM `model` holding the values that its GGUF file
    (gpt_oss_tensors) reads back as: each tensor through stored_values in the layout the file holds
    it (the experts' matrices transposed; quantization blocks run along the stored rows)."""
    ref = copy.deepcopy(model)
    with torch.no_grad():
        for name, p in ref.state_dict().items():
            q = _gpt_oss_qtype(name, qtype, experts_qtype or qtype)
            x = p.numpy()
            if name.endswith(("experts.gate_up_proj", "experts.down_proj")):
                v = stored_values(x.swapaxes(-1, -2), q).swapaxes(-1, -2)
            else:
                v = stored_values(x, q)
            p.copy_(torch.from_numpy(np.ascontiguousarray(v)))
    return ref


def write_gpt_oss_gguf(model, path: Path, qtype=QT.F32, experts_qtype=None, fuse_gate_up=False,
                       yarn_betas=True, skip=()) -> None:
    """A transformers GptOssForCausalLM as convert_hf_to_gguf.py GptOssModel writes it (tensors:
    gpt_oss_tensors): TextModel.set_gguf_parameters' gpt-oss.* keys (key / value length the head
    size, rope.freq_base, the YaRN scaling: type, factor, original context and, as the converter
    writes them since it reads rope_parameters, yarn_beta_fast / yarn_beta_slow: absent with
    yarn_betas False, as in files converted before), attention.sliding_window and
    expert_feed_forward_length (GptOssModel), a placeholder token list; the tensors named in `skip`
    left out (a broken file)."""
    cfg = model.config
    w = gguf.GGUFWriter(str(path), "gpt-oss")
    w.add_name("tiny-gpt-oss")
    w.add_context_length(cfg.max_position_embeddings)
    w.add_embedding_length(cfg.hidden_size)
    w.add_block_count(cfg.num_hidden_layers)
    w.add_feed_forward_length(cfg.intermediate_size)
    w.add_head_count(cfg.num_attention_heads)
    w.add_head_count_kv(cfg.num_key_value_heads)
    w.add_key_length(cfg.head_dim)
    w.add_value_length(cfg.head_dim)
    w.add_layer_norm_rms_eps(cfg.rms_norm_eps)
    rp = cfg.rope_parameters
    w.add_rope_freq_base(rp["rope_theta"])
    if rp["rope_type"] == "yarn":
        w.add_rope_scaling_type(gguf.RopeScalingType.YARN)
        w.add_rope_scaling_factor(rp["factor"])
        w.add_rope_scaling_orig_ctx_len(rp["original_max_position_embeddings"])
        if yarn_betas:
            w.add_rope_scaling_yarn_beta_fast(rp["beta_fast"])
            w.add_rope_scaling_yarn_beta_slow(rp["beta_slow"])
    w.add_expert_count(cfg.num_local_experts)
    w.add_expert_used_count(cfg.num_experts_per_tok)
    w.add_sliding_window(cfg.sliding_window)
    w.add_expert_feed_forward_length(cfg.intermediate_size)
    w.add_token_list([f"<t{i}>" for i in range(cfg.vocab_size)])
    _add_special_ids(w, cfg)
    w.add_file_type(int(qtype))
    for name, data, q in gpt_oss_tensors(model, qtype, experts_qtype, fuse_gate_up):
        if name not in skip:
            _add(w, name, data, q)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


def stored_model(model, qtype=QT.F32):
    """A copy of `model` holding the values its GGUF file reads back as, for a type whose
    converter writes every tensor as the model holds it (Gemma 4): each through stored_values."""
    ref = copy.deepcopy(model)
    with torch.no_grad():
        for p in ref.state_dict().values():
            p.copy_(torch.from_numpy(np.ascontiguousarray(stored_values(p.numpy(), qtype))))
    return ref


def write_gemma4_gguf(model, path: Path, qtype=QT.F32) -> None:
    """A transformers Gemma4ForCausalLM (gemma4_text) as convert_hf_to_gguf.py Gemma4Model writes it
    (over Gemma3Model and TextModel): gemma4.* keys (key / value length the full layers' head size,
    *_swa the sliding layers', rope.freq_base / rope.freq_base_swa, rope.dimension_count(_swa),
    attention.sliding_window_pattern a bool per layer, shared_kv_layers, embedding_length_per_layer_input,
    head_count_kv per layer with num_global_key_value_heads, feed_forward_length per layer with
    use_double_wide_mlp, final_logit_softcapping when set), rope_freqs.weight (the full layers'
    proportional rope: 1 for each rotating frequency, 1e30 for the others), the norms as they are
    (Gemma4Model.norm_shift 0), layer_scalar as layer_output_scale.weight, a placeholder token list.
    The original config.json's global_head_dim and num_global_key_value_heads, which the converter
    reads, are the full layers' per_layer_config entry of the saved config."""
    cfg = model.config
    d = cfg.to_dict()  # the config as saved (Gemma4TextConfig's per-layer attributes are not global)
    first_full, plc = d["layer_types"].index("full_attention"), d["per_layer_config"]
    full = plc.get(first_full, plc.get(str(first_full)))
    global_dim, global_kv = full["head_dim"], full.get("num_key_value_heads")
    layers, shared, kv, head_dim = d["num_hidden_layers"], d["num_kv_shared_layers"], d["num_key_value_heads"], d["head_dim"]
    swa = [t == "sliding_attention" for t in d["layer_types"]]
    rope_full, rope_swa = d["rope_parameters"]["full_attention"], d["rope_parameters"]["sliding_attention"]
    w = gguf.GGUFWriter(str(path), "gemma4")
    w.add_name("tiny-gemma4")
    w.add_context_length(cfg.max_position_embeddings)
    w.add_embedding_length(cfg.hidden_size)
    w.add_block_count(layers)
    ff = cfg.intermediate_size
    w.add_feed_forward_length([ff if i < layers - shared else 2 * ff for i in range(layers)]
                              if cfg.use_double_wide_mlp else ff)
    w.add_head_count(cfg.num_attention_heads)
    w.add_head_count_kv([kv if s else global_kv for s in swa] if global_kv is not None else kv)
    w.add_layer_norm_rms_eps(cfg.rms_norm_eps)
    w.add_key_length(global_dim)
    w.add_value_length(global_dim)
    w.add_key_length_swa(head_dim)
    w.add_value_length_swa(head_dim)
    w.add_rope_freq_base(rope_full["rope_theta"])
    w.add_rope_freq_base_swa(rope_swa["rope_theta"])
    w.add_rope_dimension_count(global_dim)
    w.add_rope_dimension_count_swa(head_dim)
    if cfg.final_logit_softcapping:
        w.add_final_logit_softcapping(cfg.final_logit_softcapping)
    w.add_sliding_window(cfg.sliding_window)
    w.add_shared_kv_layers(shared)
    w.add_embedding_length_per_layer_input(cfg.hidden_size_per_layer_input or 0)
    w.add_sliding_window_pattern(swa)
    w.add_token_list([f"<t{i}>" for i in range(cfg.vocab_size)])
    _add_special_ids(w, cfg)
    w.add_file_type(int(qtype))
    rotating = int(global_dim * rope_full["partial_rotary_factor"] / 2)
    w.add_tensor("rope_freqs.weight", np.array([1.0] * rotating + [1e30] * (global_dim // 2 - rotating), np.float32))
    names = gguf.get_tensor_name_map(gguf.MODEL_ARCH.GEMMA4, layers)
    for hf_name, t in model.state_dict().items():
        if hf_name == "lm_head.weight" and cfg.tie_word_embeddings:
            continue
        stem, _, leaf = hf_name.rpartition(".")
        gguf_name = f"{names.get_name(stem)}.{leaf}" if leaf in ("weight", "bias") else f"{names.get_name(hf_name)}.weight"
        _add(w, gguf_name, t.detach().to(torch.float32).numpy(), qtype)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


def write_gguf(model, path: Path, qtype=QT.F32, tokenizer=None) -> None:
    """Writes a transformers causal LM of a type in ARCHS as llama.cpp's convert_hf_to_gguf.py
    would convert it (its <arch>.* metadata and tensor transforms, gguf TensorNameMap names);
    `tokenizer(writer)`, when given, writes the tokenizer.* metadata (the types whose converter
    writes no vocab_size otherwise get a placeholder token list, which gives it)."""
    cfg = model.config
    arch, eps, norm_shift, permute, token_list = ARCHS[cfg.model_type]
    arch_name = gguf.MODEL_ARCH_NAMES[arch]
    head_dim = getattr(cfg, "head_dim", None) or cfg.hidden_size // cfg.num_attention_heads
    theta, partial = _rope(cfg)
    w = gguf.GGUFWriter(str(path), arch_name)
    w.add_name("mistral" if cfg.model_type == "mistral" else f"tiny-{arch_name}")
    w.add_context_length(cfg.max_position_embeddings)
    w.add_embedding_length(cfg.hidden_size)
    w.add_block_count(cfg.num_hidden_layers)
    w.add_feed_forward_length(cfg.intermediate_size)
    w.add_head_count(cfg.num_attention_heads)
    w.add_head_count_kv(cfg.num_key_value_heads)
    if eps == "rms":
        w.add_layer_norm_rms_eps(cfg.rms_norm_eps)
    else:
        w.add_layer_norm_eps(next(getattr(cfg, k) for k in ("norm_epsilon", "layer_norm_eps", "norm_eps")
                                  if hasattr(cfg, k)))
    w.add_rope_freq_base(theta)
    if arch in (gguf.MODEL_ARCH.GEMMA3, gguf.MODEL_ARCH.GEMMA2, gguf.MODEL_ARCH.QWEN3, gguf.MODEL_ARCH.QWEN3MOE,
                gguf.MODEL_ARCH.MINIMAXM2):
        w.add_key_length(head_dim)
        w.add_value_length(head_dim)
    if arch in (gguf.MODEL_ARCH.GEMMA3, gguf.MODEL_ARCH.GEMMA2):
        w.add_sliding_window(cfg.sliding_window)
    else:
        w.add_rope_dimension_count(int(head_dim * partial))
    if arch == gguf.MODEL_ARCH.GEMMA2:
        w.add_attn_logit_softcapping(cfg.attn_logit_softcapping)
        w.add_final_logit_softcapping(cfg.final_logit_softcapping)
    if hasattr(cfg, "num_experts"):  # Qwen2MoeModel / Qwen3MoeModel.set_gguf_parameters
        w.add_expert_count(cfg.num_experts)
        w.add_expert_used_count(cfg.num_experts_per_tok)
        w.add_expert_feed_forward_length(getattr(cfg, "moe_intermediate_size", cfg.intermediate_size))
        if hasattr(cfg, "shared_expert_intermediate_size"):
            w.add_expert_shared_feed_forward_length(cfg.shared_expert_intermediate_size)
    if arch == gguf.MODEL_ARCH.MINIMAXM2:  # MiniMaxM2Model: scoring_func "sigmoid"
        w.add_expert_gating_func(gguf.ExpertGatingFuncType.SIGMOID)
    if token_list and tokenizer is None:
        w.add_token_list([f"<t{i}>" for i in range(cfg.vocab_size)])
    elif not token_list:
        w.add_vocab_size(cfg.vocab_size)
    _add_special_ids(w, cfg)
    w.add_file_type(int(qtype))
    if tokenizer is not None:
        tokenizer(w)

    def transform(hf_name, data):
        if norm_shift and hf_name.endswith("norm.weight"):
            data = data + 1  # Gemma2Model / Gemma3Model / NemotronModel.modify_tensors
        if permute and hf_name.endswith(("q_proj.weight", "q_proj.bias")):
            data = llama_permute(data, cfg.num_attention_heads)
        if permute and hf_name.endswith(("k_proj.weight", "k_proj.bias")):
            data = llama_permute(data, cfg.num_key_value_heads)
        return data

    _write_tensors(w, model, arch, qtype, transform)


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


def assert_matches_transformers(package: Path, ref) -> None:
    """PACKAGE's decoder graph against `ref` (a transformers model, run as given): a padded batch
    prefill (H.prefill_batch) and one decode step on its cache, each within H.TOL."""
    lm = H.OnnxLM(H.graph_path(package, "model"), ref.config)
    ids, mask, pos = H.prefill_batch(ref.config.vocab_size)
    valid = mask.astype(bool)
    got, state = lm(ids, mask, pos)
    want, cache = H.hf_forward(ref, ids, mask, pos)
    assert H.max_abs(got[valid], want[valid]) <= H.TOL
    nxt = np.array([[3], [5]], np.int64)
    mask2 = np.concatenate([mask, np.ones((2, 1), np.int64)], axis=1)
    pos2 = pos[:, -1:] + 1
    assert H.max_abs(lm(nxt, mask2, pos2, state)[0], H.hf_forward(ref, nxt, mask2, pos2, cache)[0]) <= H.TOL
