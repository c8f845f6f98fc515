"""T3 parity harness: tiny random HF checkpoint -> `mobius build` -> onnxruntime vs transformers.

Shared by tests/parity and tests/cli. See docs in DESIGN.md section 5.
"""

from __future__ import annotations

import contextlib
import copy
import dataclasses
import functools
import importlib
import inspect
import json
import math
import os
import re
import shutil
import subprocess
import sys
import types
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import torch
import transformers
from transformers import AutoConfig, AutoModel, AutoModelForCausalLM, DynamicCache
from transformers.pytorch_utils import Conv1D

transformers.logging.set_verbosity_error()
transformers.utils.logging.disable_progress_bar()
torch.set_num_threads(1)  # the suite runs with `pytest -n 2` on 2 cores

REPO = Path(__file__).resolve().parents[2]
RESULTS_DIR = REPO / "build" / "parity-results"
ROWS_DIR = RESULTS_DIR / "rows"

TOL = 1e-4  # max |Δ| of float32 logits against the float64 reference; no per-model overrides
PREFILL_LEN = 48  # longer than every threshold below (windows 16, original max positions 24-32)
PAD = 7  # left padding of batch row 1
GEN_PROMPT = 20  # greedy prompt: shorter than the thresholds, so generation crosses them
GEN_NEW = 24

# ---------------------------------------------------------------------------------------------
# The parity rows live in one module per task (decoder_harness, with its rows per family in
# decoder_rows/; encoder_harness, seq2seq_harness, ...), each with its own reference call, inputs,
# runner and comparison; this module is their
# shared core. A decoder or encoder row's overrides are HF config kwargs. Using the old keys
# `rope_theta` / `rope_scaling` (or the top-level partial_rotary_factor, GPT-NeoX's rotary_pct /
# rotary_emb_base) means "write config.json in the pre-transformers-5 schema" (the rope keys are
# written verbatim, a key left out is absent from the file; Gemma3's rope_local_base_freq too).
# HARNESS_OPTIONS are not config kwargs (OPT's config has a real _remove_final_layer_norm):
#   _max_shard_size: save a sharded checkpoint (model.safetensors.index.json).
#   _attn_implementation: the reference's attention implementation instead of "eager", for a
#     model whose eager path in transformers computes something else than its default one (the
#     row says why).
#   _runtime="none": a model onnxruntime-genai cannot run (a value cache narrower than the key
#     cache, MLA with v_head_dim != qk head size): built with --runtime none; instead of the genai
#     generation, the row checks that the default build (--runtime ort-genai) refuses it.
#   _json: {key: value} written verbatim into config.json after saving (DROP removes the key),
#          for spellings of older configs that transformers still reads (the reference reloads them).
#   _config_json: the whole config.json (test_config_fidelity.py): the model is made from it as
#          transformers reads it (PreTrainedConfig.from_dict) and it is written verbatim.
#   _task: an encoder row of a head (encoder_harness.HEAD_CLASSES: fill-mask, text-classification,
#          ...): the checkpoint is that task's transformers class, the package built for it.
# ---------------------------------------------------------------------------------------------
HARNESS_OPTIONS = ("_max_shard_size", "_runtime", "_attn_implementation", "_json", "_config_json", "_task")
# Key/value heads of the KV cache where the config has no num_key_value_heads or one the model
# does not use (default: the config's num_key_value_heads, else num_attention_heads).
CACHE_KV_HEADS = {
    # GPTBigCodeConfig computes num_key_value_heads before num_attention_heads is applied
    "gpt_bigcode": lambda c: 1 if c.multi_query else c.num_attention_heads,
    "falcon": lambda c: (c.num_kv_heads if c.new_decoder_architecture
                         else 1 if c.multi_query else c.num_attention_heads),
}
DROP = "<drop>"  # in _json: remove the key from config.json


@dataclasses.dataclass(frozen=True)
class Row:
    """One parity row of a task module (decoder_harness: text-generation, encoder_harness:
    feature-extraction; the other tasks' modules have their own): the task, the model type, the
    variant's name (test id "<model_type>-<variant>") and its config overrides (AutoConfig kwargs
    over the module's base_kwargs, plus the HARNESS_OPTIONS above)."""
    task: str
    model_type: str
    variant: str
    config: dict


def _task_modules():
    import decoder_harness  # noqa: PLC0415 - it imports this module
    import encoder_harness  # noqa: PLC0415 - it imports this module
    return decoder_harness, encoder_harness


def rows() -> list[tuple[str, str, dict]]:
    """The text-generation rows (decoder_harness.ROWS) as (model_type, variant, overrides)."""
    return [(r.model_type, r.variant, r.config) for r in _task_modules()[0].ROWS]


def encoder_rows() -> list[tuple[str, str, dict]]:
    """The feature-extraction rows (encoder_harness.ROWS) as (model_type, variant, overrides)."""
    return [(r.model_type, r.variant, r.config) for r in _task_modules()[1].ROWS]


def all_types() -> set[str]:
    """Every model type with parity rows: decoders (decoder_harness), encoders (encoder_harness),
    encoder-decoders (seq2seq_harness), vision encoders (vision_harness), speech-to-text
    (speech_harness, moonshine_harness), speech encoders (audio_harness), vision-language models (vlm_harness)."""
    import audio_harness  # noqa: PLC0415 - it imports this module
    import moonshine_harness  # noqa: PLC0415 - it imports this module
    import seq2seq_harness  # noqa: PLC0415 - it imports this module
    import speech_harness  # noqa: PLC0415 - it imports this module
    import vision_harness  # noqa: PLC0415 - it imports this module
    import vlm_harness  # noqa: PLC0415 - it imports this module
    return ({mt for mt, _, _ in rows() + encoder_rows()} | seq2seq_harness.types() | vision_harness.types()
            | speech_harness.types() | audio_harness.types() | vlm_harness.types() | moonshine_harness.types())


def is_encoder(model_type: str) -> bool:
    return any(r.model_type == model_type for r in _task_modules()[1].ROWS)


def variant(model_type: str, name: str) -> dict:
    return next(ov for mt, n, ov in (encoder_rows() if is_encoder(model_type) else rows())
                if mt == model_type and n == name)


def versions() -> dict:
    return {"transformers": transformers.__version__, "torch": torch.__version__,
            "onnxruntime": ort.__version__}


# ---------------------------------------------------------------------------------------------
# The CLI
# ---------------------------------------------------------------------------------------------
def mobius_bin() -> Path:
    return Path(os.environ.get("MOBIUS_BIN", REPO / "build" / "mobius"))


def run_mobius(*args, timeout: int = 300, preexec_fn=None) -> subprocess.CompletedProcess:
    """`mobius ARGS...`; `preexec_fn` runs in the child before it starts (e.g. to set a limit)."""
    return subprocess.run([str(mobius_bin()), *map(str, args)], capture_output=True, text=True,
                          timeout=timeout, preexec_fn=preexec_fn)


@contextlib.contextmanager
def scratch(tmp_path_factory, name: str):
    """Yields a new directory for one module's package and deletes it when the module is done: the
    real-checkpoint and over-2-GiB packages take 0.5-5.4 GB each, and the suite must not need the
    sum of them on the disk at once (pytest itself keeps module directories until the run ends)."""
    path = tmp_path_factory.mktemp(name)
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


# The graph files of a package by role, in its two layouts (src/package/layout.h): flat
# <role>.onnx + <role>.onnx.data at the top; hf (the Hugging Face layout transformers.js and
# Optimum read) onnx/<name>.onnx + onnx/<name>.onnx_data with these names (transformers.js
# src/models.js session names, Optimum's file names). Every test reaches a package's graphs through
# graph_path / graph_files rather than spelling the file names.
HF_GRAPH_NAMES = {"model": "model", "encoder": "encoder_model", "decoder": "decoder_model_merged",
                  "vision": "vision_encoder", "speech": "audio_encoder", "embedding": "embed_tokens"}


