"""Writes tests/data/param_keys/<model_type>.txt: the checkpoint keys (one a line, sorted) that
transformers' save_pretrained writes for the tiny config tests/data/configs/<model_type>.json, made
once and checked in. tests/unit/registry_params_test.cpp builds every registry row from its config
(graph construction only, no weights) and compares the checkpoint keys its graphs read with this list.

The model class is the config's `architectures[0]` (a transformers class name), as for a real
checkpoint. Seed 0; the key list does not depend on the values.

A config missing for a type that has a parity row (tests/parity: the ROWS of decoder_harness and
encoder_harness, made with harness.make_config, or of the harnesses in TASK_HARNESSES) is written first from that type's first row, with
`architectures` set to the class the parity test instantiates for that row (AutoModelForCausalLM /
AutoModel / AutoModelForSeq2SeqLM, a vision row's model_class, AutoModelForCTC for a CTC audio row,
WhisperForConditionalGeneration, MoonshineForConditionalGeneration, AutoModelForImageTextToText; AutoModelForCausalLM for phi4_multimodal), resolved to the concrete class; any
other type needs its config written by hand: a tiny config.json with model_type and architectures.

Usage: .venv/bin/python scripts/gen_param_keys.py MODEL_TYPE [MODEL_TYPE ...]
       .venv/bin/python scripts/gen_param_keys.py --all   (every tests/data/configs/*.json)
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
CONFIGS = REPO / "tests" / "data" / "configs"
KEYS = REPO / "tests" / "data" / "param_keys"


# (harness module, the transformers class its parity test instantiates for a row): each module's ROWS
# hold rows with .model_type and .config (AutoConfig.for_model kwargs)
TASK_HARNESSES = (
    ("seq2seq_harness", lambda r: "AutoModelForSeq2SeqLM"),
    ("vision_harness", lambda r: r.model_class),
    ("audio_harness", lambda r: "AutoModelForCTC" if r.ctc else "AutoModel"),
    ("speech_harness", lambda r: "WhisperForConditionalGeneration"),
    ("moonshine_harness", lambda r: "MoonshineForConditionalGeneration"),
    # phi4_multimodal is an AutoModelForCausalLM (Phi4MultimodalForCausalLM)
    ("vlm_harness", lambda r: "AutoModelForCausalLM" if r.model_type == "phi4_multimodal" else "AutoModelForImageTextToText"),
)


def harness_config(model_type: str) -> dict | None:
    """config.json of the first parity row of `model_type` (what save_pretrained writes), or None."""
    sys.path.insert(0, str(REPO / "tests" / "parity"))
    import importlib  # noqa: PLC0415

    import harness as H  # noqa: PLC0415
    import transformers  # noqa: PLC0415
    from transformers import AutoConfig  # noqa: PLC0415
    from transformers.models.auto import modeling_auto as M  # noqa: PLC0415

    first = next((ov for mt, _, ov in H.rows() + H.encoder_rows() if mt == model_type), None)
    if first is not None:
        overrides = first
        config = H.make_config(model_type, overrides)
        names = M.MODEL_MAPPING_NAMES if H.is_encoder(model_type) else M.MODEL_FOR_CAUSAL_LM_MAPPING_NAMES
        name = names[model_type]  # a tuple where AutoModel maps two classes (funnel: FunnelModel, FunnelBaseModel): the first
        config.architectures = [name[0] if isinstance(name, tuple) else name]
        return json.loads(config.to_json_string())
    for module, model_class in TASK_HARNESSES:
        row = next((r for r in importlib.import_module(module).ROWS if r.model_type == model_type), None)
        if row is None:
            continue
        config = AutoConfig.for_model(model_type, **row.config)
        cls = getattr(transformers, model_class(row))
        model = cls.from_config(config) if cls.__name__.startswith("Auto") else cls._from_config(config)
        config.architectures = [type(model).__name__]
        return json.loads(config.to_json_string())
    return None


def keys(config_path: Path) -> list[str]:
    import torch  # noqa: PLC0415
    import transformers  # noqa: PLC0415
    from safetensors import safe_open  # noqa: PLC0415

    data = json.loads(config_path.read_text())
    config = transformers.CONFIG_MAPPING[data["model_type"]].from_dict(data)
    torch.manual_seed(0)
    model = getattr(transformers, data["architectures"][0])(config)
    with tempfile.TemporaryDirectory() as d:
        model.save_pretrained(d)
        out = set()
        for f in sorted(Path(d).glob("*.safetensors")):
            with safe_open(str(f), "pt") as st:
                out |= set(st.keys())
    return sorted(out)


def main(argv: list[str]) -> int:
    types = sorted(p.stem for p in CONFIGS.glob("*.json")) if argv == ["--all"] else argv
    if not types:
        print(__doc__)
        return 2
    CONFIGS.mkdir(parents=True, exist_ok=True)
    KEYS.mkdir(parents=True, exist_ok=True)
    for t in types:
        cfg = CONFIGS / f"{t}.json"
        if not cfg.is_file():
            data = harness_config(t)
            if data is None:
                print(f"gen_param_keys: error: {cfg} is missing and {t} has no parity row to make it from: "
                      "write a tiny config.json there (model_type, architectures)", file=sys.stderr)
                return 1
            cfg.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n")
        names = keys(cfg)
        (KEYS / f"{t}.txt").write_text("".join(k + "\n" for k in names))
        print(f"{t}: {len(names)} keys")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
