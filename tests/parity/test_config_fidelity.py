"""Config fidelity: every registered type reads config.json as its transformers configuration class
does (defaults, legacy aliases, __init__ conversions, and only the fields its modeling code reads).

Generated for every type `mobius list models` prints (a type registered later is covered without
an edit here; one of a task or family this test has no driver for fails: unsupported_task). For
each, config.json is written in the shapes real checkpoints use, and each is a parity check against
transformers loading the same directory, max |Δ| <= harness.TOL:
  text-generation       AutoModelForCausalLM: padded prefill + one decode step (harness)
  feature-extraction    AutoModel: the padded batch (harness.run_encoder_parity)
  text2text-generation  AutoModelForSeq2SeqLM: the encoder output, a decoder prefill and
                        SEQ2SEQ_DECODE_STEPS steps through both caches (seq2seq_harness.check)
  the vision_harness types (image-feature-extraction, zero-shot-image-classification, the CLIP /
  SigLIP text towers' feature-extraction): the type's first vision_harness row class, every
                        output (vision_harness.check)
  speech-to-text        WhisperForConditionalGeneration: the encoder output and cross caches, a
                        decoder prefill and decode steps (speech_harness.check); Moonshine the same
                        on its padded waveform batch (moonshine_harness.check)
  audio-feature-extraction  AutoModel: the zero-padded waveform batch (audio_harness.check)
  image-text-to-text    AutoModelForImageTextToText (vlm_harness rows' sizes): the image batch's
                        features, embeddings, prefill and decode steps (vlm_harness.check)
The variants:
  minimal      only the harness' tiny sizes (harness.base_kwargs; text2text-generation: the seq2seq
               harness' T5 / BART sizes of the type's family; audio-feature-extraction: the
               audio harness' BASE), old schema: no rope_theta,
               rope_scaling or rope_parameters; everything else is the config class' default
  to-dict      transformers' own view: config.to_dict() of the minimal config, every default
               written out, new schema (rope_parameters)
  +KEY         the minimal config plus one field other families use (FOREIGN): mobius must follow
               transformers whether the type reads it or not
  legacy-...   spellings the config classes accept (LEGACY, and TYPE_LEGACY for one type)
A variant whose config.json equals another variant's of the same type is not generated twice.
Where transformers' config class refuses a config (its validation), mobius must refuse it too
(`mobius build --no-weights` exits 1 with a one-line `mobius: error:`); where transformers crashes
on it (an AttributeError / TypeError in the config class, or any error while constructing or running
the model), there is no reference: mobius must then build it or refuse it in one line, never crash.
Where transformers' cached decode step disagrees with its own uncached forward, the uncached forward
is the reference (decode_against_uncached). KNOWN_GAPS lists the pairs mobius does not follow yet.
With 81 registered types: 2025 pairs (400 of the 16 text2text-generation types), about 3.6 minutes
with `pytest -n 2` on 2 cores before the last 5 text2text-generation types, whose 125 pairs add
about 113 s at `-n 1` (the 400 text2text-generation pairs: about 3.8 minutes at `-n 1`).
"""

from __future__ import annotations

import copy
import dataclasses
import json
import shutil
import sys
from functools import lru_cache
from pathlib import Path

import numpy as np
import pytest

import audio_harness as A
import decoder_harness as D
import encoder_harness as E
import harness as H
import seq2seq_harness as S
import vision_harness as V
import moonshine_harness as MS
import speech_harness as W
import phi4mm_harness
import vlm_harness as VLM