def layout(package: Path) -> str:
    """The layout of the package in `package`: "hf" when it has an onnx/ folder, else "flat"."""
    return "hf" if (Path(package) / "onnx").is_dir() else "flat"


def graph_file(role: str, layout: str) -> str:
    """The graph file of `role` relative to a package of `layout`."""
    return f"onnx/{HF_GRAPH_NAMES[role]}.onnx" if layout == "hf" else f"{role}.onnx"


def data_file(role: str, layout: str) -> str:
    """The external-data file of `role`'s graph relative to a package of `layout`."""
    return f"onnx/{HF_GRAPH_NAMES[role]}.onnx_data" if layout == "hf" else f"{role}.onnx.data"


def graph_path(package: Path, role: str = "model") -> Path:
    """The graph file of `role` in the package in `package` (either layout)."""
    return Path(package) / graph_file(role, layout(package))


def package_dir(graph: Path) -> Path:
    """The package directory holding the graph file `graph` (what build() returns): the folder
    above onnx/ in the hf layout (the graph's data file is <graph>.onnx_data there), its own
    folder in the flat layout (<graph>.onnx.data)."""
    graph = Path(graph)
    return graph.parent.parent if (graph.parent / f"{graph.name}_data").exists() else graph.parent


def data_path(package: Path, role: str = "model") -> Path:
    """The external-data file of `role`'s graph in the package in `package` (either layout)."""
    return Path(package) / data_file(role, layout(package))


def graph_files(roles, layout: str) -> set[str]:
    """The graph and external-data files of `roles` in a package of `layout`, relative to it."""
    return {f for r in roles for f in (graph_file(r, layout), data_file(r, layout))}


def package_files(package: Path) -> set[str]:
    """Every file of the package in `package`, relative to it ("onnx/model.onnx" in the hf layout)."""
    return {p.relative_to(package).as_posix() for p in Path(package).rglob("*") if p.is_file()}


# What the hf layout adds to the copied config.json (src/package/copied_files.h
# add_transformers_js_config): transformers.js fetches <graph>.onnx_data only with
# use_external_data_format, and dtype fp32 names the graph files without a suffix (model.onnx).
TRANSFORMERS_JS_CONFIG = {"use_external_data_format": True, "dtype": "fp32"}


def copy_problems(hf_dir: Path, out_dir: Path, files) -> list[str]:
    """The files (names) the package in out_dir should hold as copies of hf_dir's that are not: byte
    for byte, except an hf package's config.json, which is the checkpoint's JSON with
    "transformers.js_config": TRANSFORMERS_JS_CONFIG added."""
    problems = []
    for f in sorted(files):
        got, want = (out_dir / f).read_bytes(), (hf_dir / f).read_bytes()
        if f == "config.json" and layout(out_dir) == "hf":
            config = json.loads(got)
            if config.pop("transformers.js_config", None) != TRANSFORMERS_JS_CONFIG or config != json.loads(want):
                problems.append(f"{f}: not the checkpoint's with transformers.js_config {TRANSFORMERS_JS_CONFIG}")
        elif got != want:
            problems.append(f"{f}: not a copy of the checkpoint's")
    return problems


def build(hf_dir: Path, out_dir: Path, *extra: str, source: str = "--config") -> Path:
    """Runs `mobius build SOURCE HF_DIR OUT_DIR EXTRA...` (source --config or --gguf); raises with
    the CLI's stderr on failure; returns the path of the package's main graph ("model", else
    "decoder")."""
    r = run_mobius("build", source, hf_dir, out_dir, *extra)
    if r.returncode != 0:
        raise AssertionError(f"mobius build {source} {' '.join(extra)} exited {r.returncode}: "
                             f"{r.stderr.strip()}")
    model = graph_path(out_dir, "model")
    return model if model.is_file() else graph_path(out_dir, "decoder")


# ---------------------------------------------------------------------------------------------
# The HF checkpoint
# ---------------------------------------------------------------------------------------------
OLD_KEYS = ("rope_theta", "rope_scaling", "partial_rotary_factor", "rotary_pct", "rotary_emb_base",
            "rope_local_base_freq")


def base_kwargs(model_type: str) -> dict:
    """The tiny sizes (and per-type settings) every row of `model_type` starts from: its task
    module's base_kwargs."""
    decoder, encoder = _task_modules()
    return (encoder if is_encoder(model_type) else decoder).base_kwargs(model_type)


def make_config(model_type: str, overrides: dict):
    if "_config_json" in overrides:
        return transformers.CONFIG_MAPPING[model_type].from_dict(copy.deepcopy(overrides["_config_json"]))
    kw = base_kwargs(model_type)
    # deep copy: transformers fills defaults into the rope dicts it is given, in place
    kw.update(copy.deepcopy({k: v for k, v in overrides.items() if k not in HARNESS_OPTIONS}))
    return AutoConfig.for_model(model_type, **kw)


def _declared(model_type: str, kw: dict) -> dict:
    """The entries of `kw` that the config class declares (as a field or through attribute_map):
    BASE's num_key_value_heads would otherwise be saved into e.g. GPT-NeoX's config.json, which
    has no such field (its attention is multi-head)."""
    cls = transformers.CONFIG_MAPPING[model_type]
    known = {f.name for f in dataclasses.fields(cls)} | set(cls.attribute_map)
    return {k: v for k, v in kw.items() if k in known}


def _tied_embedding(model: torch.nn.Module):
    """The token embedding table when the model's LM head is the same tensor, else None."""
    try:
        head, table = model.get_output_embeddings(), model.get_input_embeddings()
    except (AttributeError, NotImplementedError):  # no embeddings (speech and vision towers)
        return None
    weight = getattr(table, "weight", None)
    return weight if head is not None and weight is not None and getattr(head, "weight", None) is weight else None


# Persistent buffers that are functions of the config, not weights: MiniMaxLightningAttention's
# decay tables (slope_rate from the head and layer index, the others from it and block_size), which
# its forward reads and save_pretrained writes. rerandomize keeps them as the model computed them.
CONFIG_BUFFERS = ("slope_rate", "query_decay", "key_decay", "diagonal_decay")


