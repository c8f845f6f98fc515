#!/usr/bin/env python3
"""transformers' own exporter as a bench_build.py peer: loads CKPT (the whole model, in float32)
and exports it for generation with the ONNX backend (transformers.exporters: torch.export, then
onnxscript), dynamic shapes, each component into OUT. Run in bench/.venv-exporters
(bench/setup_bench.sh exporters).

    python bench/export_transformers.py CKPT OUT
"""

import sys
from pathlib import Path

import torch
from transformers import AutoConfig, AutoModelForCausalLM, AutoModelForSpeechSeq2Seq
from transformers.exporters import OnnxConfig, OnnxExporter


def main() -> int:
    ckpt, out = Path(sys.argv[1]), Path(sys.argv[2])
    config = AutoConfig.from_pretrained(ckpt)
    if config.model_type == "whisper":
        model = AutoModelForSpeechSeq2Seq.from_pretrained(ckpt, dtype=torch.float32)
        inputs = {"input_features": torch.zeros(1, config.num_mel_bins, 3000)}
    else:
        model = AutoModelForCausalLM.from_pretrained(ckpt, dtype=torch.float32)
        inputs = {"input_ids": torch.ones(1, 8, dtype=torch.long),
                  "attention_mask": torch.ones(1, 8, dtype=torch.long)}
    model.eval()
    with torch.no_grad():
        exported = OnnxExporter().export_for_generation(model, inputs, OnnxConfig(dynamic=True))
    exported.save_pretrained(out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
