"""T3 for encoders: transformers AutoModel (float32, eager; a head row: the task's AutoModelFor<Task>)
vs the ONNX model mobius builds, one row per encoder_harness.ROWS row (model_type, variant).

Each row: one padded batch of 2 (right- and left-padded rows), last_hidden_state compared on the
non-padding tokens, onnx.checker. The rows join the decoder rows in the printed parity table, the
batch's max|Δ| in its prefill column.
"""

import pytest

import encoder_harness as E
import harness as H

ROWS = [pytest.param(len(H.rows()) + i, mt, name, ov, id=f"{mt}-{name}")
        for i, (mt, name, ov) in enumerate(H.encoder_rows())]


@pytest.mark.parametrize("index,model_type,name,overrides", ROWS)
def test_encoder_parity(index, model_type, name, overrides, tmp_path_factory):
    with H.recorded(index, model_type, name) as row:
        failures = E.run_encoder_parity(model_type, overrides,
                                        tmp_path_factory.mktemp(f"{model_type}-{name}"), row)
        row.update(failures=failures, status="fail" if failures else "pass")
    assert not failures, "\n".join(failures)


# --ep cpu (GraphLowering::attention): the padding mask as MultiHeadAttention's attention_bias,
# packed q/k/v; BERT (token types), RoBERTa (positions from the ids), MPNet (the relative position
# bias in attention_bias), ALBERT (shared layers), DeBERTa and DeBERTa-v2 (the disentangled terms
# in attention_bias), RoFormer and ESM (rotary), Megatron-BERT (pre-norm), RemBERT (the embedding
# mapping), X-MOD (the language adapter), I-BERT, RoC-BERT, LayoutLM and MarkupLM (their further
# inputs), SqueezeBERT (grouped convolutions around its own attention), ModernBERT (fused Wqkv, the
# local layers' band), the rotary post-norm encoders (jina_embeddings_v3, nomic_bert, gte), the
# bidirectional Llama layers (eurobert; ultrabert's sliding band), XLM (langs) and FlauBERT, MobileBERT
# (bottlenecks, NoNorm, trigram input; its fill-mask decoder's further rows), TAPAS (its 7 token
# type ids, positions per cell), Splinter's question-aware span selection, ESM C (full-width q/k
# LayerNorms, scaled residuals), LUKE (word-only), ConvBERT (attention beside its span-based
# dynamic convolution), LiLT (the layout stream's attention beside the text's, each with the other's
# scores in attention_bias), LayoutLMv3 (1-D and 2-D relative position biases in attention_bias),
# XLNet (relative positions and segments in attention_bias, a padding query seeing itself),
# Nystromformer's plain path (attention beside its value conv), Longformer (its two attentions, band
# and global tokens), BigBird (the block-sparse pattern with its repeated block), CANINE (local
# chunks, molecules), Funnel (pooled queries over unpooled keys; relative_shift and factorized
# position terms, segments and the key mask in attention_bias), BROS (the box term in
# attention_bias; its float bbox input), the contrastive text towers (ChineseCLIP's BertPooler,
# AltCLIP's projection), and every head of five head layouts (BERT, RoBERTa, DistilBERT, ELECTRA:
# src/archs/bert.cpp; ModernBERT's prediction head and pooling). FNet, YOSO's expectation,
# Nystromformer's landmark path and OpenAI Privacy Filter (attention with sinks is written in
# primitives, blocks/attention_sinks.h) have no Attention to lower: their graphs are the same under --ep cpu.
EP_ROWS = [(mt, name, ov) for mt, name, ov in H.encoder_rows()
           if (mt, name) in {("bert", "default"), ("roberta", "default"), ("mpnet", "default"), ("albert", "default"),
                             ("deberta", "default"), ("deberta-v2", "default"), ("deberta-v2", "conv"),
                             ("roformer", "default"), ("esm", "default"), ("megatron-bert", "default"),
                             ("rembert", "default"), ("xmod", "default"), ("ibert", "default"),
                             ("roc_bert", "default"), ("layoutlm", "default"), ("markuplm", "default"),
                             ("squeezebert", "default"), ("modernbert", "default"), ("modernbert", "window-4-thetas"),
                             ("jina_embeddings_v3", "default"), ("nomic_bert", "default"), ("gte", "default"),
                             ("eurobert", "default"), ("ultrabert", "default"), ("xlm", "default"),
                             ("flaubert", "default"), ("mobilebert", "default"), ("mobilebert", "fill-mask"),
                             ("tapas", "default"), ("splinter", "question-answering"), ("esmc", "default"), ("luke", "default"),
                             ("convbert", "default"), ("lilt", "default"), ("layoutlmv3", "default"),
                             ("xlnet", "default"), ("nystromformer", "default"), ("longformer", "default"),
                             ("big_bird", "default"), ("canine", "default"), ("funnel", "default"),
                             ("funnel", "factorized-max-repeats"), ("bros", "default"),
                             ("chinese_clip_text_model", "default"), ("altclip_text_model", "default")}
           or (mt in {"bert", "roberta", "distilbert", "electra", "modernbert"} and name in E.HEAD_CLASSES)]


