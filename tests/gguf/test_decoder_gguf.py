"""`mobius build --gguf` on tiny models of every GGUF architecture mobius reads (llama, mistral, qwen2,
qwen3, phi3, starcoder2, stablelm, nemotron, gemma2, qwen2moe, qwen3moe, minimax-m2, mamba, gpt2, bloom,
falcon, t5, lfm2; gemma3 in test_gemma3_gguf.py, gpt-oss in test_gpt_oss_gguf.py, gemma4 in test_gemma4_gguf.py) against transformers' own GGUF loader, or, where that loader
builds another model than the file holds, against the original model.

The tiny random causal LM of the parity harness is written as GGUF the way convert_hf_to_gguf.py
does (llama's Q/K rows permuted, Gemma 2's and Nemotron's norms stored as 1 + w, gguf
TensorNameMap names, <arch>.* metadata), with
F32, F16 or Q8_0 weight matrices. transformers loads the file (from_pretrained(gguf_file=...):
dequantize, un-permute), and its config and state dict are saved as a safetensors checkpoint; `mobius build --config` of that
checkpoint is the reference for `mobius build --gguf` of the file:
- the external weight data of the two packages is byte-identical (same bound weights),
- logits of the two agree within 1e-5 on the harness's left-padded prefill batch,
- and the --gguf package matches the transformers model itself within the parity tolerance.
For F32 the GGUF round trip is lossless, so the --gguf weights also equal the original checkpoint's.
"""

import copy
import filecmp

import gguf
import numpy as np
import pytest
import torch
import transformers
from transformers import AutoConfig, AutoModelForCausalLM, AutoModelForSeq2SeqLM

import harness as H
import seq2seq_harness as S
from gguf_testlib import (ARCHS, QT, assert_matches_transformers, dump_floats, dump_json, write_bloom_gguf,
                          write_falcon_gguf, write_gguf, write_gpt2_gguf, write_lfm2_gguf, write_mamba_gguf,
                          write_t5_gguf)

VARIANTS = [
    ("f32", "llama", QT.F32, {}),
    ("f16", "llama", QT.F16, {}),
    ("q8_0", "llama", QT.Q8_0, {}),
    ("q8_0-tied", "llama", QT.Q8_0, {"tie_word_embeddings": True}),
    ("qwen2-f32", "qwen2", QT.F32, {}),
    ("qwen2-q8_0-tied", "qwen2", QT.Q8_0, {"tie_word_embeddings": True}),
    # transformers' GGUF loader leaves Qwen3's head_dim at the config class' 128 (GGUF_CONFIG_MAPPING
    # maps no attention.key_length), which mobius reads: the rows use the head size every Qwen3 has
    ("qwen3-f32", "qwen3", QT.F32, {"head_dim": 128}),
    ("qwen3-q8_0", "qwen3", QT.Q8_0, {"head_dim": 128}),
    # fused qkv_proj / gate_up_proj; a pad id in the file (Phi3Config's default 32000 is outside the vocabulary)
    ("phi3-f32", "phi3", QT.F32, {"pad_token_id": 0}),
    ("phi3-q8_0", "phi3", QT.Q8_0, {"pad_token_id": 0}),
    ("starcoder2-f32", "starcoder2", QT.F32, {}),  # LayerNorm with bias, c_fc / c_proj
    # transformers' loader reads no use_bias / attention_bias / mlp_bias (GGUF_CONFIG_MAPPING): a file
    # without StarCoder2's biases or with Nemotron's gets the class default there, so the rows keep them
    ("starcoder2-untied-q8_0", "starcoder2", QT.Q8_0, {"tie_word_embeddings": False}),
    ("stablelm-f32", "stablelm", QT.F32, {}),  # rope.dimension_count: a quarter of each head rotates
    ("stablelm-parallel-qkv-bias", "stablelm", QT.Q8_0, {"use_parallel_residual": True, "use_qkv_bias": True}),
    ("nemotron-f32", "nemotron", QT.F32, {}),  # LayerNorm1P stored as 1 + w, relu2, half rotary
    ("nemotron-q8_0", "nemotron", QT.Q8_0, {}),
    # transformers leaves query_pre_attn_scalar at the class' 256 (GGUF stores none) where llama.cpp
    # scales by head_dim: the row's head size is 256, where the two agree
    ("gemma2-f32", "gemma2", QT.F32, {"head_dim": 256, "query_pre_attn_scalar": 256}),
    ("gemma2-q8_0", "gemma2", QT.Q8_0, {"head_dim": 256, "query_pre_attn_scalar": 256}),
    # stacked experts ffn_{gate,up,down}_exps; transformers' loader maps no expert widths (the class
    # defaults: Qwen2-MoE 1408 / shared 5632, Qwen3-MoE 768) and normalizes Qwen3-MoE's top-k
    # weights as llama.cpp does: the rows take those values
    ("qwen2_moe-f32", "qwen2_moe", QT.F32, {"moe_intermediate_size": 1408, "shared_expert_intermediate_size": 5632}),
    ("qwen3_moe-q8_0", "qwen3_moe", QT.Q8_0, {"moe_intermediate_size": 768, "norm_topk_prob": True}),
    # stacked experts as block_sparse_moe.experts.e.w1 / w3 / w2, exp_probs_b.bias as the router's
    # e_score_correction_bias, full-width q/k norms; rope.dimension_count as rotary_dim
    ("minimax_m2-f32", "minimax_m2", QT.F32, {}),
    ("minimax_m2-q8_0-rotary-8-tied", "minimax_m2", QT.Q8_0, {"rotary_dim": 8, "tie_word_embeddings": True}),
]