# Fields other families use, each added alone to the minimal config (values that engage at the
# harness' sizes: head size 16, prefill 48).
FOREIGN: dict[str, dict] = {
    "partial_rotary_factor": dict(partial_rotary_factor=0.5),
    "rope_parameters-partial": dict(rope_parameters=dict(rope_type="default", rope_theta=10000.0,
                                                         partial_rotary_factor=0.5)),
    "rotary_pct": dict(rotary_pct=0.5),
    "rotary_dim": dict(rotary_dim=8),
    "rope_theta": dict(rope_theta=500.0),
    "rope_scaling-linear": dict(rope_scaling=dict(rope_type="linear", factor=2.0)),
    "rope_scaling-yarn": dict(rope_scaling=dict(rope_type="yarn", factor=4.0,
                                                original_max_position_embeddings=32)),
    "head_dim": dict(head_dim=32),
    "attention_bias": dict(attention_bias=True),
    "mlp_bias": dict(mlp_bias=True),
    "use_bias": dict(use_bias=True),
    "qkv_bias": dict(qkv_bias=True),
    "sliding_window": dict(sliding_window=16),
    "use_sliding_window": dict(use_sliding_window=True, sliding_window=16),
    "attn_logit_softcapping": dict(attn_logit_softcapping=1.0),
    "final_logit_softcapping": dict(final_logit_softcapping=20.0),
    "use_qk_norm": dict(use_qk_norm=True),
    "qk_layernorm": dict(qk_layernorm=True),
    "rms_norm_eps": dict(rms_norm_eps=0.5),
    "layer_norm_eps": dict(layer_norm_eps=0.5),
}
# Older spellings that transformers 5.23 still reads.
LEGACY: dict[str, dict] = {
    "legacy-rope-scaling-type-key": dict(rope_theta=10000.0, rope_scaling=dict(type="linear", factor=2.0)),
    "legacy-rope-scaling-null": dict(rope_theta=10000.0, rope_scaling=None),
    "legacy-head-dim-null": dict(head_dim=None),
}
# longrope factors for head size 16 (8 frequencies)
_SU = dict(short_factor=D.SHORT, long_factor=D.LONG)
TYPE_LEGACY: dict[str, dict[str, dict]] = {
    # Phi3Config.convert_rope_params_to_dict maps rope_scaling type "su" and "yarn" to longrope
    # ("su" with only a top-level original_max_position_embeddings is refused by transformers 5.23:
    # standardize_rope_params copies it into the dict for "yarn" and "longrope" only)
    # a legacy rope_scaling beside rope_parameters (a hand-edited config.json): `rope_scaling or
    # rope_parameters`, its theta from the top level or the class default (convert_rope_params_to_dict)
    "llama": {"rope-scaling-beside-rope-parameters": dict(rope_parameters=dict(rope_type="default", rope_theta=500.0),
                                                          rope_scaling=dict(rope_type="linear", factor=2.0))},
    "qwen2": {"rope-scaling-beside-rope-parameters": dict(rope_theta=300.0, rope_parameters=dict(
        rope_type="default", rope_theta=500.0), rope_scaling=dict(rope_type="linear", factor=2.0))},
    "phi3": {"legacy-su": dict(rope_scaling=dict(type="su", original_max_position_embeddings=32, **_SU)),
             "legacy-yarn": dict(original_max_position_embeddings=32, rope_scaling=dict(type="yarn", **_SU))},
}

# (type, variant) pairs mobius does not follow yet, with the reason. Such a pair must still fail:
# once it passes, the test fails until its entry is removed.
KNOWN_GAPS: dict[tuple[str, str], str] = {
    ("gpt_neox", "+head_dim"): "GPTNeoXRotaryEmbedding sizes its frequencies by a head_dim the attention "
                               "does not use (it splits heads by hidden_size / heads); mobius ignores head_dim",
    ("jetmoe", "+head_dim"): "JetMoe's rotary embedding reads head_dim while its attention heads are "
                             "kv_channels wide; mobius refuses kv_channels != hidden_size / heads",
    ("glm4_moe_lite", "+head_dim"): "head_dim is Glm4MoeLiteConfig's alias of qk_rope_head_dim: keys 16 + 32 "
                                    "wide, values 24, which onnxruntime-genai cannot cache (it sizes both like "
                                    "the key); mobius refuses the default --runtime and builds with --runtime none",
}


# The tasks this test drives; a registered type of any other task fails (unsupported_task).
TASKS = ("text-generation", "feature-extraction", "text2text-generation", "image-feature-extraction",
         "zero-shot-image-classification", "speech-to-text", "audio-feature-extraction", "image-text-to-text")
# text2text-generation: the seq2seq harness' tiny sizes of each family `mobius list models` prints
SEQ2SEQ_BASE = {"t5": S.T5, "bart": S.BART, "pegasus_x": S.BART, "nllb_moe": S.BART, "prophetnet": S.PROPHETNET}
# and per type: bigbird_pegasus' default attention_type block_sparse is refused by mobius on
# purpose (archs/bart.cpp; unit test Text2TextGeneration.LongInputAttentionsSayWhatIsBuilt)
SEQ2SEQ_TYPE_BASE = {"bigbird_pegasus": {"attention_type": "original_full"}}
SEQ2SEQ_DECODE_STEPS = 2  # through both caches; no generate (generation is seq2seq_parity's)