@torch.no_grad()
def rerandomize(model: torch.nn.Module) -> None:
    """Replaces every parameter, and every persistent float buffer (saved to the checkpoint like a
    parameter, e.g. DeepSeek-V3's e_score_correction_bias), so that nothing keeps transformers'
    init (biases 0, norms 1): a dropped bias or a wrong norm offset cannot match. Matrices are
    scaled by 1/sqrt(fan_in) rather than 0.02: at 0.02 attention is nearly uniform, and a 10%
    error in rope_theta moves the logits by only ~1.7e-4 (at 1/sqrt(fan_in): ~6e-2), too close to
    the tolerance. GPT-2's Conv1D weights are [in, out]: their fan_in is shape[0]. Token embedding
    tables (`*embed_tokens.weight`) keep unit variance, unless the LM head is the same table (tied
    embeddings): it is then scaled as the head's matrix, so that the logits stay of order 1-10 (a
    unit-variance head makes them ~sqrt(hidden) times larger, and float32 noise with them: the
    parity table's scale column); Phi-4-multimodal's `embed_tokens_extend.*` (its image and audio
    towers) are matrices like any other. CONFIG_BUFFERS keep their values."""
    conv1d = {f"{n}.weight" for n, m in model.named_modules() if isinstance(m, Conv1D)}
    layer_norms = {f"{n}.{p}" for n, m in model.named_modules() if isinstance(m, torch.nn.LayerNorm)
                   for p in ("weight", "bias")}  # also those not named *norm* (GPT-J's ln_1)
    # the Linear layers inside a norm module are matrices (AXK2GatedRMSNorm's gate mlp.fc1 / fc2)
    gate_linears = {f"{n}.weight" for n, m in model.named_modules() if isinstance(m, torch.nn.Linear)
                    and "norm" in n.rsplit(".", 1)[0].lower() and "norm" not in n.rsplit(".", 1)[-1].lower()}
    saved = model.state_dict().keys()
    buffers = [(n, b) for n, b in model.named_buffers() if n in saved and b.is_floating_point()
               and n.rsplit(".", 1)[-1] not in CONFIG_BUFFERS]
    tied = _tied_embedding(model)
    # a head model's encoder under a prefix named *norm* (roberta_prelayernorm) is not all norms
    prefix = f"{getattr(model, 'base_model_prefix', '')}."
    for name, p in [*model.named_parameters(), *buffers]:  # tied weights are yielded once
        if p.numel() == 0:  # e.g. DINOv3's register_tokens [1, 0, hidden] without registers
            continue
        r = torch.randn_like(p)
        local = name[len(prefix):] if prefix != "." and name.startswith(prefix) else name
        # DBRX's norm_attn_norm module holds the attention projections beside its two norms: its
        # name alone makes no norm (else Wqkv and out_proj would be ~1 everywhere, and the model so
        # ill-conditioned that transformers' own float32 prefill is 4e-3 off its float64 one)
        local = local.replace("norm_attn_norm.", "")
        # multiplicative scales (norm weights, Gemma 4's per-layer output scale layer_scalar) vary
        # around 1: a layer_scalar of 0.1 * r shrinks every layer's output tenfold and leaves
        # transformers' own float32 forward 1.5e-4 off its float64 one
        # (and ZAYA's residual, input and router-state scales, each a multiplier of the whole stream:
        # at 0.1 * r the streams shrink tenfold per layer and the routers see one token's state)
        zaya_scale = model.config.model_type == "zaya" and local.endswith("_scale")
        if ("norm" in local.lower() and name not in gate_linears) or name in layer_norms or local.endswith("layer_scalar") or zaya_scale:  # BERT's LayerNorm, [heads, head_dim] norms
            p.copy_(1.0 + 0.1 * r)
        elif p.ndim >= 2:
            unit = "embed_tokens." in name and p is not tied
            p.copy_(r if unit else r * p.shape[0 if name in conv1d else 1] ** -0.5)
        else:
            p.copy_(0.1 * r)
    # ZayaRouter's balancing_biases, added to the router's softmax before its top-1: 0.01 * r, below
    # the spread of the probabilities (at 0.1 * r the biases alone pick one expert for every token);
    # the skip expert's -1, which ZayaPreTrainedModel._init_weights writes over the checkpoint's on
    # every load: the checkpoint holds it too
    if getattr(model.config, "model_type", None) == "zaya":
        for name, b in buffers:
            if name.endswith("gate.balancing_biases"):
                b.mul_(0.1)
                b[-1] = -1.0


def _rewrite_old_schema(cfg_path: Path, overrides: dict) -> None:
    data = json.loads(cfg_path.read_text())
    data.pop("rope_parameters")
    for k in OLD_KEYS:
        if k in overrides:
            data[k] = overrides[k]
    cfg_path.write_text(json.dumps(data, indent=2) + "\n")


def _edit_json(cfg_path: Path, edits: dict) -> None:
    data = json.loads(cfg_path.read_text())
    for k, v in edits.items():
        if v == DROP:
            data.pop(k, None)
        else:
            data[k] = v
    cfg_path.write_text(json.dumps(data, indent=2) + "\n")


def write_checkpoint(model_type: str, overrides: dict, hf_dir: Path, auto=None):
    """Creates the tiny model (seed 0) of class `auto` (default: AutoModel for an encoder, else
    AutoModelForCausalLM), re-randomizes it and saves it; returns the in-memory model."""
    torch.manual_seed(0)
    config = make_config(model_type, overrides)
    auto = auto or (AutoModel if is_encoder(model_type) else AutoModelForCausalLM)
    model = auto.from_config(config, dtype=torch.float32,
                             attn_implementation=attn_implementation(overrides))
    model.eval()
    rerandomize(model)
    kw = {"max_shard_size": overrides["_max_shard_size"]} if "_max_shard_size" in overrides else {}
    model.save_pretrained(hf_dir, **kw)
    if any(k in overrides for k in OLD_KEYS):
        _rewrite_old_schema(hf_dir / "config.json", overrides)
    if "_json" in overrides:
        _edit_json(hf_dir / "config.json", overrides["_json"])
    if "_config_json" in overrides:
        (hf_dir / "config.json").write_text(json.dumps(overrides["_config_json"], indent=2) + "\n")
    return model


def write_raw_lora_adapter(hf_dir: Path, out: Path, rank: int = 2, extra_tensors: dict | None = None,
                           **config) -> Path:
    """A PEFT LoRA adapter directory written by hand for the checkpoint in `hf_dir` (no peft: its
    tensors and config may be hostile): lora_A [rank, in] / lora_B [out, rank] of every q_proj,
    small values of a fixed seed, adapter_config.json r = rank, lora_alpha 4; `config` edits
    adapter_config.json (r too), `extra_tensors` (name -> array) adds tensors."""
    from safetensors.numpy import load_file, save_file  # noqa: PLC0415
    out.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(0)
    tensors = {}
    for name, w in load_file(hf_dir / "model.safetensors").items():
        if name.endswith("q_proj.weight"):
            module = name[: -len(".weight")]
            a, b = rng.standard_normal((rank, w.shape[1])), rng.standard_normal((w.shape[0], rank))
            tensors[f"base_model.model.{module}.lora_A.weight"] = (a * 0.1).astype(np.float32)
            tensors[f"base_model.model.{module}.lora_B.weight"] = (b * 0.1).astype(np.float32)
    save_file({**tensors, **(extra_tensors or {})}, out / "adapter_model.safetensors")
    (out / "adapter_config.json").write_text(json.dumps({"peft_type": "LORA", "r": rank, "lora_alpha": 4, **config}))
    return out


def attn_implementation(overrides: dict) -> str:
    return overrides.get("_attn_implementation", "eager")


def load_reference(hf_dir: Path, auto=AutoModelForCausalLM, overrides: dict | None = None):
    """The reference is what is on disk: config.json (old or new schema) + safetensors. Its tensors
    are copied into fresh storage: loaded ones sit at any byte offset of the file's mapping, and a
    vectorized kernel rounds a misaligned tensor's head differently (ulp-level and host-dependent:
    zaya's reloaded model differed from the in-memory one by 9.5e-7 on an AMD EPYC host, by nothing
    on an Intel one), so the same values compute as the model written in memory does."""
    model = auto.from_pretrained(hf_dir, dtype=torch.float32,
                                 attn_implementation=attn_implementation(overrides or {})).eval()
    with torch.no_grad():
        for t in [*model.parameters(), *model.buffers()]:
            t.data = t.data.clone()
    return model


def _to64(x):
    if isinstance(x, torch.Tensor) and x.is_floating_point():
        return x.double()
    if isinstance(x, (tuple, list)) and any(isinstance(v, torch.Tensor) for v in x):
        return type(x)(_to64(v) for v in x)
    return x


_softmax = torch.nn.functional.softmax


def _softmax_at_least(input, dim=None, _stacklevel=3, dtype=None):  # noqa: A002 - torch's signature
    """torch.nn.functional.softmax where transformers' `dtype=torch.float32` (its upcast of float16
    and bfloat16 scores) means "at least float32": a float64 model keeps float64. Cast to float32,
    float64's most negative mask value becomes -inf, and a fully masked row (a padding query) NaN."""
    if dtype == torch.float32 and input.dtype == torch.float64:
        dtype = torch.float64
    if dim is not None and input.is_floating_point():
        # float64's most negative mask value overflows to -inf where a model adds two masks
        # (ProphetNet) or casts its float64 scores to float32 (MPT); a row of -inf (a padding
        # query) gets the uniform weights a row of finite minimums gets in float32, where the
        # mask value stays finite (a float32 model never makes such a row: it would be NaN)
        input = torch.where(torch.isneginf(input).all(dim, keepdim=True), torch.zeros_like(input), input)
    return _softmax(input, dim=dim, _stacklevel=_stacklevel, dtype=dtype)