def save_converted(ref, path):
    """save_pretrained of the GGUF-loaded model (transformers marks it quantized and refuses to
    save it): the same config without quantization_config, the same state dict."""
    config = copy.deepcopy(ref.config)
    if hasattr(config, "quantization_config"):
        del config.quantization_config
    plain = AutoModelForCausalLM.from_config(config, dtype=torch.float32)
    plain.load_state_dict(ref.state_dict(), strict=True)
    plain.save_pretrained(path)


@pytest.mark.parametrize("name,model_type,qtype,overrides", VARIANTS, ids=[v[0] for v in VARIANTS])
def test_gguf_build_equals_transformers_conversion(tmp_path, name, model_type, qtype, overrides):
    original = H.write_checkpoint(model_type, overrides, tmp_path / "hf")
    gguf_path = tmp_path / "model.gguf"
    write_gguf(original, gguf_path, qtype)

    ref = AutoModelForCausalLM.from_pretrained(tmp_path, gguf_file=gguf_path.name, dtype=torch.float32,
                                               attn_implementation="eager").eval()
    assert ref.config.tie_word_embeddings == original.config.tie_word_embeddings
    save_converted(ref, tmp_path / "converted")

    r = H.run_mobius("build", "--gguf", gguf_path, tmp_path / "out-gguf")
    assert r.returncode == 0, r.stderr
    # the only warning: this tiny GGUF has no tokenizer metadata, so the genai package has no tokenizer
    assert r.stderr.splitlines() == [f"mobius: warning: no tokenizer files in {gguf_path} (no tokenizer metadata): "
                                     "onnxruntime-genai's og.Tokenizer reads tokenizer.json and tokenizer_config.json "
                                     f"from the package; copy the model's tokenizer files into {tmp_path / 'out-gguf'} "
                                     "before running it there"], r.stderr
    H.build(tmp_path / "converted", tmp_path / "out-config")
    assert filecmp.cmp(H.data_path(tmp_path / "out-gguf"), H.data_path(tmp_path / "out-config"),
                       shallow=False), "bound weights differ from transformers' conversion"
    if qtype == QT.F32 and not ARCHS[model_type][2]:  # (w + 1) - 1 of a shifted norm rounds
        H.build(tmp_path / "hf", tmp_path / "out-original")
        assert filecmp.cmp(H.data_path(tmp_path / "out-gguf"),
                           H.data_path(tmp_path / "out-original"), shallow=False), \
            "F32 GGUF weights differ from the original checkpoint"

    ids, mask, pos = H.prefill_batch(ref.config.vocab_size)
    valid = mask.astype(bool)
    gguf_logits, _ = H.OnnxLM(H.graph_path(tmp_path / "out-gguf", "model"), ref.config)(ids, mask, pos)
    config_logits, _ = H.OnnxLM(H.graph_path(tmp_path / "out-config", "model"), ref.config)(ids, mask, pos)
    assert H.max_abs(gguf_logits[valid], config_logits[valid]) <= 1e-5
    hf_logits, _ = H.hf_forward(ref, ids, mask, pos)
    assert H.max_abs(gguf_logits[valid], hf_logits[valid]) <= H.TOL
    assert np.isfinite(gguf_logits).all()