@lru_cache(maxsize=None)
def registered() -> dict[str, tuple[str, str, str]]:
    """model type -> (family, task, onnxruntime-genai type or "-"), as `mobius list models` prints them."""
    r = H.run_mobius("list", "models")
    assert r.returncode == 0, r.stderr
    return {cols[0]: (cols[1], cols[2], cols[3]) for cols in (line.split() for line in r.stdout.splitlines()[1:])
            if cols}


def runtime_none(model_type: str) -> bool:
    """Built with --runtime none: a recurrent type, or a text-generation type without an
    onnxruntime-genai type (its default build refuses --runtime ort-genai, Nemotron-H)."""
    return model_type in H.RECURRENT_STATES or (task(model_type) == "text-generation" and
                                                registered()[model_type][2] == "-")


def registered_types() -> tuple[str, ...]:
    return tuple(registered())


def task(model_type: str) -> str:
    return registered()[model_type][1]


def unsupported_task(model_type: str) -> str | None:
    """Why this test cannot drive `model_type` (its task, or an encoder without harness rows), else None."""
    if task(model_type) not in TASKS:
        return f"task {task(model_type)!r} has no driver in test_config_fidelity.py (TASKS)"
    if model_type in V.types() or model_type in VLM.types():
        return None
    if (task(model_type) == "feature-extraction") != H.is_encoder(model_type):
        return "feature-extraction types are driven through encoder_harness.ROWS, which must list it"
    if task(model_type) == "text2text-generation" and registered()[model_type][0] not in SEQ2SEQ_BASE:
        return f"family {registered()[model_type][0]!r} has no tiny sizes in SEQ2SEQ_BASE"
    return None


def base_kwargs(model_type: str) -> dict:
    if model_type in VLM.types():
        return VLM.base_row(model_type).config
    if model_type in V.types():
        return V.base_row(model_type).config
    if task(model_type) == "text2text-generation":
        return {**SEQ2SEQ_BASE[registered()[model_type][0]], **SEQ2SEQ_TYPE_BASE.get(model_type, {})}
    if model_type in MS.types():
        return MS.MOONSHINE
    if task(model_type) == "speech-to-text":  # 32 encoder frames: onnxruntime alone runs any length
        return dict(W.WHISPER, max_source_positions=16)
    if task(model_type) == "audio-feature-extraction":
        return A.BERT if model_type == "wav2vec2-bert" else A.BASE
    return H.base_kwargs(model_type)


def minimal_config(model_type: str) -> dict:
    """The harness' tiny sizes under the names the config class stores (GPT-2's n_embd, not its
    attribute_map alias hidden_size), as its checkpoints spell them."""
    aliases = H.transformers.CONFIG_MAPPING[model_type].attribute_map
    return {"model_type": model_type, **{aliases.get(k, k): v for k, v in base_kwargs(model_type).items()}}


def to_dict_config(model_type: str) -> dict:
    cls = H.transformers.CONFIG_MAPPING[model_type]
    return json.loads(cls.from_dict(minimal_config(model_type)).to_json_string(use_diff=False))


def variants(model_type: str) -> list[tuple[str, dict]]:
    base = minimal_config(model_type)
    out = [("minimal", base), ("to-dict", to_dict_config(model_type))]
    extra = {**FOREIGN, **LEGACY, **TYPE_LEGACY.get(model_type, {})}
    for name, fields in extra.items():
        out.append((name if name.startswith("legacy") else f"+{name}", {**base, **copy.deepcopy(fields)}))
    seen, unique = [], []
    for name, cfg in out:
        if cfg not in seen:
            seen.append(cfg)
            unique.append((name, cfg))
    return unique


def cases():
    # the binary is needed at collection time: conftest's fixture reports a missing one
    try:
        types = registered_types()
    except (AssertionError, OSError):
        return [pytest.param("none", "none", {}, id="mobius-binary-missing")]
    return [pytest.param(mt, name, cfg, id=f"{mt}-{name}") for mt in types
            for name, cfg in ([("unsupported-task", {})] if unsupported_task(mt) else variants(mt))]