torch.nn.functional.softmax = _softmax_at_least

_full = torch.full


def _full_wide(size, fill_value, *args, **kwargs):
    """torch.full, except that a finite float fill beyond float32's range with no dtype given makes a
    float64 tensor where torch raises: XGLMAttention clamps its scores with torch.full((),
    torch.finfo(scores.dtype).min), a default-dtype (float32) tensor, which for the float64
    reference would hold float64's minimum. Every call that torch accepts is unchanged."""
    if (isinstance(fill_value, float) and not args and "dtype" not in kwargs and math.isfinite(fill_value)
            and abs(fill_value) > torch.finfo(torch.float32).max):
        kwargs["dtype"] = torch.float64
    return _full(size, fill_value, *args, **kwargs)


torch.full = _full_wide



class _TorchFloat64Kernel:
    """torch, except that torch.float32 is float64: the globals of _delta_rule_at_least's float64 copy."""
    float32 = torch.float64

    def __getattr__(self, name):
        return getattr(torch, name)


_DELTA_RULES = ("torch_chunk_gated_delta_rule", "torch_recurrent_gated_delta_rule",
                "chunk_kimi_delta_attention", "recurrent_kimi_delta_attention")


def _delta_rule_at_least(fn):
    """transformers' gated delta rule (Qwen3-Next, Qwen3.5, OLMo-Hybrid; Kimi Linear's), whose casts of its inputs to
    float32 (its upcast of float16 and bfloat16 models, "to match the FLA library") mean "at least
    float32" as the softmax's do: float64 inputs stay float64. Kept in float32, the reference would
    carry the kernel's float32 rounding, which the gated RMSNorm after it amplifies where a value
    head's output is small in RMS (decoder_harness.TYPE_BASE["qwen3_next"]), and transformers' own
    float32 forward would share that rounding with it. float32 inputs run the function unchanged."""
    raw = inspect.unwrap(fn)
    wide = types.FunctionType(raw.__code__, {**raw.__globals__, "torch": _TorchFloat64Kernel()}, raw.__name__,
                              raw.__defaults__, raw.__closure__)
    wide.__kwdefaults__ = raw.__kwdefaults__

    @functools.wraps(fn)
    def at_least(query, *args, **kwargs):
        return (wide if query.dtype == torch.float64 else fn)(query, *args, **kwargs)

    at_least.keeps_float64 = True
    return at_least


def _keep_delta_rule_float64(model: torch.nn.Module) -> None:
    """Replaces the gated delta rule functions of the modules that define `model`'s layers (once)."""
    for module in {sys.modules[type(mod).__module__] for mod in model.modules()}:
        for name in _DELTA_RULES:
            fn = getattr(module, name, None)
            if fn is not None and not getattr(fn, "keeps_float64", False):
                setattr(module, name, _delta_rule_at_least(fn))

# Types whose float64 copy takes attention_mask as float64: ProphetNet computes its masks as
# (1.0 - attention_mask) * torch.finfo(model dtype).min, which for an integer mask is a float32
# tensor times float64's minimum: -inf, and 0 x -inf = NaN at every attended position
# (SplinterForQuestionAnswering: its logits' padding term (1 - attention_mask) * finfo.min).
FLOAT64_MASK_TYPES = ("prophetnet", "splinter")


def float64(model: torch.nn.Module, inplace: bool = False) -> torch.nn.Module:
    """A float64 copy of transformers' model: the reference that parity rows compare against, so
    that a row's max|Δ| is mobius' float32 error alone, not the sum of two float32 roundings (which
    depend on the CPU's kernels: onnxruntime's MLAS and PyTorch pick AVX2 / AVX-512 / AMX code at
    run time). Every module casts its floating-point tensor arguments to float64 on entry, so the
    callers feed the float32 inputs they feed the float32 model (pixel_values, input_features,
    ...). Where transformers computes a step in float32 on purpose (RMSNorm's variance, the RoPE
    angles), that step stays float32, as in the float32 model; its upcasts to float32 do not: the
    softmax's (_softmax_at_least) and a router's router_dtype (Switch Transformers, NLLB-MoE) stay
    float64. Mixture-of-experts layers run transformers' eager experts loop (torch's grouped_mm has
    no float64 kernel), and GPT-2's reorder_and_upcast_attn (a float32-only path, the same
    attention in exact arithmetic) the plain attention. The float32 model stays the reference of
    the greedy-token checks. `inplace`: convert `model` itself (a model too large to copy)."""
    m = (model if inplace else copy.deepcopy(model)).double()
    _keep_delta_rule_float64(m)
    if getattr(m.config, "_experts_implementation", None) not in (None, "eager"):
        m.set_experts_implementation("eager")  # torch's grouped_mm has no float64 kernel
    for mod in m.modules():
        if mod.__dict__.get("dtype") == torch.float32:  # a router's router_dtype (Switch, NLLB-MoE)
            mod.dtype = torch.float64
        if getattr(mod, "reorder_and_upcast_attn", False):  # GPT-2's float32-only upcast path:
            mod.reorder_and_upcast_attn = False  # the same attention in exact arithmetic

    float_mask = m.config.model_type in FLOAT64_MASK_TYPES

    def cast(_mod, args, kwargs):
        kwargs = {k: v.double() if float_mask and k == "attention_mask" and isinstance(v, torch.Tensor)
                  else _to64(v) for k, v in kwargs.items()}
        return tuple(_to64(a) for a in args), kwargs

    for mod in m.modules():
        mod.register_forward_pre_hook(cast, with_kwargs=True)
        if type(mod).__name__ == "CanineSelfAttention":
            mod.register_forward_pre_hook(_canine_additive_mask, with_kwargs=True)
    return m


def _canine_additive_mask(_mod, args, kwargs):
    """CanineSelfAttention turns its 3-D 0/1 attention_mask (the third argument) into the additive
    one as (1.0 - attention_mask.float()) * torch.finfo(dtype).min: a float32 tensor times float64's
    minimum, -inf, and 0 x -inf = NaN at every attended position. Its float64 copy gets that additive
    mask in float64, 4-D, which it adds as it is (the same values, computed without the overflow)."""
    if len(args) > 2 and isinstance(args[2], torch.Tensor) and args[2].ndim == 3:
        additive = (1.0 - args[2].double()).unsqueeze(1) * torch.finfo(torch.float64).min
        args = (*args[:2], additive, *args[3:])
    return args, kwargs


def reset_rotary(model) -> None:
    """Dynamic NTK rope in transformers keeps the longest length seen so far in the module; an
    independent sequence must start from the fresh state (as in a newly loaded model)."""
    for m in model.modules():
        if hasattr(m, "original_inv_freq") and hasattr(m, "original_max_seq_len"):
            m.register_buffer("inv_freq", m.original_inv_freq.clone(), persistent=False)
            m.max_seq_len_cached = m.original_max_seq_len


# ---------------------------------------------------------------------------------------------
# onnxruntime side
# ---------------------------------------------------------------------------------------------
def kv_shape(config) -> tuple[int, int, int, int]:
    """(layers, kv heads, key head size, value head size) of the I/O contract's cache. Multi-head
    latent attention (configs with kv_lora_rank, DeepSeek) caches the expanded per-head keys
    [qk_nope_head_dim + qk_rope_head_dim] and values [v_head_dim] (src/blocks/mla.h)."""
    if getattr(config, "kv_lora_rank", None):
        key_dim = config.qk_nope_head_dim + config.qk_rope_head_dim
        return config.num_hidden_layers, config.num_attention_heads, key_dim, config.v_head_dim
    head_dim = (_reads_head_dim(config.model_type) and getattr(config, "head_dim", None)) \
        or config.hidden_size // config.num_attention_heads
    kv_heads = CACHE_KV_HEADS.get(config.model_type, lambda c: getattr(
        c, "num_key_value_heads", None) or c.num_attention_heads)(config)
    return config.num_hidden_layers, kv_heads, head_dim, head_dim