def check_gguf_build(tmp_path, path, ref, compare_original: bool) -> None:
    """Builds the GGUF file `path`; with compare_original, its weights must be byte-identical to the
    build of the original checkpoint in tmp_path/hf (a lossless F32 file); its prefill logits must
    equal `ref`'s (a transformers model) within the parity tolerance."""
    r = H.run_mobius("build", "--gguf", path, tmp_path / "out-gguf")
    assert r.returncode == 0, r.stderr
    if compare_original:
        H.build(tmp_path / "hf", tmp_path / "out-original")
        assert filecmp.cmp(H.data_path(tmp_path / "out-gguf"), H.data_path(tmp_path / "out-original"), shallow=False)
    ids, mask, pos = H.prefill_batch(ref.config.vocab_size)
    valid = mask.astype(bool)
    got, _ = H.OnnxLM(H.graph_path(tmp_path / "out-gguf", "model"), ref.config)(ids, mask, pos)
    want, _ = H.hf_forward(ref, ids, mask, pos)
    assert H.max_abs(got[valid], want[valid]) <= H.TOL


# What transformers' GGUF loader drops (GGUF_CONFIG_MAPPING maps no use_bias / attention_bias /
# mlp_bias, no rope.freq_base for stablelm / starcoder2, no expert widths) mobius reads from the file: the --gguf
# build of an F32 file equals the original model it was converted from.
ORIGINAL_ROWS = [
    ("starcoder2-no-bias", "starcoder2", {"use_bias": False}),
    ("starcoder2-theta", "starcoder2", {"rope_parameters": {"rope_type": "default", "rope_theta": 100000.0}}),
    ("stablelm-theta", "stablelm", {"rope_parameters": {"rope_type": "default", "rope_theta": 50000.0,
                                                        "partial_rotary_factor": 0.5}}),
    ("nemotron-bias", "nemotron", {"attention_bias": True, "mlp_bias": True}),
    ("qwen2_moe-widths", "qwen2_moe", {}),  # expert_feed_forward_length 32, shared 96
    ("qwen3_moe-widths", "qwen3_moe", {"norm_topk_prob": True}),
]


@pytest.mark.parametrize("name,model_type,overrides", ORIGINAL_ROWS, ids=[r[0] for r in ORIGINAL_ROWS])
def test_gguf_build_equals_the_original_model(tmp_path, name, model_type, overrides):
    original = H.write_checkpoint(model_type, overrides, tmp_path / "hf")
    gguf_path = tmp_path / "model.gguf"
    write_gguf(original, gguf_path, QT.F32)
    check_gguf_build(tmp_path, gguf_path, original, compare_original=False)


@pytest.mark.parametrize("qtype", [QT.F32, QT.Q8_0], ids=lambda t: t.name)
def test_mamba_gguf_equals_transformers(tmp_path, qtype):
    """mamba (issue 27's GGUF row): A = -exp(A_log) and the squeezed conv1d weight undone. Every
    tensor equals transformers' loaded state dict (A_log = log(-A) within 2^-23 absolute of numpy's
    float32 log: A is near -1 where log's result is near 0, so one rounding of A is that much; the
    rest bit-identical), and the logits of the --gguf build (prefill batch, a decode step
    on its state) equal the GGUF-loaded transformers model within the parity tolerance."""
    original = H.write_checkpoint("mamba", {}, tmp_path / "hf")
    path = tmp_path / "mamba.gguf"
    write_mamba_gguf(original, path, qtype)
    ref = AutoModelForCausalLM.from_pretrained(tmp_path, gguf_file=path.name, dtype=torch.float32).eval()
    for name, t in ref.state_dict().items():
        if name == "lm_head.weight":  # tied: bound from backbone.embeddings.weight
            continue
        got = dump_floats("hf-tensor", path, name, tmp_path).reshape(tuple(t.shape))
        want = t.numpy()
        if name.endswith("A_log"):
            assert np.allclose(got, want, rtol=0, atol=2 ** -23), name
        else:
            assert np.array_equal(got.view(np.uint32), want.view(np.uint32)), f"{name} differs from transformers"
    r = H.run_mobius("build", "--gguf", path, tmp_path / "out")
    assert r.returncode == 0, r.stderr
    assert_matches_transformers(tmp_path / "out", ref)