def _first_line(e: Exception) -> str:
    return f"{type(e).__name__}: {(str(e).strip().splitlines() or [''])[0]}"


def transformers_failure(model_type: str, cfg: dict) -> tuple[str, str] | None:
    """("config", error) when transformers' config class refuses this config.json (its validation:
    ValueError, KeyError, strict dataclass errors), ("model", error) when transformers crashes on it
    (an AttributeError or TypeError in the config class, or any error while constructing the model or
    running the padded batch and a decode step through its cache), else None."""
    try:
        config = H.transformers.CONFIG_MAPPING[model_type].from_dict(copy.deepcopy(cfg))
    except (AttributeError, TypeError) as e:
        return "model", _first_line(e)
    except Exception as e:  # noqa: BLE001 - the refusal is the reference's answer
        return "config", _first_line(e)
    try:
        with H.torch.no_grad():
            if task(model_type) == "text2text-generation":  # the check's padded batch, a step through both caches
                model = S.AutoModelForSeq2SeqLM.from_config(config)
                ids, mask = map(H.torch.from_numpy, S.encoder_batch(config.vocab_size))
                out = model(input_ids=ids, attention_mask=mask, decoder_input_ids=ids[:, :S.DEC_PREFILL], use_cache=True)
                model(input_ids=ids, attention_mask=mask, decoder_input_ids=ids[:, :1], past_key_values=out.past_key_values)
            elif model_type == "phi4_multimodal":  # an AutoModelForCausalLM with HD image crops
                phi4mm_harness.prefill(config)
            elif model_type in VLM.types():  # the image batch's prefill
                model = VLM.AutoModelForImageTextToText.from_config(config).eval()
                ids, mask, types_, feeds = VLM.image_batch(config)
                model(input_ids=H.torch.from_numpy(ids), attention_mask=H.torch.from_numpy(mask),
                      **VLM.hf_image_kwargs(config, feeds, types_, ids))
            elif model_type in V.types():
                row = V.base_row(model_type)
                V.make_model(row, config)(**{k: H.torch.from_numpy(v) for k, v in V.inputs(row, config).items()})
            elif model_type in MS.types():  # the padded waveform batch and a decoder step
                model = MS.MoonshineForConditionalGeneration(config)
                values, mask = map(H.torch.from_numpy, MS.audio())
                model(input_values=values, attention_mask=mask,
                      decoder_input_ids=H.torch.from_numpy(MS.prompt_ids(config)), use_cache=True)
            elif task(model_type) == "speech-to-text":  # the encoder and a decoder step
                model = W.WhisperForConditionalGeneration(config)
                feats = H.torch.from_numpy(W.features(config.num_mel_bins, 2 * config.max_source_positions))
                model(input_features=feats, decoder_input_ids=H.torch.from_numpy(W.prompt_ids()), use_cache=True)
            elif task(model_type) == "audio-feature-extraction":
                model = H.AutoModel.from_config(config)
                model(**{A.input_name(model): H.torch.from_numpy(A.model_batch(model)[0])})
            elif H.is_encoder(model_type):
                H.AutoModel.from_config(config)(input_ids=H.torch.ones(1, 8, dtype=H.torch.long))
            else:  # the padded batch and decode step of the parity check
                model = H.AutoModelForCausalLM.from_config(config)
                ids, mask, pos = H.prefill_batch(config.vocab_size)
                _, cache = H.hf_forward(model, ids, mask, pos)
                mask2 = np.concatenate([mask, np.ones((2, 1), np.int64)], axis=1)
                H.hf_forward(model, ids[:, -1:], mask2, pos[:, -1:] + 1, cache)
    except Exception as e:  # noqa: BLE001
        return "model", _first_line(e)
    return None


@pytest.mark.parametrize("model_type,name,cfg", cases())
def test_config_fidelity(model_type, name, cfg, tmp_path, tmp_path_factory):
    assert model_type in registered_types(), "mobius list models failed"
    assert not unsupported_task(model_type), f"{model_type}: {unsupported_task(model_type)}"
    if name == "minimal":
        run = minimal_run(model_type, tmp_path_factory)
        assert not run.failures, "\n".join(run.failures)
        return
    if (model_type, name) not in KNOWN_GAPS and same_as_minimal(model_type, cfg, tmp_path, tmp_path_factory):
        return
    failures = check_pair(model_type, name, cfg, tmp_path)
    assert not failures, "\n".join(failures)


