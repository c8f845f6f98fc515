"""The causal-LM model types of transformers that mobius does not register, each with why: the
"Not yet" table of docs/models.md (scripts/gen_models_doc.py), which
tests/parity/test_registry_coverage.py checks against transformers' MODEL_FOR_CAUSAL_LM_MAPPING_NAMES;
and likewise the text encoders (kind "text encoder" in src/registry/hf_model_types.inc: a masked-LM,
text-encoding, classification, QA or multiple-choice class and no causal LM), each with its own
line in ENCODER_REASONS: the "Text encoders not yet" table.

The list itself is derived (the mapping minus `mobius list models`); only the reasons are written
here. A type of another kind (src/registry/hf_model_types.inc: vision-language, speech, text
encoder, encoder-decoder) or a state-space one gets its kind's reason; a decoder-only type needs
its own line in REASONS, so a transformers upgrade that adds one fails the coverage test until it
is registered or given a reason.
"""

from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

STATE_SPACE = "state-space / linear-attention hybrid: issue 27"

# Decoder-only text-generation types: what they need beyond the blocks mobius has.
REASONS = {
    "blt": "Byte Latent Transformer: byte-level local encoder / decoder around a patch transformer, not one stack",
    "deepseek_v4": "DeepSeek-V4: sparse attention beyond V3.2's and hyper-connections: not written yet",
    "dots3_note_text": "dots3 text decoder: GLM-MoE-DSA's indexer (blocks/dsa.h) on its indexed layers, but "
                       "sliding layers with their own MLA sizes (per_layer_config), k_rope_only_layernorm, a g_proj "
                       "output gate and rescaled q / kv latents: not written yet",
    "gemma4_assistant": "Gemma 4's drafting model: reads the target model's hidden states, not a standalone decoder",
    "gemma4_unified_assistant": "drafting model of gemma4_unified: reads the target's hidden states, not "
                                "a standalone decoder",
    "hrm_text": "hierarchical reasoning model: recurrent high / low modules iterated per step, not one stack",
    "hy_v4": "HunYuan V4: a DSA indexer of its own (HYV4Indexer) with hyper-connections (HYV4HyperConnection, "
             "HYV4HyperHead) as DeepSeek-V4: not written yet",
    "inkling2_text": "Inkling 2's text decoder: dynamic short convolutions on the full layers' keys and values (per-token "
                     "taps projected from the input, a state beside the KV cache), sink attention on the sliding layers, "
                     "block attention residuals (each layer attends over the earlier blocks' outputs), L2-clipped q / k, "
                     "softcapped SwiGLU experts under DeepSeek-V4's router: not written yet",
    "moshi": "Moshi: speech-text model with a depth decoder over audio codebooks, not a text decoder",
    "trocr": "TrOCR's decoder: cross-attention to an image encoder (inside VisionEncoderDecoder)",
}

# Encoder-only text types (kind "text encoder"): what they need beyond the blocks mobius has.
ENCODER_REASONS = {
    "lxmert": "LXMERT: a cross-modality encoder over text and object-detector region features "
              "(visual_feats, visual_pos inputs): not written yet",
    "modernvbert": "ModernVBERT: a SigLIP vision tower feeding ModernBERT through a connector (an image-text "
                   "encoder): not written yet",
    "molmo2_text": "Molmo2's text model: a decoder stack that is read inside the Molmo2 vision-language model "
                   "only (no head of its own): not registered",
    "mra": "MRA attention: multi-resolution block-sparse attention through a CUDA kernel; on CPU transformers' "
           "attention returns zeros (mra_cuda_kernel is None), so there is no reference to verify against",
    "neomme": "NeoMME: a multimodal (image patches and text) encoder with exclusive self-attention and "
              "sigmoid-gated projections: not written yet",
    "perceiver": "Perceiver IO: cross-attention from learned latents to byte inputs and a query decoder back to "
                 "the positions: not written yet",
    "reformer": "Reformer: LSH attention (random rotations, hashing and sorting into chunks per forward) and "
                "reversible layers with axial positions: not written yet",
    "tipsv2_text_model": "TIPSv2's text tower: not written yet",
    "ultravbert": "UltraVBERT: a vision tower feeding UltraBERT through a connector (an image-text encoder): "
                  "not written yet",
}

# A type of another kind: its kind's reason.
KIND_REASONS = {
    "vision-language": "vision-language model: not registered (its text part, where it has one, is its own row)",
    "speech": "audio generation: not a text decoder",
    "multimodal": "multimodal (audio) model: not a text decoder",
    "text encoder": "text encoder: its is_decoder causal-LM head is not built",
    "encoder-decoder": "encoder-decoder: its decoder alone (*ForCausalLM) is not built",
}


def hf_model_types() -> dict[str, tuple[str, str]]:
    """model_type -> (kind, mechanism) from src/registry/hf_model_types.inc."""
    text = (REPO / "src" / "registry" / "hf_model_types.inc").read_text()
    return {m[0]: (m[1], m[4]) for m in
            re.findall(r'^\{"([^"]+)", "([^"]*)", "([^"]*)", "([^"]*)", "([^"]*)"\}', text, re.M)}


def not_yet(registered: set[str]) -> list[tuple[str, str]]:
    """(model_type, reason) for every causal-LM type of transformers outside `registered`; raises
    KeyError naming a decoder-only type without a reason."""
    from transformers.models.auto.modeling_auto import MODEL_FOR_CAUSAL_LM_MAPPING_NAMES

    kinds = hf_model_types()
    out, missing = [], []
    for t in sorted(set(MODEL_FOR_CAUSAL_LM_MAPPING_NAMES) - registered):
        kind, mechanism = kinds.get(t, ("text-generation", ""))
        if t in REASONS:
            out.append((t, REASONS[t]))
        elif kind in KIND_REASONS:
            out.append((t, KIND_REASONS[kind]))
        elif mechanism == "state-space":
            out.append((t, STATE_SPACE))
        else:
            missing.append(t)
    if missing:
        raise KeyError(f"causal-LM types without a reason in scripts/not_yet.py REASONS: {missing}")
    return out


def encoders_not_yet(registered: set[str]) -> list[tuple[str, str]]:
    """(model_type, reason) for every text encoder type of transformers (kind "text encoder") outside
    `registered`; raises KeyError naming one without a line in ENCODER_REASONS."""
    kinds = hf_model_types()
    types = sorted(t for t, (kind, _) in kinds.items() if kind == "text encoder" and t not in registered)
    missing = [t for t in types if t not in ENCODER_REASONS]
    if missing:
        raise KeyError(f"text encoder types without a reason in scripts/not_yet.py ENCODER_REASONS: {missing}")
    return [(t, ENCODER_REASONS[t]) for t in types]