GPT2_ROWS = [("f32", QT.F32, {}), ("q8_0", QT.Q8_0, {}), ("f32-n_inner-positions", QT.F32, {"n_inner": 128})]


@pytest.mark.parametrize("name,qtype,overrides", GPT2_ROWS, ids=[r[0] for r in GPT2_ROWS])
def test_gpt2_gguf(tmp_path, name, qtype, overrides):
    """gpt2: the Conv1D weights the converter transposed to [out, in] are read back as [in, out].
    n_positions comes from position_embd's rows and n_inner from ffn_up's, which transformers'
    loader does not map (it keeps GPT2Config's 1024 and 4 * n_embd): the rows with those values
    equal transformers' GGUF load (logits within 1e-4; F32 weights byte-identical to the original
    checkpoint's build), the row with others (n_inner 128, 512 positions) equals the original model."""
    defaults = not overrides
    overrides = {"max_position_embeddings": 1024, "n_inner": None} if defaults else overrides
    original = H.write_checkpoint("gpt2", overrides, tmp_path / "hf")
    path = tmp_path / "gpt2.gguf"
    write_gpt2_gguf(original, path, qtype)
    ref = (AutoModelForCausalLM.from_pretrained(tmp_path, gguf_file=path.name, dtype=torch.float32).eval()
           if defaults else original)
    check_gguf_build(tmp_path, path, ref, compare_original=qtype == QT.F32)


@pytest.mark.parametrize("qtype", [QT.F32, QT.Q8_0], ids=lambda t: t.name)
def test_bloom_gguf_equals_transformers(tmp_path, qtype):
    """bloom: the fused query_key_value the converter reordered to [q; k; v] of all heads is read
    back per head (weight and bias). Logits of the --gguf build equal transformers' GGUF load
    (BloomTensorProcessor undoes the same) within 1e-4; F32 weights are byte-identical to the
    original checkpoint's build."""
    original = H.write_checkpoint("bloom", {}, tmp_path / "hf")
    path = tmp_path / "bloom.gguf"
    write_bloom_gguf(original, path, qtype)
    ref = AutoModelForCausalLM.from_pretrained(tmp_path, gguf_file=path.name, dtype=torch.float32).eval()
    check_gguf_build(tmp_path, path, ref, compare_original=qtype == QT.F32)


FALCON_ROWS = [
    # the 7B layout (multi-query, one norm): what transformers' loader builds (FalconConfig's
    # defaults; it maps no ffn_hidden_size: the converter's 4 * hidden)
    ("f32", QT.F32, {"ffn_hidden_size": 256}, True),
    ("q8_0", QT.Q8_0, {"ffn_hidden_size": 256}, True),
    # the 40B layout (ln_attn / ln_mlp, 2 key/value groups: the fused qkv regrouped by the
    # converter), one norm with groups (Falcon2-11B), a narrower MLP: transformers' loader builds
    # the 7B layout for these (the 40B one fails to load), so the rows compare with the original
    # model (F32: lossless)
    ("new-architecture", QT.F32, {"new_decoder_architecture": True, "num_kv_heads": 2}, False),
    ("new-architecture-one-norm", QT.F32, {"new_decoder_architecture": True, "num_kv_heads": 2,
                                           "num_ln_in_parallel_attn": 1}, False),
    ("ffn-128", QT.F32, {}, False),
]


@pytest.mark.parametrize("name,qtype,overrides,via_transformers", FALCON_ROWS, ids=[r[0] for r in FALCON_ROWS])
def test_falcon_gguf(tmp_path, name, qtype, overrides, via_transformers):
    """falcon: the fused query_key_value the converter regrouped to [all queries; all keys; all
    values] read back per key/value group, the layout from the file (a second norm, the key/value
    head count), the MLP width from ffn_up. Logits within 1e-4 of transformers' GGUF load (7B
    layout) or of the original model; F32 weights byte-identical to the original checkpoint's build."""
    original = H.write_checkpoint("falcon", overrides, tmp_path / "hf")
    path = tmp_path / "falcon.gguf"
    write_falcon_gguf(original, path, qtype)
    ref = (AutoModelForCausalLM.from_pretrained(tmp_path, gguf_file=path.name, dtype=torch.float32).eval()
           if via_transformers else original)
    check_gguf_build(tmp_path, path, ref, compare_original=qtype == QT.F32)