@pytest.mark.parametrize("model_type,name,overrides", EP_ROWS, ids=[f"{mt}-{n}" for mt, n, _ in EP_ROWS])
def test_encoder_ep_cpu(model_type, name, overrides, tmp_path_factory):
    work = tmp_path_factory.mktemp(f"{model_type}-{name}-ep-cpu")
    failures = E.run_encoder_parity(model_type, overrides, work, {}, ("--ep", "cpu"))
    failures += H.attention_lowering_problems(H.graph_path(work / "onnx", "model"))
    assert not failures, "\n".join(failures)


def test_head_checkpoint_as_feature_extraction(tmp_path):
    """--task feature-extraction on a head checkpoint (BertForSequenceClassification): the encoder
    read under base_model_prefix (bert.*), last_hidden_state equal to the checkpoint's bert."""
    import torch

    auto = E.HEAD_CLASSES["text-classification"][0]
    H.write_checkpoint("bert", {"_task": "text-classification"}, tmp_path / "hf", auto)
    ref = H.float64(H.load_reference(tmp_path / "hf", auto))
    ids, mask, types = E.encoder_batch(ref.config)
    path = H.build(tmp_path / "hf", tmp_path / "onnx", "--task", "feature-extraction")
    sess = H.ort_session(path)
    assert not H.io_problems(sess, {"input_ids", "attention_mask", "token_type_ids"}, {"last_hidden_state"})
    (got,) = sess.run(["last_hidden_state"], {"input_ids": ids, "attention_mask": mask, "token_type_ids": types})
    with torch.no_grad():
        want = ref.bert(input_ids=torch.as_tensor(ids), attention_mask=torch.as_tensor(mask),
                        token_type_ids=torch.as_tensor(types)).last_hidden_state.numpy()
    valid = mask.astype(bool)
    delta = H.max_abs(got[valid], want[valid])
    assert delta <= H.TOL, f"last_hidden_state max|Δ| {delta:.3g} > {H.TOL}"


def test_funnel_base_model(tmp_path):
    """A FunnelBaseModel checkpoint (funnel-transformer/*-base: the encoder without the upsampling
    decoder) under feature-extraction: last_hidden_state is the last block's pooled states
    [batch, pooled_length, d_model] (12 of the batch's 48 tokens), compared whole with the float64
    reference (the pooled rows mix tokens and padding, as transformers computes them)."""
    import torch
    from transformers import FunnelBaseModel

    torch.manual_seed(0)
    model = FunnelBaseModel(H.make_config("funnel", {})).eval()
    H.rerandomize(model)
    model.save_pretrained(tmp_path / "hf")
    ref = H.float64(H.load_reference(tmp_path / "hf", FunnelBaseModel))
    ids, mask, types = E.encoder_batch(ref.config)
    path = H.build(tmp_path / "hf", tmp_path / "onnx")
    sess = H.ort_session(path)
    assert not H.io_problems(sess, {"input_ids", "attention_mask", "token_type_ids"}, {"last_hidden_state"})
    (got,) = sess.run(["last_hidden_state"], {"input_ids": ids, "attention_mask": mask, "token_type_ids": types})
    want = E.hf_encode(ref, ids, mask, types)
    assert got.shape == want.shape == (2, 12, 64), f"last_hidden_state shape {got.shape}, expected {want.shape}"
    delta = H.max_abs(got, want)
    assert delta <= H.TOL, f"last_hidden_state max|Δ| {delta:.3g} > {H.TOL}"


