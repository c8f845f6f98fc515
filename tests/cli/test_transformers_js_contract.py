"""What transformers.js (packages/transformers/src at 5ed4c5c0, package 4.2.0; not installable from this
machine's registries) requires of a package's graphs, checked on the packages mobius builds; the source
lines are read from its sources:
  - the first step's empty cache is made from the graph's input metadata: the dim named `batch_size`
    (or `batch_size x num_heads`) becomes the batch, every other symbolic dim 0
    (models/modeling_utils.js:1246 resolveCacheShape, 1274-1276 addPastKeyValues): so every cache
    input must name its first dim
    `batch_size`, its sequence dim symbolically and its heads and head size as numbers;
  - `position_ids` int64 (create_position_ids, modeling_utils.js:1566); `num_logits_to_keep` and
    `use_cache_branch` are passed only when a graph declares them (modeling_utils.js:1315-1318, 1334);
  - Whisper's encoder is fed `input_features` (models/whisper/modeling_whisper.js:18 main_input_name):
    `--runtime optimum` (docs/speech.md);
  - a VLM's `embed_tokens` is run with `input_ids` alone (encode_text, modeling_utils.js:1088, 1408)
    and a graph input it did not get is an error (models/session.js:269).
The file names (`onnx/model.onnx`, `encoder_model.onnx`, `decoder_model_merged.onnx`, `embed_tokens.onnx`,
...), `<graph>.onnx_data` and config.json's `transformers.js_config` are `--layout hf`
(tests/cli/test_layout.py, tests/parity/test_layouts.py; README "Run it with")."""

from __future__ import annotations

import numpy as np
import pytest

import harness as H
import seq2seq_harness as S
import speech_harness as W
import vlm_harness as V


def cache_dim_problems(sess) -> list[str]:
    """The cache inputs whose dims transformers.js cannot size (first dim not `batch_size`, sequence
    dim not symbolic, heads or head size not a number), and a declared num_logits_to_keep /
    use_cache_branch or a non-int64 position_ids."""
    out = []
    for i in sess.get_inputs():
        if i.name.startswith("past_key_values."):
            b, heads, seq, d = i.shape
            if b != "batch_size" or not isinstance(seq, str) or not isinstance(heads, int) or not isinstance(d, int):
                out.append(f"{i.name}: {i.shape}")
        if i.name in ("num_logits_to_keep", "use_cache_branch"):
            out.append(f"declares {i.name}")
        if i.name == "position_ids" and i.type != "tensor(int64)":
            out.append(f"position_ids {i.type}")
    return out


def test_decoder_cache_and_positions(tmp_path):
    model_type, _, overrides = next(r for r in H.rows() if r[0] == "llama")
    H.write_checkpoint(model_type, overrides, tmp_path / "hf")
    sess = H.ort_session(H.build(tmp_path / "hf", tmp_path / "onnx"))
    assert "position_ids" in {i.name for i in sess.get_inputs()}
    assert cache_dim_problems(sess) == []


def test_seq2seq_decoder_cache(tmp_path):
    S.write_checkpoint(next(r for r in S.ROWS if r.model_type == "bart"), tmp_path / "hf")
    H.build(tmp_path / "hf", tmp_path / "onnx")
    assert cache_dim_problems(H.ort_session(H.graph_path(tmp_path / "onnx", "decoder"))) == []


def test_whisper_optimum_contract(tmp_path):
    W.write_checkpoint(W.ROWS[0], tmp_path / "hf")
    H.build(tmp_path / "hf", tmp_path / "onnx", "--runtime", "optimum")
    encoder = H.ort_session(H.graph_path(tmp_path / "onnx", "encoder"))
    assert [i.name for i in encoder.get_inputs()] == ["input_features"]
    assert cache_dim_problems(H.ort_session(H.graph_path(tmp_path / "onnx", "decoder"))) == []


@pytest.mark.parametrize("model_type", ["llava", "idefics3"])
def test_embed_tokens_with_input_ids_alone(model_type, tmp_path):
    """The embedding graph of a family onnxruntime-genai does not run: input_ids is its one required
    input, and the call with it alone gives the token embeddings (image tokens included: no rows)."""
    model = V.write_checkpoint(V.base_row(model_type), tmp_path / "hf")
    H.build(tmp_path / "hf", tmp_path / "onnx")
    sess = H.ort_session(H.graph_path(tmp_path / "onnx", "embedding"))
    assert [i.name for i in sess.get_inputs()] == ["input_ids"]
    ids = np.array([[5, 6, model.config.image_token_id, 7]], np.int64)
    got = sess.run(["inputs_embeds"], {"input_ids": ids})[0]
    want = model.get_input_embeddings()(V.torch.from_numpy(ids)).detach().numpy()
    assert H.max_abs(got, want) <= H.TOL