# T5 family: the seq2seq harness' tiny sizes, relative_attention_max_distance 128 (GGUF stores none;
# llama.cpp's constant and T5Config's default)
T5_ROWS = [
    # transformers' loader builds every "t5" file as gated ReLU (is_gated_act with T5Config's
    # default feed_forward_proj "relu"): neither T5 v1.1's gated GELU nor the original T5's ReLU,
    # so these rows compare with the original model (F32: lossless)
    ("t5-gated-gelu", "t5", {"feed_forward_proj": "gated-gelu"}, QT.F32, False),
    ("t5-gated-gelu-untied", "t5", {"feed_forward_proj": "gated-gelu", "tie_word_embeddings": False}, QT.F32, False),
    ("t5-relu", "t5", {"feed_forward_proj": "relu"}, QT.F32, False),
    # general.name "umt5": transformers' loader builds UMT5 (gated GELU, a relative bias per block)
    ("umt5", "umt5", {"feed_forward_proj": "gated-gelu"}, QT.F32, True),
    ("umt5-q8_0", "umt5", {"feed_forward_proj": "gated-gelu"}, QT.Q8_0, True),
]


@pytest.mark.parametrize("name,model_type,overrides,qtype,via_transformers", T5_ROWS, ids=[r[0] for r in T5_ROWS])
def test_t5_gguf(tmp_path, name, model_type, overrides, qtype, via_transformers):
    """t5 (encoder-decoder: the seq2seq package, encoder.onnx + decoder.onnx): enc.blk / dec.blk
    tensors back to encoder.block / decoder.block, the feed-forward from the file (ffn_gate: gated
    GELU, else ReLU), UMT5 by general.name. The encoder output, a decoder prefill and 3 decode steps
    (logits and both caches) within 1e-4 of transformers' GGUF load (umt5) or of the original model;
    F32 weights byte-identical to the original checkpoint's build."""
    row = S.Row(model_type, name, dict(S.T5, relative_attention_max_distance=128, **overrides))
    original = S.write_checkpoint(row, tmp_path / "hf")
    path = tmp_path / "t5.gguf"
    write_t5_gguf(original, path, qtype, name=f"tiny-{model_type}")
    ref = (AutoModelForSeq2SeqLM.from_pretrained(tmp_path, gguf_file=path.name, dtype=torch.float32).eval()
           if via_transformers else original)
    r = H.run_mobius("build", "--gguf", path, tmp_path / "out-gguf")
    assert r.returncode == 0, r.stderr
    if qtype == QT.F32:
        H.build(tmp_path / "hf", tmp_path / "out-original")
        for g in S.GRAPHS:
            assert filecmp.cmp(H.data_path(tmp_path / "out-gguf", g), H.data_path(tmp_path / "out-original", g),
                               shallow=False), g
    rec = {}
    ref64 = H.float64(ref)
    assert S.check_steps(ref64, ref64, S.OnnxSeq2Seq(tmp_path / "out-gguf"), rec, S.DECODE_STEPS) == []


LFM2_ROWS = [
    ("f32", QT.F32, {}, True),  # the harness' layers conv, attention, conv; the MLP width auto-adjusted
    ("q8_0-untied", QT.Q8_0, {"tie_word_embeddings": False}, True),
    # conv_bias: transformers' loader drops the convolution's own bias (its LFM2 conversion maps
    # shortconv.conv.weight alone: conv.conv.bias stays zero), so the row compares with the
    # original model (F32: lossless)
    ("conv-bias-kernel-4", QT.F32, {"conv_bias": True, "conv_L_cache": 4}, False),
]


@pytest.mark.parametrize("name,qtype,overrides,via_transformers", LFM2_ROWS, ids=[r[0] for r in LFM2_ROWS])
def test_lfm2_gguf(tmp_path, name, qtype, overrides, via_transformers):
    """lfm2: the layer types from the per-layer key/value head counts, the squeezed short-convolution
    weight back to [hidden, 1, L], the adjusted MLP width as stored. Logits within 1e-4 of
    transformers' GGUF load or of the original model; F32 weights byte-identical to the original
    checkpoint's build."""
    original = H.write_checkpoint("lfm2", overrides, tmp_path / "hf")
    path = tmp_path / "lfm2.gguf"
    write_lfm2_gguf(original, path, qtype)
    ref = (AutoModelForCausalLM.from_pretrained(tmp_path, gguf_file=path.name, dtype=torch.float32).eval()
           if via_transformers else original)
    check_gguf_build(tmp_path, path, ref, compare_original=qtype == QT.F32)