def _mamba_states(c) -> dict:
    """blocks/mamba.h: the conv window of the last conv_kernel - 1 inputs and the SSM state."""
    return {"conv_state": (c.intermediate_size, c.conv_kernel - 1),
            "recurrent_state": (c.intermediate_size, c.state_size)}


def _ssd_states(heads: int, head_dim: int, groups: int, state: int, kernel: int) -> dict:
    """blocks/mamba2.h: the conv window over x, B and C, and the SSM state per head."""
    return {"conv_state": (heads * head_dim + 2 * groups * state, kernel - 1),
            "recurrent_state": (heads, head_dim, state)}


def _mamba2_states(c) -> dict:
    return _ssd_states(c.num_heads, c.head_dim, c.n_groups, c.state_size, c.conv_kernel)


@dataclasses.dataclass(frozen=True)
class Ahead:
    """A state axis that grows with the sequence like None's and holds `n` positions ahead of
    attention_mask's: CPM-Ant's prompt, which its first step puts in the cache (archs/cpmant.cpp)."""
    n: int


def _cpmant_states(c) -> list[dict]:
    """CPM-Ant: multi-head key/value of dim_head, the prompt's positions ahead of the text's."""
    kv = (c.num_attention_heads, Ahead(c.prompt_length), c.dim_head)
    return [{"key": kv, "value": kv}] * c.num_hidden_layers


def _kv_states(c) -> dict:
    """A self-attention layer's cache: key and value growing along axis 2."""
    _, kv_heads, key_dim, value_dim = kv_shape(c)
    return {"key": (kv_heads, None, key_dim), "value": (kv_heads, None, value_dim)}


def _bamba_states(c) -> list[dict]:
    """Bamba, GraniteMoeHybrid: attention layers (layers_block_type "full_attention") carry
    key/value, the others the Mamba-2 mixer's states (their configs' mamba_* fields)."""
    ssd = _ssd_states(c.mamba_n_heads, c.mamba_d_head, c.mamba_n_groups, c.mamba_d_state, c.mamba_d_conv)
    return [_kv_states(c) if t == "full_attention" else ssd for t in c.layers_block_type]


def _lfm2_states(c) -> list[dict]:
    """LFM2, LFM2-MoE, LFM3: attention layers carry key/value, the "conv" layers the short convolution's window
    of the last conv_L_cache - 1 inputs (blocks/short_conv.h)."""
    conv = {"conv_state": (c.hidden_size, c.conv_L_cache - 1)}
    return [conv if t == "conv" else _kv_states(c) for t in c.layer_types]


def _jamba_states(c) -> list[dict]:
    """Jamba: attention layers (layers_block_type "attention") carry key/value, the Mamba layers
    the mixer's states (its mamba_* fields; blocks/mamba.h)."""
    inner = c.mamba_expand * c.hidden_size
    mamba = {"conv_state": (inner, c.mamba_d_conv - 1), "recurrent_state": (inner, c.mamba_d_state)}
    return [_kv_states(c) if t == "attention" else mamba for t in c.layers_block_type]


def _nemotron_h_states(c) -> list[dict]:
    """Nemotron-H: attention layers (layers_block_type "full_attention") carry key/value, the Mamba-2
    layers ("linear_attention") the mixer's states (mamba_num_heads, mamba_head_dim, n_groups,
    ssm_state_size, conv_kernel), MLP layers nothing."""
    ssd = _ssd_states(c.mamba_num_heads, c.mamba_head_dim, c.n_groups, c.ssm_state_size, c.conv_kernel)
    return [_kv_states(c) if t == "full_attention" else ssd if t == "linear_attention" else {}
            for t in c.layers_block_type]


def _falcon_h1_states(c) -> list[dict]:
    """Falcon-H1: every layer runs attention and a Mamba-2 mixer side by side and carries both
    states (blocks/parallel_mixers.h): the mixer's (mamba_d_ssm = mamba_n_heads * mamba_d_head)
    and key/value."""
    ssd = _ssd_states(c.mamba_n_heads, c.mamba_d_head, c.mamba_n_groups, c.mamba_d_state, c.mamba_d_conv)
    return [{**ssd, **_kv_states(c)}] * c.num_hidden_layers


