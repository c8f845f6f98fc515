#!/usr/bin/env python3
"""Runs the ONNX Runtime GenAI model builder (`python -m onnxruntime_genai.models.builder ARGS`)
with the RoPE fields it reads under transformers 5, which moved them into `rope_parameters`.

onnxruntime-genai 0.18's builder reads `config.rope_theta` (absent under transformers 5: it falls
back to 10000, so a Qwen2.5 package would rotate with the wrong base), `config.rope_local_base_freq`
(Gemma 3's sliding-layer base) and `config.rope_parameters["rope_type"]`, which fails on Gemma 3's
per-layer-type dict {"full_attention": {...}, "sliding_attention": {...}} (KeyError 'rope_type').
This wrapper gives every config that AutoConfig loads those three back from `rope_parameters`
(global = full_attention, local = sliding_attention), leaving the dict's own keys as they are so
that transformers' modeling code reads it unchanged, and then runs the builder as `-m` would.
Used by bench/bench_decode.py; nothing else of the builder is changed.
"""

import runpy
import sys

from transformers import AutoConfig


class _PerLayerType(dict):
    """Gemma 3's per-layer-type rope_parameters; keys it lacks come from full_attention."""

    def __missing__(self, key):
        return self["full_attention"][key]


def _with_rope_fields(config):
    rope = getattr(config, "rope_parameters", None)
    if isinstance(rope, dict):
        if "full_attention" in rope and "rope_type" not in rope:
            config.rope_parameters = rope = _PerLayerType(rope)
            if "sliding_attention" in rope and not hasattr(config, "rope_local_base_freq"):
                config.rope_local_base_freq = rope["sliding_attention"]["rope_theta"]
        if "rope_theta" in rope and not hasattr(config, "rope_theta"):
            config.rope_theta = rope["rope_theta"]
    return config


_from_pretrained = AutoConfig.from_pretrained
AutoConfig.from_pretrained = classmethod(lambda cls, *a, **k: _with_rope_fields(_from_pretrained(*a, **k)))

if __name__ == "__main__":
    sys.argv[0] = "onnxruntime_genai.models.builder"
    runpy.run_module("onnxruntime_genai.models.builder", run_name="__main__", alter_sys=True)