def check_pair(model_type: str, name: str, cfg: dict, tmp_path) -> list[str]:
    """The check of one config.json: transformers' refusal or crash mirrored by mobius, else the
    parity check (KNOWN_GAPS: which must fail); returns the failures."""
    failure = transformers_failure(model_type, cfg)
    if failure:
        (tmp_path / "hf").mkdir()
        (tmp_path / "hf" / "config.json").write_text(json.dumps(cfg, indent=2))
        # --runtime none where the type has no onnxruntime-genai runtime, so that the refusal is the config's
        runtime = ("--runtime", "none") if runtime_none(model_type) else ()
        r = H.run_mobius("build", "--config", tmp_path / "hf", tmp_path / "onnx", "--no-weights", *runtime)
        lines = r.stderr.strip().splitlines()
        clean_error = r.returncode == 1 and len(lines) == 1 and lines[0].startswith("mobius: error:")
        if failure[0] == "config":
            return [] if clean_error else [
                f"transformers' config class refuses this config ({failure[1]}); mobius must too: "
                f"exit {r.returncode}, {r.stderr.strip()[:300]}"]
        return [] if r.returncode == 0 or clean_error else [
            f"transformers' model fails on this config ({failure[1]}); mobius must build it or refuse it "
            f"in one line: exit {r.returncode}, {r.stderr.strip()[:300]}"]
    gap = KNOWN_GAPS.get((model_type, name))
    try:
        failures = parity_failures(model_type, cfg, tmp_path)
    except Exception as e:  # noqa: BLE001 - a known gap may fail by an exception (mobius refusing it, ...)
        if not gap:
            raise
        failures = [str(e)]
    if gap:
        return [] if failures else [f"known gap ({gap}) now passes: remove it from KNOWN_GAPS"]
    return failures


# ---------------------------------------------------------------------------------------------
# Variants that change nothing either side reads. A variant that differs from the minimal config
# only in fields transformers' code never read while it checked the minimal config (its config
# class, model construction, the padded batch and the decode step, the checkpoint it saved and
# reloaded), and that mobius builds, from the minimal checkpoint with the variant's config.json,
# into the same package (every file mobius generates, byte for byte), has the minimal config's
# reference and the minimal config's package: its parity check is the minimal's, which passed
# (a deterministic program that never reads a field cannot depend on its value). Every other
# variant, and every variant of a type whose transformers code serializes its config into
# something it then reads (config.to_dict() outside saving; such reads escape the record), runs
# the whole check. About half of the pairs take this path, at a sixth of the cost.
# ---------------------------------------------------------------------------------------------
@dataclasses.dataclass
class MinimalRun:
    work: Path
    failures: list[str]
    read: frozenset[str] | None  # config fields transformers read; None: not known (no shortcut)
    builds: list[tuple[tuple[str, ...], int]]  # the check's `mobius build` argument lists and exit codes


_RECORDING: list[set[str]] = []  # while the minimal check runs: the fields read, "<opaque>" if unknown
_MINIMAL_RUNS: dict[str, MinimalRun] = {}
# to_dict's callers that serialize a config for saving or for a generation config (its generation
# fields only: no FOREIGN or LEGACY field is one), not to read its fields
# (and to_dict itself, for the nested configs)
_SERIALIZERS = ("to_dict", "to_diff_dict", "to_json_string", "from_model_config", "__repr__", "__eq__")
_Config = H.transformers.PretrainedConfig
_getattribute, _to_dict = _Config.__getattribute__, _Config.to_dict


def _recording_getattribute(self, key):
    if _RECORDING and not key.startswith("__"):
        _RECORDING[-1].add(_getattribute(self, "attribute_map").get(key, key))
    return _getattribute(self, key)


def _recording_to_dict(self):
    if _RECORDING and sys._getframe(1).f_code.co_name not in _SERIALIZERS:
        _RECORDING[-1].add("<opaque>")
    return _to_dict(self)