def test_t5encoder_gguf(tmp_path):
    """t5encoder (a T5EncoderModel, as Flux's and SD3's text_encoder_2 are converted): the encoder
    alone, T5EncoderModel's feature-extraction graph; last_hidden_state on the non-padding tokens
    within 1e-4 of the output's scale against the original model (transformers' loader builds it with
    gated ReLU, see T5_ROWS); weights byte-identical to the original checkpoint's build."""
    torch.manual_seed(0)
    config = transformers.T5Config(**dict(S.T5, relative_attention_max_distance=128, feed_forward_proj="gated-gelu"))
    model = transformers.T5EncoderModel(config).eval()
    H.rerandomize(model)
    model.save_pretrained(tmp_path / "hf")
    path = tmp_path / "t5encoder.gguf"
    write_t5_gguf(model, path, arch="t5encoder")
    r = H.run_mobius("build", "--gguf", path, tmp_path / "out-gguf")
    assert r.returncode == 0, r.stderr
    H.build(tmp_path / "hf", tmp_path / "out-original")
    assert filecmp.cmp(H.data_path(tmp_path / "out-gguf"), H.data_path(tmp_path / "out-original"), shallow=False)
    sess = H.ort_session(H.graph_path(tmp_path / "out-gguf", "model"))
    ids, mask = S.encoder_batch(config.vocab_size)
    with torch.no_grad():
        want = H.float64(model)(input_ids=torch.as_tensor(ids), attention_mask=torch.as_tensor(mask)) \
            .last_hidden_state.numpy()
    (got,) = sess.run(["last_hidden_state"], {"input_ids": ids, "attention_mask": mask})
    valid = mask.astype(bool)
    assert H.max_abs(got[valid], want[valid]) <= H.TOL * float(np.max(np.abs(want[valid])))


def test_mistral_gguf(tmp_path):
    """mistral: a llama file whose general.name is "mistral" (what transformers' loader tests) is a
    Mistral model. transformers reads its config (MistralConfig) but cannot load its tensors (gguf-py
    has no "mistral" architecture for the name map): the config fields equal transformers' except
    sliding_window, which GGUF does not store (None, as llama.cpp runs it; transformers keeps the
    class' 4096, longer than every sequence here); the F32 weights are byte-identical to the
    original checkpoint's build and the logits equal the original model's within 1e-4."""
    original = H.write_checkpoint("mistral", {}, tmp_path / "hf")
    path = tmp_path / "mistral.gguf"
    write_gguf(original, path, QT.F32)
    want = AutoConfig.from_pretrained(tmp_path, gguf_file=path.name).to_dict()
    ours = dump_json("config", path)
    for f in ("model_type", "hidden_size", "intermediate_size", "num_hidden_layers", "num_attention_heads",
              "num_key_value_heads", "head_dim", "rms_norm_eps", "max_position_embeddings", "vocab_size",
              "tie_word_embeddings", "rope_parameters"):
        assert ours[f] == want[f], f"{f}: ours {ours[f]!r}, transformers {want[f]!r}"
    assert ours["sliding_window"] is None and want["sliding_window"] == 4096
    with pytest.raises(NotImplementedError, match="Unknown gguf model_type: mistral"):
        AutoModelForCausalLM.from_pretrained(tmp_path, gguf_file=path.name, dtype=torch.float32)
    check_gguf_build(tmp_path, path, original, compare_original=True)


def test_refused_architecture_names_the_reason(tmp_path):
    """The one architecture of transformers' GGUF loader that mobius refuses (deci) says why."""
    arch = "deci"
    path = tmp_path / f"{arch}.gguf"
    w = gguf.GGUFWriter(str(path), arch)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    r = H.run_mobius("build", "--gguf", path, tmp_path / "out")
    assert r.returncode != 0
    assert f"architecture '{arch}' is not supported for GGUF input: " in r.stderr, r.stderr