def _zamba_states(c) -> list[dict]:
    """Zamba: every layer carries its multi-head Mamba mixer's states (blocks/multi_head_mamba.h:
    n_mamba_heads heads of mamba_expand * hidden_size / n_mamba_heads channels), a "hybrid" layer
    also the shared attention block's key/value (archs/zamba.h)."""
    inner = c.mamba_expand * c.hidden_size
    mamba = {"conv_state": (inner, c.mamba_d_conv - 1),
             "recurrent_state": (c.n_mamba_heads, inner // c.n_mamba_heads, c.mamba_d_state)}
    return [{**_kv_states(c), **mamba} if t == "hybrid" else mamba for t in c.layers_block_type]


def _zamba2_states(c) -> list[dict]:
    """Zamba2: every layer carries its Mamba-2 mixer's states (n_mamba_heads of mamba_headdim),
    a "hybrid" layer also the shared attention block's key/value (archs/zamba.h)."""
    ssd = _ssd_states(c.n_mamba_heads, c.mamba_headdim, c.mamba_ngroups, c.mamba_d_state, c.mamba_d_conv)
    return [{**_kv_states(c), **ssd} if t == "hybrid" else ssd for t in c.layers_block_type]


def _qwen3_next_states(c) -> list[dict]:
    """Qwen3-Next, Qwen3.5 text, OLMo-Hybrid: attention layers carry key/value, the gated DeltaNet layers ("linear_attention")
    the conv window over q, k and v (2 * key heads * key dim + value heads * value dim channels)
    and the delta rule's state per value head [key dim, value dim] (blocks/gated_delta_net.h)."""
    conv = 2 * c.linear_num_key_heads * c.linear_key_head_dim + c.linear_num_value_heads * c.linear_value_head_dim
    delta = {"conv_state": (conv, c.linear_conv_kernel_dim - 1),
             "recurrent_state": (c.linear_num_value_heads, c.linear_key_head_dim, c.linear_value_head_dim)}
    return [_kv_states(c) if t == "full_attention" else delta for t in c.layer_types]


def _qwen4_exp_states(c) -> list[dict]:
    """Qwen4-Exp text: the QSA attention layers ("indexed_attention") carry key/value and the indexer's raw keys
    [batch, seq, indexer_head_dim] growing along axis 1 (src/blocks/qsa.h); the gated DeltaNet layers Qwen3-Next's
    states, and on the PLE layers (ple_layer_ids, one-indexed) also the dilated conv's window over the streams
    (hc_count * hidden_size channels, (ple_conv_kernel_size - 1) * ngram_size inputs) and the last
    ngram_size - 1 ids (int64, plus one; src/archs/qwen4_exp.cpp)."""
    conv = 2 * c.linear_num_key_heads * c.linear_key_head_dim + c.linear_num_value_heads * c.linear_value_head_dim
    delta = {"conv_state": (conv, c.linear_conv_kernel_dim - 1),
             "recurrent_state": (c.linear_num_value_heads, c.linear_key_head_dim, c.linear_value_head_dim)}
    ple = {"ple_conv_state": (c.hc_count * c.hidden_size, (c.ple_conv_kernel_size - 1) * c.ngram_size),
           "ngram_context": (c.ngram_size - 1,)}
    return [{**_kv_states(c), "indexer_keys": (None, c.indexer_head_dim)} if t == "indexed_attention"
            else {**delta, **ple} if i + 1 in c.ple_layer_ids else delta for i, t in enumerate(c.layer_types)]


def _kimi_linear_states(c) -> list[dict]:
    """Kimi Linear, Ling 3.0 (bailing_hybrid): the MLA layers ("full_attention") carry the expanded key/value (kv_shape), the
    Kimi Delta Attention layers the conv window over q, k and v (3 * linear_num_heads *
    linear_head_dim channels) and the delta rule's state per head [head dim, head dim]."""
    width = c.linear_num_heads * c.linear_head_dim
    kda = {"conv_state": (3 * width, c.linear_conv_kernel_dim - 1),
           "recurrent_state": (c.linear_num_heads, c.linear_head_dim, c.linear_head_dim)}
    return [_kv_states(c) if t == "full_attention" else kda for t in c.layer_types]
def _minimax_states(c) -> list[dict]:
    """MiniMax: attention layers ("full_attention") carry key/value, the lightning attention layers
    ("linear_attention") MiniMaxCache's linear_cache per head [head_dim, head_dim]
    (blocks/lightning_attention.h)."""
    head_dim = getattr(c, "head_dim", None) or c.hidden_size // c.num_attention_heads
    lightning = {"linear_cache": (c.num_attention_heads, head_dim, head_dim)}
    return [lightning if t == "linear_attention" else _kv_states(c) for t in c.layer_types]


def _recurrent_gemma_states(c) -> list[dict]:
    """RecurrentGemma: its attention layers (layers_block_type "sliding_attention") carry key/value,
    the recurrent ones ("linear_attention") the RG-LRU block's conv window over lru_width channels
    and its float32 recurrent state (blocks/rg_lru.h)."""
    rec = {"conv_state": (c.lru_width, c.conv1d_width - 1), "recurrent_state": (c.lru_width,)}
    return [rec if t == "linear_attention" else _kv_states(c) for t in c.layers_block_type]


def _zaya_states(c) -> list[dict]:
    """ZAYA1 (src/archs/zaya.cpp): every layer's attention carries key/value and beside them its CCA
    states: the conv window of the last (cca_time0 - 1) + (cca_time1 - 1) [q | k] inputs ((heads +
    kv heads) * head_dim channels) and the last token's delayed value half (kv heads * head_dim / 2)."""
    channels = (c.num_attention_heads + c.num_key_value_heads) * c.head_dim
    cca = {"conv_state": (channels, c.cca_time0 + c.cca_time1 - 2),
           "recurrent_state": (c.num_key_value_heads * c.head_dim // 2,)}
    return [{**_kv_states(c), **cca}] * c.num_hidden_layers


# The state tensors of a layer of the types whose layers carry a recurrent state (src/tasks/
# layer_state.h), per name their dims after the batch (replaced every step); their transformers
# models take and return the state as cache_params.
def _rwkv_states(c) -> dict:
    """archs/rwkv.cpp: transformers' state list per layer: the channel and time mixes' previous
    token, the wkv numerator, denominator and running max (attention_hidden_size, float32)."""
    return {"feed_forward_shift": (c.hidden_size,), "attention_shift": (c.hidden_size,),
            "num_state": (c.attention_hidden_size,), "den_state": (c.attention_hidden_size,),
            "max_state": (c.attention_hidden_size,)}


def _xlstm_states(c) -> dict:
    """blocks/mlstm.h: xLSTMCache.rnn_state's three tensors per layer (float32): the matrix memory C
    per head [query/key dim, value dim], the normalizer n [query/key dim] and the max state m [1];
    the dims are the layer's, int(hidden_size * factor) / num_heads."""
    dk = int(c.hidden_size * c.qk_dim_factor) // c.num_heads
    dv = int(c.hidden_size * c.v_dim_factor) // c.num_heads
    return {"C": (c.num_heads, dk, dv), "n": (c.num_heads, dk), "m": (c.num_heads, 1)}


RECURRENT_STATES = {"mamba": _mamba_states, "falcon_mamba": _mamba_states, "mamba2": _mamba2_states,
                    "rwkv": _rwkv_states, "xlstm": _xlstm_states}
# Hybrids: per layer its state tensors (key/value on attention layers, a None dim growing with the
# sequence; recurrent states on the others); their transformers models take past_key_values, the
# cache their own forward creates (DynamicCache(config=...), as generate does).
def _inkling_states(c) -> list[dict]:
    """Inkling: every layer carries key/value (the sliding layers' of swa_* heads) and its four short
    convolutions' windows of conv_kernel_size - 1 inputs (k_sconv, v_sconv over kv heads * head_dim;
    attn_sconv, mlp_sconv over hidden_size)."""
    out = []
    for t in c.layer_types:
        sliding = t == "hybrid_sliding"
        kv, d = (c.swa_num_key_value_heads, c.swa_head_dim) if sliding else (c.num_key_value_heads, c.head_dim)
        w = c.conv_kernel_size - 1
        out.append({"key": (kv, None, d), "value": (kv, None, d), "k_conv_state": (kv * d, w),
                    "v_conv_state": (kv * d, w), "attn_conv_state": (c.hidden_size, w),
                    "mlp_conv_state": (c.hidden_size, w)})
    return out


HYBRID_STATES = {"bamba": _bamba_states, "granitemoehybrid": _bamba_states, "lfm2": _lfm2_states,
                 "lfm2_moe": _lfm2_states, "lfm3": _lfm2_states, "jamba": _jamba_states, "nemotron_h": _nemotron_h_states,
                 "falcon_h1": _falcon_h1_states, "zamba": _zamba_states, "zamba2": _zamba2_states,
                 "qwen3_next": _qwen3_next_states, "qwen3_5_text": _qwen3_next_states,
                 "qwen3_5_moe_text": _qwen3_next_states, "olmo_hybrid": _qwen3_next_states,
                 "qwen4_exp_text": _qwen4_exp_states,
                 "kimi_linear": _kimi_linear_states, "bailing_hybrid": _kimi_linear_states,
                 "minimax": _minimax_states, "inkling_text": _inkling_states,
                 "recurrent_gemma": _recurrent_gemma_states, "zaya": _zaya_states}
# Hybrids whose transformers model keeps the recurrent layers' states in its modules
# (RecurrentGemma's conv1d_state and rg_lru.recurrent_states, which _setup_cache resets) and only
# the attention layers' in past_key_values, which its output does not return: hf_forward resets
# the modules and makes the cache on a first step, as the model's forward does without a cache.
MODULE_STATES = {"recurrent_gemma"}


def _gemma4_states(c) -> list[dict]:
    """Gemma 4: a layer that reuses an earlier layer's keys and values (kv_sharing_modes "reuse")
    carries no cache; the others their type's kv heads and head size (per_layer_config)."""
    out = []
    for i, mode in enumerate(c.kv_sharing_modes):
        layer = c.per_layer_config[i]
        kv = (layer.num_key_value_heads, None, layer.head_dim)
        out.append({} if mode == "reuse" else {"key": kv, "value": kv})
    return out


def _gemma3n_states(c) -> list[dict]:
    """Gemma 3n: as Gemma 4 (a "reuse" layer carries no cache), every layer of one geometry."""
    kv = (c.num_key_value_heads, None, c.head_dim)
    return [{} if mode == "reuse" else {"key": kv, "value": kv} for mode in c.kv_sharing_modes]


def _dsa_states(c) -> list[dict]:
    """DeepSeek sparse attention (src/blocks/dsa.h): the MLA's key/value and the indexer's keys
    [batch, seq, index_head_dim] growing along axis 1 (DynamicIndexedLayer.indexer_keys); a
    GLM-MoE-DSA "shared" layer (indexer_types) has no indexer, hence the key/value alone."""
    shared = getattr(c, "indexer_types", None) or ["full"] * c.num_hidden_layers
    return [_kv_states(c) if t == "shared" else {**_kv_states(c), "indexer_keys": (None, c.index_head_dim)}
            for t in shared]


def _mimo_v2_flash_states(c) -> list[dict]:
    """MiMo-V2-Flash: twice num_key_value_heads on the sliding layers; keys of head_dim, values of
    v_head_dim (MiMoV2FlashAttention)."""
    heads = [c.num_key_value_heads * (2 if t == "sliding_attention" else 1) for t in c.layer_types]
    return [{"key": (h, None, c.head_dim), "value": (h, None, c.v_head_dim)} for h in heads]


def _m3_states(c) -> list[dict]:
    """MiniMax-M3 (src/blocks/block_sparse_attention.h): the key/value, and on a
    "minimax_m3_sparse" layer the block indexer's keys [batch, seq, index_head_dim] growing along
    axis 1 (MiniMaxM3VLSparseCacheLayer.idx_keys)."""
    return [{**_kv_states(c), "indexer_keys": (None, c.index_head_dim)} if t == "minimax_m3_sparse" else _kv_states(c)
            for t in c.layer_types]


# Attention-only types whose layers' caches differ (head sizes, layers without a cache, a second
# attention state)
LAYER_KV_STATES = {
    "gemma4_text": _gemma4_states,
    "gemma4_unified_text": _gemma4_states,
    "gemma3n_text": _gemma3n_states,
    "deepseek_v32": _dsa_states,
    "glm_moe_dsa": _dsa_states,
    "axk2": _dsa_states,
    "cpmant": _cpmant_states,
    "mimo_v2_flash": _mimo_v2_flash_states,
    "minimax_m3_vl_text": _m3_states,
}


def is_recurrent(model_type: str) -> bool:
    """Whether the type's layers (some or all) carry a recurrent state: the state handoff check."""
    return model_type in RECURRENT_STATES or model_type in HYBRID_STATES


def state_layout(config) -> list[dict]:
    """Each layer's state tensors in the I/O contract (past_key_values.{i}.<name>,
    present.{i}.<name>): per name its dims after the batch, None where the sequence grows (a KV
    cache's axis 2)."""
    if config.model_type in HYBRID_STATES:
        return HYBRID_STATES[config.model_type](config)
    if config.model_type in LAYER_KV_STATES:
        return LAYER_KV_STATES[config.model_type](config)
    layer = RECURRENT_STATES.get(config.model_type, _kv_states)(config)
    return [layer] * config.num_hidden_layers


@functools.lru_cache(maxsize=None)
def _reads_head_dim(model_type: str) -> bool:
    """Whether the type's config class declares head_dim or its modeling code reads it (a head_dim
    in config.json is otherwise a foreign field that changes nothing, e.g. OPT's)."""
    if _declared(model_type, {"head_dim": None}):
        return True
    # the modeling module beside the config class' (gpt-sw3's config class is GPT2Config)
    config_module = transformers.CONFIG_MAPPING[model_type].__module__
    module = importlib.import_module(config_module.replace(".configuration_", ".modeling_"))
    return re.search(r'config\.head_dim|"head_dim"', inspect.getsource(module)) is not None


def ort_session(path: Path) -> ort.InferenceSession:
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    so.log_severity_level = 3
    return ort.InferenceSession(str(path), so, providers=["CPUExecutionProvider"])


def io_problems(sess: ort.InferenceSession, expected_inputs: set, expected_outputs: set,
                optional_inputs: frozenset = frozenset()) -> list[str]:
    """The I/O contract: the graph's input and output names are exactly the expected ones, and its
    optional inputs (graph inputs with a default: onnxruntime's overridable initializers) exactly
    `optional_inputs`."""
    got_in = {i.name for i in sess.get_inputs()}
    got_out = {o.name for o in sess.get_outputs()}
    got_opt = {i.name for i in sess.get_overridable_initializers()}
    out = []
    if got_opt != set(optional_inputs):
        out.append(f"optional inputs: missing {sorted(set(optional_inputs) - got_opt)}, "
                   f"extra {sorted(got_opt - set(optional_inputs))}")
    if got_in != expected_inputs:
        out.append(f"inputs: missing {sorted(expected_inputs - got_in)}, "
                   f"extra {sorted(got_in - expected_inputs)}")
    if got_out != expected_outputs:
        out.append(f"outputs: missing {sorted(expected_outputs - got_out)}, "
                   f"extra {sorted(got_out - expected_outputs)}")
    return out


class OnnxLM:
    def __init__(self, path: Path, config, dtype=np.float32, position_ids_optional=False):
        """position_ids_optional: the model may lack the position_ids input (an --ep lowering that
        computes positions from the attention mask drops it); it is then not fed."""
        self.sess = ort_session(path)
        self.states = state_layout(config)  # per layer
        self.vocab = config.vocab_size
        self.dtype = dtype
        past = [f"past_key_values.{i}.{name}" for i, layer in enumerate(self.states) for name in layer]
        has_pos = any(i.name == "position_ids" for i in self.sess.get_inputs())
        self.feeds_position_ids = has_pos or not position_ids_optional
        self.expected_inputs = {"input_ids", "attention_mask", *past}
        if self.feeds_position_ids:
            self.expected_inputs.add("position_ids")
        self.expected_outputs = {"logits", *(p.replace("past_key_values", "present") for p in past)}

    def io_problems(self) -> list[str]:
        return io_problems(self.sess, self.expected_inputs, self.expected_outputs)

    def empty_past(self, batch: int) -> dict:
        """The state before the first token: empty KV caches, zero recurrent states (in the model dtype, or int64
        where the graph takes an int64 state: Qwen4-Exp's n-gram context)."""
        int64 = {i.name for i in self.sess.get_inputs() if i.type == "tensor(int64)"}
        return {f"past_key_values.{i}.{name}": np.zeros((batch, *(0 if d is None or isinstance(d, Ahead) else d for d in dims)),
                                                           np.int64 if f"past_key_values.{i}.{name}" in int64 else self.dtype)
                for i, layer in enumerate(self.states) for name, dims in layer.items()}

    def __call__(self, ids, mask, pos, past=None):
        """Returns (logits, past for the next step)."""
        feeds = {"input_ids": np.asarray(ids, np.int64), "attention_mask": np.asarray(mask, np.int64),
                 "position_ids": np.asarray(pos, np.int64)}
        if not self.feeds_position_ids:
            del feeds["position_ids"]
        feeds.update(past if past is not None else self.empty_past(feeds["input_ids"].shape[0]))
        names = [o.name for o in self.sess.get_outputs()]
        res = dict(zip(names, self.sess.run(names, feeds)))
        b, s = feeds["input_ids"].shape
        total = feeds["attention_mask"].shape[1]
        nxt = {}
        for i, layer in enumerate(self.states):
            for name, dims in layer.items():
                t = res[f"present.{i}.{name}"]
                want = (b, *(total if d is None else total + d.n if isinstance(d, Ahead) else d for d in dims))
                assert t.shape == want, f"present.{i}.{name} has shape {t.shape}, expected {want}"
                nxt[f"past_key_values.{i}.{name}"] = t
        assert res["logits"].shape == (b, s, self.vocab), f"logits shape {res['logits'].shape}"
        return res["logits"], nxt


# ---------------------------------------------------------------------------------------------
# Inputs and the three checks
# ---------------------------------------------------------------------------------------------
def prefill_batch(vocab: int, seed: int = 1):
    """Batch of 2: row 0 full length, row 1 left-padded by PAD (pad id 0)."""
    rng = np.random.RandomState(seed)
    ids = rng.randint(0, vocab, size=(2, PREFILL_LEN)).astype(np.int64)
    mask = np.ones_like(ids)
    mask[1, :PAD] = 0
    ids[1, :PAD] = 0
    pos = np.clip(np.cumsum(mask, axis=1) - 1, 0, None)
    return ids, mask, pos


def max_abs(a, b) -> float:
    return float(np.max(np.abs(np.asarray(a, np.float64) - np.asarray(b, np.float64))))


def _numpy64(x) -> np.ndarray:
    return x.detach().double().numpy() if isinstance(x, torch.Tensor) else np.asarray(x, np.float64)


def delta(rec: dict, got, want) -> float:
    """max|got - want| of a parity comparison (want: the float64 reference's tensor); also records
    the reference's scale, the largest |want| the row compares (rec["scale"]), for the table."""
    want = _numpy64(want)
    if want.size:
        rec["scale"] = max(rec.get("scale") or 0.0, float(np.max(np.abs(want))))
    return max_abs(got, want)


# Types whose transformers model keeps no cache (GPT-1's OpenAIGPTLMHeadModel takes no
# past_key_values): hf_forward's cache is then the ids and positions so far, and each step reruns
# the whole sequence, returning the logits of the step's tokens.
NO_CACHE = {"openai-gpt"}


@torch.no_grad()
def hf_forward(model, ids, mask, pos, cache=None):
    if model.config.model_type in NO_CACHE:
        n = ids.shape[1]
        if cache is not None:
            ids, pos = np.concatenate([cache[0], ids], axis=1), np.concatenate([cache[1], pos], axis=1)
        out = model(input_ids=torch.as_tensor(ids), attention_mask=torch.as_tensor(mask),
                    position_ids=torch.as_tensor(pos))
        return out.logits[:, -n:].double().numpy(), (ids, pos)
    if model.config.model_type == "cpmant":
        # CpmAntModel.forward takes the whole text with its cache and drops the cached part itself
        # (CpmAntForCausalLM.prepare_inputs_for_generation); it reads no attention_mask but id 0 as
        # left padding, which the package reads from attention_mask: the two say the same here
        full = ids if cache is None else np.concatenate([cache[0], ids], axis=1)
        assert np.array_equal(full != 0, mask.astype(bool)), "a CPM-Ant text token is id 0 (its padding)"
        out = model(input_ids=torch.as_tensor(full), past_key_values=None if cache is None else cache[1],
                    use_cache=True)
        return out.logits[:, -ids.shape[1]:].double().numpy(), (full, out.past_key_values)
    if model.config.model_type == "rwkv":
        # the state is `state`, five [batch, hidden, layers] tensors updated in place; the model
        # does not read attention_mask. Its one-token step with a state broadcasts the state's
        # previous token [batch, hidden] against the step's [batch, 1, hidden] (RwkvSelfAttention /
        # RwkvFeedForward: batch x batch rows, a transformers bug for batch > 1): such a step runs
        # row by row, each on its row's views of the state (updated in place as the batch's).
        if cache is not None and ids.shape[1] == 1 and ids.shape[0] > 1:
            rows = [model(input_ids=torch.as_tensor(ids[r:r + 1]), state=[t[r:r + 1] for t in cache],
                          use_cache=True).logits.double().numpy() for r in range(ids.shape[0])]
            return np.concatenate(rows, axis=0), cache
        out = model(input_ids=torch.as_tensor(ids), state=cache, use_cache=True)
        return out.logits.double().numpy(), out.state
    if model.config.model_type in RECURRENT_STATES:
        # the state is cache_params; with a state the step's tokens are unpadded and the mask is
        # not passed (as in transformers' generate: MambaMixer masks [batch, seq] columns only)
        out = model(input_ids=torch.as_tensor(ids), attention_mask=None if cache is not None else torch.as_tensor(mask),
                    cache_params=cache, use_cache=True)
        return out.logits.double().numpy(), out.cache_params
    if model.config.model_type in MODULE_STATES:
        if cache is None:
            model._setup_cache(model.config, ids.shape[0], torch.device("cpu"), next(model.parameters()).dtype)
            cache = DynamicCache(config=model.config)
        out = model(input_ids=torch.as_tensor(ids), attention_mask=torch.as_tensor(mask),
                    position_ids=torch.as_tensor(pos), past_key_values=cache, use_cache=True)
        return out.logits.double().numpy(), cache
    out = model(input_ids=torch.as_tensor(ids), attention_mask=torch.as_tensor(mask),
                position_ids=torch.as_tensor(pos), past_key_values=cache, use_cache=True)
    return out.logits.double().numpy(), out.past_key_values


def greedy(step, prompt: np.ndarray, n: int) -> list[int]:
    """Greedy decoding through a cache; step(ids, mask, pos, state) -> (logits, state)."""
    ids = prompt[None, :]
    logits, state = step(ids, np.ones_like(ids), np.arange(ids.shape[1])[None, :], None)
    tokens, total = [], ids.shape[1]
    for _ in range(n):
        tokens.append(int(np.argmax(logits[0, -1])))
        if len(tokens) == n:
            break
        total += 1
        logits, state = step(np.array([[tokens[-1]]]), np.ones((1, total), np.int64),
                             np.array([[total - 1]]), state)
    return tokens


def check_model(path: Path, row: dict) -> list[str]:
    """onnx.checker full check; records row["checker"]; returns the failure, if any."""
    try:
        onnx.checker.check_model(str(path), full_check=True)
        row["checker"] = "ok"
        return []
    except Exception as e:  # noqa: BLE001 - recorded and reported
        row["checker"] = "fail"
        return [f"onnx.checker: {str(e).splitlines()[0]}"]


def attention_lowering_problems(path: Path) -> list[str]:
    """An --ep cpu graph of a task lowered with multi_head_attention (src/passes/passes.h
    GraphLowering::attention): every Attention became com.microsoft MultiHeadAttention."""
    ops = [(n.domain, n.op_type) for n in onnx.load(str(path), load_external_data=False).graph.node]
    mha, left = ops.count(("com.microsoft", "MultiHeadAttention")), ops.count(("", "Attention"))
    return [] if mha and not left else [f"{path.name}: {mha} MultiHeadAttention, {left} Attention left"]


def genai_greedy(package_dir: Path, prompt: np.ndarray, n: int) -> list[int]:
    """Greedy generation of n tokens by onnxruntime-genai from the package's genai_config.json."""
    import onnxruntime_genai as og

    model = og.Model(str(package_dir))
    params = og.GeneratorParams(model)
    params.set_search_options(max_length=len(prompt) + n, do_sample=False)
    gen = og.Generator(model, params)
    gen.append_tokens(np.asarray(prompt, np.int32)[None, :])
    while not gen.is_done():
        gen.generate_next_token()
    return [int(t) for t in gen.get_sequence(0)[len(prompt):]]


def write_row(row: dict) -> None:
    ROWS_DIR.mkdir(parents=True, exist_ok=True)
    (ROWS_DIR / f"{row['model_type']}--{row['variant']}.json").write_text(json.dumps(row, indent=1))


@contextlib.contextmanager
def recorded(index: int, model_type: str, variant: str):
    """Yields the result row of one parity test (the table's columns, status "error" until the
    test sets it) and writes it (write_row) when the block ends, however it ends; an exception is
    first recorded in row["failures"] (its type and first line) and then re-raised. Its margin is
    max|Δ| / TOL, or max|Δ| / (TOL * scale) for a row the test marks relative (a diffusers
    component: tolerance relative to the output's scale)."""
    row = dict(index=index, model_type=model_type, variant=variant, prefill=None, decode=None,
               scale=None, tokens=None, genai=None, checker=None, status="error", failures=[])
    try:
        yield row
    except BaseException as e:
        row["failures"].append(f"{type(e).__name__}: {(str(e).strip().splitlines() or [''])[0]}")
        raise
    finally:
        deltas = [d for d in (row["prefill"], row["decode"]) if d is not None]
        tol = TOL * row["scale"] if row.get("relative") and row["scale"] else TOL
        row["margin"] = max(deltas) / tol if deltas else None
        write_row(row)