def minimal_run(model_type: str, tmp_path_factory) -> MinimalRun:
    """The minimal config's check, once per worker, recording the config fields transformers reads
    and the packages mobius builds."""
    if model_type not in _MINIMAL_RUNS:
        work = tmp_path_factory.mktemp(f"minimal-{model_type}")
        read, builds = set(), []
        run_mobius = H.run_mobius

        def recording_run_mobius(*args, **kwargs):
            r = run_mobius(*args, **kwargs)
            if args and args[0] == "build":
                builds.append((tuple(map(str, args)), r.returncode))
            return r

        _RECORDING.append(read)
        H.run_mobius, _Config.__getattribute__, _Config.to_dict = (recording_run_mobius, _recording_getattribute,
                                                                   _recording_to_dict)
        try:
            failures = check_pair(model_type, "minimal", minimal_config(model_type), work)
        finally:
            H.run_mobius, _Config.__getattribute__, _Config.to_dict = run_mobius, _getattribute, _to_dict
            _RECORDING.pop()
        known = "<opaque>" not in read and transformers_failure(model_type, minimal_config(model_type)) is None
        _MINIMAL_RUNS[model_type] = MinimalRun(work, failures, frozenset(read) if known else None, builds)
    return _MINIMAL_RUNS[model_type]


def same_as_minimal(model_type: str, cfg: dict, tmp_path, tmp_path_factory) -> bool:
    """True when `cfg` differs from the minimal config only in fields transformers did not read and
    mobius builds the minimal checkpoint with it into the minimal config's packages."""
    run = minimal_run(model_type, tmp_path_factory)
    if run.failures or run.read is None or not run.builds:
        return False
    cls = H.transformers.CONFIG_MAPPING[model_type]
    try:
        got = cls.from_dict(copy.deepcopy(cfg)).to_dict()
    except Exception:  # noqa: BLE001 - a refusal: the whole check
        return False
    want = cls.from_dict(copy.deepcopy(minimal_config(model_type))).to_dict()
    if any(got.get(k) != want.get(k) and k in run.read for k in got.keys() | want.keys()):
        return False
    work = tmp_path / "same-as-minimal"  # the whole check, if it must run, has tmp_path to itself
    shutil.copytree(run.work / "hf", work / "hf")
    (work / "hf" / "config.json").write_text(json.dumps(cfg, indent=2) + "\n")
    for args, returncode in run.builds:
        if H.run_mobius(*(a.replace(str(run.work), str(work)) for a in args)).returncode != returncode:
            return False
    return all(same_generated_files(run.work / "hf", run.work / p.relative_to(work), p)
               for p in work.iterdir() if p.is_dir() and p.name != "hf")


def same_generated_files(source: Path, want: Path, got: Path) -> bool:
    """The files mobius generated in package `got` equal those of `want`, byte for byte (copies of
    the source's files, config.json among them, are the layout tests' concern)."""
    files = sorted(p.relative_to(got) for p in got.rglob("*") if p.is_file())
    if files != sorted(p.relative_to(want) for p in want.rglob("*") if p.is_file()):
        return False
    return all((got / f).read_bytes() == (want / f).read_bytes() for f in files if not (source / f).exists())


def parity_failures(model_type: str, cfg: dict, work) -> list[str]:
    """The parity check of one config.json: padded prefill and a decode step (encoders: the padded
    batch); returns the failures."""
    row = {}
    overrides = {"_config_json": cfg, **({"_runtime": "none"} if runtime_none(model_type) else {})}
    if task(model_type) == "text2text-generation":
        return seq2seq_parity_failures(model_type, cfg, work)
    if model_type in VLM.types():  # vlm_harness.check without generation
        VLM.write_model(H.transformers.CONFIG_MAPPING[model_type].from_dict(copy.deepcopy(cfg)), work / "hf")
        (work / "hf" / "config.json").write_text(json.dumps(cfg, indent=2) + "\n")
        return VLM.check(work, row, full=False)
    if model_type in V.types():
        vrow = V.base_row(model_type)
        model = V.write_model(vrow, H.transformers.CONFIG_MAPPING[model_type].from_dict(copy.deepcopy(cfg)), work / "hf")
        (work / "hf" / "config.json").write_text(json.dumps(cfg, indent=2) + "\n")
        return V.check(vrow, work / "hf", model, work / "onnx", row)
    if model_type in MS.types():
        model = MS.write_model(MS.MoonshineConfig.from_dict(copy.deepcopy(cfg)), work / "hf")
        (work / "hf" / "config.json").write_text(json.dumps(cfg, indent=2) + "\n")
        return MS.check(work / "hf", model, work / "onnx", {}, generate=False)
    if task(model_type) == "speech-to-text":
        model = W.write_model(W.WhisperConfig.from_dict(copy.deepcopy(cfg)), work / "hf")
        (work / "hf" / "config.json").write_text(json.dumps(cfg, indent=2) + "\n")
        return W.check(work / "hf", model, work / "onnx", {}, generate=False)
    if task(model_type) == "audio-feature-extraction":  # as seq2seq: the model, then config.json verbatim
        model = A.write_model(H.transformers.CONFIG_MAPPING[model_type].from_dict(copy.deepcopy(cfg)), work / "hf")
        (work / "hf" / "config.json").write_text(json.dumps(cfg, indent=2) + "\n")
        return A.check(work / "hf", model, work / "onnx", row)
    if H.is_encoder(model_type):
        return E.run_encoder_parity(model_type, overrides, work, row)
    pair, failures = D.build_pair(model_type, overrides, work, row, checker=False)
    if pair is not None:
        failures += D.check_prefill_decode(pair, row)
        if failures and all(f.startswith("decode") for f in failures):
            failures = decode_against_uncached(pair, failures)
    return failures


