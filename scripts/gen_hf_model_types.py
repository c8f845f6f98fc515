#!/usr/bin/env python3
"""Writes src/registry/hf_model_types.inc: for every transformers model_type (configuration_auto's
CONFIG_MAPPING_NAMES), the kind of model it is, taken from transformers' own auto-model task
mappings (models/auto/modeling_auto.py *_MAPPING_NAMES), the model class of that mapping (else the
base model's, MODEL_MAPPING_NAMES), for a composite config the model_type of its text part (the
config class's sub_configs["text_config"], when that is a concrete class), and its mechanism:
"state-space" when its modeling file runs a recurrent state instead of (or beside) attention
(Mamba's selective scan, gated delta rule / linear attention, RG-LRU, short convolutions, RWKV,
xLSTM: the kernels STATE_SPACE names), else "". mobius answers an unregistered model_type with it
(registry/registry.h explain_unregistered).

    .venv/bin/python scripts/gen_hf_model_types.py          # rewrite the table
    .venv/bin/python scripts/gen_hf_model_types.py --check  # exit 1 if the checked-in table differs
"""

import argparse
import re
import sys
from pathlib import Path

import transformers
import transformers.models.auto.modeling_auto as auto
from transformers.models.auto.configuration_auto import CONFIG_MAPPING, CONFIG_MAPPING_NAMES, model_type_to_module_name

OUT = Path(__file__).resolve().parents[1] / "src" / "registry" / "hf_model_types.inc"

# (kind, the auto mappings that make a model_type that kind), first match wins: a model that
# takes speech or images is that before it is a text generator (gemma3 is also a causal LM).
KINDS = [
    ("speech", ["SPEECH_SEQ_2_SEQ", "CTC", "RNNT", "TDT", "AUDIO_CLASSIFICATION", "AUDIO_FRAME_CLASSIFICATION",
                "AUDIO_XVECTOR", "TEXT_TO_SPECTROGRAM", "TEXT_TO_WAVEFORM"]),
    ("vision-language", ["IMAGE_TEXT_TO_TEXT", "VISUAL_QUESTION_ANSWERING", "DOCUMENT_QUESTION_ANSWERING",
                         "ZERO_SHOT_IMAGE_CLASSIFICATION", "ZERO_SHOT_OBJECT_DETECTION", "TEXT_RECOGNITION",
                         "RETRIEVAL"]),
    ("multimodal", ["MULTIMODAL_LM"]),
    ("encoder-decoder", ["SEQ_TO_SEQ_CAUSAL_LM"]),
    ("text encoder", ["MASKED_LM"]),  # before CAUSAL_LM, which also lists BertLMHeadModel & co.
    ("text-generation", ["CAUSAL_LM"]),
    ("text encoder", ["TEXT_ENCODING", "SEQUENCE_CLASSIFICATION", "TOKEN_CLASSIFICATION",
                      "QUESTION_ANSWERING", "MULTIPLE_CHOICE", "NEXT_SENTENCE_PREDICTION",
                      "TABLE_QUESTION_ANSWERING"]),
    ("video", ["VIDEO_CLASSIFICATION"]),
    ("time-series", ["TIME_SERIES_CLASSIFICATION", "TIME_SERIES_PREDICTION", "TIME_SERIES_REGRESSION"]),
    ("vision", ["IMAGE_CLASSIFICATION", "OBJECT_DETECTION", "IMAGE_SEGMENTATION", "SEMANTIC_SEGMENTATION",
                "INSTANCE_SEGMENTATION", "UNIVERSAL_SEGMENTATION", "DEPTH_ESTIMATION", "MASK_GENERATION",
                "KEYPOINT_DETECTION", "KEYPOINT_MATCHING", "POSE_ESTIMATION", "IMAGE_TO_IMAGE", "IMAGE_MATTING",
                "MASKED_IMAGE_MODELING", "CAUSAL_IMAGE_MODELING", "NORMAL_ESTIMATION", "POINTMAP_ESTIMATION",
                "TABLE_RECOGNITION", "BACKBONE", "IMAGE"]),
    ("reinforcement-learning", ["DECISION"]),
]


def sub_configs(model_type: str) -> dict:
    try:
        return dict(getattr(CONFIG_MAPPING[model_type], "sub_configs", {}))
    except Exception:  # a config class that fails to import: no parts known
        return {}


# model_types that are a part (text, vision, audio tower...) of another model_type's config
PARTS = {getattr(sub, "model_type", "") for mt in CONFIG_MAPPING_NAMES for sub in sub_configs(mt).values()
         if isinstance(sub, type)}


def kind_and_class(model_type: str) -> tuple[str, str]:
    for name, mappings in KINDS:
        for m in mappings:
            classes = getattr(auto, f"MODEL_FOR_{m}_MAPPING_NAMES", {})
            if model_type in classes:
                cls = classes[model_type]
                return name, cls if isinstance(cls, str) else cls[0]
    base = auto.MODEL_MAPPING_NAMES.get(model_type, "")
    base = base if isinstance(base, str) else base[0]
    return ("model part" if model_type in PARTS else "other"), base


# The recurrent kernels of state-space and hybrid models, as their modeling files name them (a word
# of the file): Mamba / Mamba2 (selective scan, causal_conv1d), gated delta rule and other linear
# attentions (Qwen3-Next, Kimi Linear, OLMo hybrid), RG-LRU (RecurrentGemma), LFM2's short
# convolutions, RWKV, xLSTM.
STATE_SPACE = re.compile(r"\b(causal_conv1d\w*|selective_state_update|selective_scan_fn|mamba_chunk_scan_combined|"
                         r"chunk_gated_delta_rule|\w*LinearAttention\w*|\w*Rglru\w*|\w*ShortConv\w*|"
                         r"\w*RwkvLinearAttention\w*|mLSTM\w*)\b")
MODELS = Path(transformers.__file__).parent / "models"


def mechanism(model_type: str, kind: str) -> str:
    if kind not in ("text-generation", "vision-language", "multimodal"):
        return ""  # a speech or vision model's convolutions, a tower of a composite model: no recurrent state
    module = MODELS / model_type_to_module_name(model_type)
    text = "".join(f.read_text(errors="replace") for f in module.glob("modeling_*.py"))
    return "state-space" if STATE_SPACE.search(text) else ""


def text_part(model_type: str) -> str:
    sub = sub_configs(model_type).get("text_config")
    text = getattr(sub, "model_type", "") if isinstance(sub, type) else ""
    return text if text and text != model_type else ""


def render() -> str:
    lines = [f"// Generated by scripts/gen_hf_model_types.py from transformers {transformers.__version__}: do not edit.",
             "// {model_type, kind (from transformers' auto-model task mappings), text part's model_type, "
             "model class, mechanism}"]
    for mt in sorted(CONFIG_MAPPING_NAMES):
        kind, cls = kind_and_class(mt)
        lines.append(f'{{"{mt}", "{kind}", "{text_part(mt)}", "{cls}", "{mechanism(mt, kind)}"}},')
    return "\n".join(lines) + "\n"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--check", action="store_true", help="exit 1 if the checked-in table differs")
    args = ap.parse_args()
    text = render()
    if args.check:
        same = OUT.is_file() and OUT.read_text() == text
        print(f"{OUT.name}: {'up to date' if same else 'differs from transformers ' + transformers.__version__}")
        return 0 if same else 1
    OUT.write_text(text)
    print(f"wrote {OUT} ({text.count(chr(10)) - 2} model types)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