@pytest.mark.parametrize("ep", ["default", "cpu"])
def test_clap_text_model_with_projection(ep, tmp_path):
    """clap_text_model saved by ClapTextModelWithProjection (AudioLDM's text_encoder): ClapTextModel
    under text_model.*, text_embeds = text_projection(pooler_output) (linear1, relu, linear2; not
    normalized) compared whole, last_hidden_state on the tokens, against the float64 reference;
    the graph reads input_ids and attention_mask only (the class' forward takes no token_type_ids)."""
    import torch
    from transformers import ClapTextModelWithProjection

    torch.manual_seed(0)
    model = ClapTextModelWithProjection._from_config(H.make_config("clap_text_model", {"projection_dim": 32}),
                                                     dtype=torch.float32, attn_implementation="eager").eval()
    H.rerandomize(model)
    model.save_pretrained(tmp_path / "hf")
    ref = H.float64(ClapTextModelWithProjection.from_pretrained(tmp_path / "hf", dtype=torch.float32,
                                                                attn_implementation="eager").eval())
    ids, mask, _ = E.encoder_batch(ref.config)
    path = H.build(tmp_path / "hf", tmp_path / "onnx", "--ep", ep)
    sess = H.ort_session(path)
    assert not H.io_problems(sess, {"input_ids", "attention_mask"}, {"text_embeds", "last_hidden_state"})
    embeds, last = sess.run(["text_embeds", "last_hidden_state"], {"input_ids": ids, "attention_mask": mask})
    with torch.no_grad():
        want = ref(input_ids=torch.as_tensor(ids), attention_mask=torch.as_tensor(mask))
    valid = mask.astype(bool)
    deltas = {"text_embeds": H.max_abs(embeds, want.text_embeds.numpy()),
              "last_hidden_state": H.max_abs(last[valid], want.last_hidden_state.numpy()[valid])}
    assert embeds.shape == (2, 32), f"text_embeds shape {embeds.shape}"
    assert all(d <= H.TOL for d in deltas.values()), f"max|Δ| {deltas} > {H.TOL}"
    if ep == "cpu":
        assert not H.attention_lowering_problems(path)


# --precision int4 / int8 (MatMulNBits of 4 or 8 bits) against onnxruntime's MatMulNBitsQuantizer on
# the float build: BERT (token types), DeBERTa-v2 (disentangled attention's projections),
# ModernBERT (fused Wqkv), and a head (BERT text-classification: the classifier quantized too)
QUANT_ROWS = [(mt, name, ov) for mt, name, ov in H.encoder_rows()
              if (mt, name) in {("bert", "default"), ("deberta-v2", "default"), ("modernbert", "default"),
                                ("bert", "text-classification")}]


@pytest.mark.parametrize("bits", [4, 8])
@pytest.mark.parametrize("model_type,name,overrides", QUANT_ROWS, ids=[f"{mt}-{n}" for mt, n, _ in QUANT_ROWS])
def test_encoder_quantized(model_type, name, overrides, bits, tmp_path_factory):
    failures = E.check_quantized(model_type, overrides, tmp_path_factory.mktemp(f"{model_type}-{name}-int{bits}"), bits)
    assert not failures, "\n".join(failures)