def seq2seq_parity_failures(model_type: str, cfg: dict, work) -> list[str]:
    """text2text-generation: AutoModelForSeq2SeqLM from this config.json (every parameter
    re-randomized, seq2seq_harness.write_model), config.json then overwritten verbatim; the
    encoder output, a decoder prefill and SEQ2SEQ_DECODE_STEPS steps through both caches
    (seq2seq_harness.check)."""
    model = S.write_model(H.transformers.CONFIG_MAPPING[model_type].from_dict(copy.deepcopy(cfg)), work / "hf")
    (work / "hf" / "config.json").write_text(json.dumps(cfg, indent=2) + "\n")
    return S.check(work / "hf", model, work / "onnx", {}, SEQ2SEQ_DECODE_STEPS, generate=False)


def decode_against_uncached(pair: D.Pair, failures: list[str]) -> list[str]:
    """A decode step that differs from transformers' cached one is still right when transformers'
    cache disagrees with its own model: transformers 5.23's DynamicCache turns every layer of a
    config with a sliding_window into a sliding cache even where the model's mask ignores the
    window (Llama, ...), so its cached decode drops keys its uncached forward attends to. The
    reference is then the uncached forward of the whole sequence, which mobius must match (the
    float64 model, as every parity comparison)."""
    ids, mask, pos = H.prefill_batch(pair.ref.config.vocab_size)
    nxt = np.random.RandomState(2).randint(0, pair.ref.config.vocab_size, size=(2, 1)).astype(np.int64)
    mask2 = np.concatenate([mask, np.ones((2, 1), np.int64)], axis=1)
    pos2 = np.concatenate([pos, pos[:, -1:] + 1], axis=1)
    H.reset_rotary(pair.ref64)
    _, cache = H.hf_forward(pair.ref64, ids, mask, pos)
    cached, _ = H.hf_forward(pair.ref64, nxt, mask2, pos2[:, -1:], cache)
    H.reset_rotary(pair.ref64)
    uncached = H.hf_forward(pair.ref64, np.concatenate([ids, nxt], axis=1), mask2, pos2)[0][:, -1:]
    _, past = pair.lm(ids, mask, pos)
    ox, _ = pair.lm(nxt, mask2, pos2[:, -1:], past)
    self_delta, delta = H.max_abs(cached, uncached), H.max_abs(ox, uncached)
    if self_delta <= H.TOL:
        return failures  # transformers is consistent: the cached step is the reference
    if delta <= H.TOL:
        return []
    return [f"decode max|Δ| {delta:.3g} > {H.TOL} against transformers' uncached forward (its cached step "
            f"differs from it by {self_delta:.3g})"]



def test_config_defaults_table_is_current():
    """src/registry/config_defaults.inc is what scripts/gen_config_defaults.py derives from the
    installed transformers for the registered types and the fields mobius reads now."""
    import subprocess
    import sys

    r = subprocess.run([sys.executable, str(H.REPO / "scripts" / "gen_config_defaults.py"), "--check"],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr.strip()
