"""T3 for encoder-decoders (task text2text-generation): transformers AutoModelForSeq2SeqLM
(float32, eager) vs the two-graph package mobius builds, one test per seq2seq_harness.ROWS row
(what each checks: tests/parity/seq2seq_harness.py). The rows join the printed parity table.
A subset also checks `--dtype f16` (seq2seq_harness.check_f16) and `--precision int4`
(check_int4), as test_dtypes.py and test_quantized.py do for decoders."""

import pytest

import harness as H
import seq2seq_harness as S

FIRST = len(H.rows()) + len(H.encoder_rows())
ROWS = [pytest.param(FIRST + i, r, id=f"{r.model_type}-{r.variant}") for i, r in enumerate(S.ROWS)]


@pytest.mark.parametrize("index,row", ROWS)
def test_seq2seq_parity(index, row, tmp_path_factory):
    with H.recorded(index, row.model_type, row.variant) as rec:
        failures = S.run(row, tmp_path_factory.mktemp(f"{row.model_type}-{row.variant}"), rec)
        rec.update(failures=failures, status="fail" if failures else "pass")
    assert not failures, "\n".join(failures)


# --ep cpu (GraphLowering::attention: every attention of both graphs as MultiHeadAttention, the decoder's with its
# self-attention cache as past/present and its cross-attention on the carried cross cache): the T5 layout (relative
# bias in the mask, unscaled) and the BART layout, through the same checks as the canonical rows
EP_ROWS = [r for r in S.ROWS if (r.model_type, r.variant) in {("t5", "v1.1-untied"), ("bart", "scaled-untied")}]


@pytest.mark.parametrize("row", EP_ROWS, ids=[f"{r.model_type}-{r.variant}" for r in EP_ROWS])
def test_seq2seq_ep_cpu(row, tmp_path_factory):
    work = tmp_path_factory.mktemp(f"{row.model_type}-{row.variant}-ep-cpu")
    failures = S.run(row, work, {}, ("--ep", "cpu"))
    failures += [p for g in ("encoder", "decoder") for p in H.attention_lowering_problems(H.graph_path(work / "onnx", g))]
    assert not failures, "\n".join(failures)


# --dtype f16 and --precision int4: the T5 layout (tied shared matrix, relative bias table) and the BART layout
# (untied embeddings, final_logits_bias, sinusoidal table constant in marian), the Switch experts, LED's local
# attention mask, LongT5's side keys, PEGASUS-X's global tokens, NLLB-MoE's top-2 experts, ProphetNet's streams
F16_ROWS = [r for r in S.ROWS if (r.model_type, r.variant) in
            {("t5", "v1.1-untied"), ("umt5", "base"), ("bart", "scaled-untied"), ("marian", "base"),
             ("switch_transformers", "capacity-3"), ("led", "windows-4-8"), ("longt5", "transient-global-3"),
             ("pegasus_x", "blocks-8-stagger"), ("nllb-moe", "fraction-0.2"), ("prophetnet", "ngram-2")}]


@pytest.mark.parametrize("row", F16_ROWS, ids=[f"{r.model_type}-{r.variant}" for r in F16_ROWS])
def test_seq2seq_f16(row, tmp_path_factory):
    failures = S.check_f16(row, tmp_path_factory.mktemp(f"{row.model_type}-{row.variant}-f16"))
    assert not failures, "\n".join(failures)


@pytest.mark.parametrize("row", F16_ROWS, ids=[f"{r.model_type}-{r.variant}" for r in F16_ROWS])
def test_seq2seq_int4(row, tmp_path_factory):
    failures = S.check_int4(row, tmp_path_factory.mktemp(f"{row.model_type}-{row.variant}-int4"))
    assert not failures, "\n".join(failures)


NLLB_MOE_ROWS = [r for r in S.ROWS if r.model_type == "nllb-moe"]


@pytest.mark.parametrize("row", NLLB_MOE_ROWS, ids=[r.variant for r in NLLB_MOE_ROWS])
def test_nllb_moe_drops_tokens(row):
    """The nllb-moe rows reach the capacity path: on the parity check's encoder batch and decoder
    prefill, transformers' router (the row's seed-0 model) keeps fewer expert choices than the
    tokens it routes make (2 a token: padding too with router_ignore_padding_tokens). And the
    harness' reference fix matters there: transformers 5.23's own NllbMoeExperts.forward gives
    other outputs (seq2seq_harness.REFERENCE_FIXES; drop the fix once this no longer holds)."""
    from transformers.models.nllb_moe.modeling_nllb_moe import NllbMoeTop2Router

    config = S.AutoConfig.for_model(row.model_type, **row.config)
    S.torch.manual_seed(0)
    model = S.AutoModelForSeq2SeqLM.from_config(config, dtype=S.torch.float32, attn_implementation="eager").eval()
    H.rerandomize(model)
    kept = []  # per router call: (tokens, expert choices kept)
    for m in model.modules():
        if isinstance(m, NllbMoeTop2Router):
            m.register_forward_hook(lambda mod, inp, out: kept.append((inp[0].shape[0], int((out[1] > 0).sum()))))
    ids, mask = map(S.torch.from_numpy, S.encoder_batch(config.vocab_size))
    dec = S.torch.full((2, S.DEC_PREFILL), config.decoder_start_token_id)
    with S.torch.no_grad():
        with S.reference_fix(row.model_type):
            fixed = model(input_ids=ids, attention_mask=mask, decoder_input_ids=dec).logits
        own = model(input_ids=ids, attention_mask=mask, decoder_input_ids=dec).logits
    (enc_tokens, enc_kept), (dec_tokens, dec_kept) = kept[:2]
    routed = enc_tokens if config.router_ignore_padding_tokens else int(mask.sum())
    assert enc_kept < 2 * routed, f"encoder: {enc_kept} of {2 * routed} choices kept, none dropped"
    assert dec_kept < 2 * dec_tokens, f"decoder prefill: {dec_kept} of {2 * dec_tokens} choices kept, none dropped"
    assert H.max_abs(fixed.numpy(), own.numpy()) > 1e-2, "transformers' NllbMoeExperts now agrees with the fix"


# Inputs shorter than the blocks of the new encoder attentions: LongT5 with no side key (fewer tokens than
# global_block_size), PEGASUS-X with one partial block, NLLB-MoE's capacity of a 1- or 2-token call, ProphetNet's
# positions and relative buckets from 1.
SHORT_ROWS = [r for r in S.ROWS if (r.model_type, r.variant) in
              {("longt5", "transient-global-3"), ("pegasus_x", "blocks-8-stagger"), ("nllb-moe", "fraction-0.2"),
               ("prophetnet", "ngram-2")}]


@pytest.mark.parametrize("row", SHORT_ROWS, ids=[f"{r.model_type}-{r.variant}" for r in SHORT_ROWS])
def test_seq2seq_short_inputs(row, tmp_path):
    """The encoder output (at the tokens) and the first decoder step's logits for batches of 1 and 2 tokens
    (the second row left-padded) and 3 rows of 9 (the last padded by 4), max|Δ| <= harness.TOL against
    transformers' float64 model (seq2seq_harness.reference_fix in place)."""
    model = H.float64(S.write_checkpoint(row, tmp_path / "hf"))
    H.build(tmp_path / "hf", tmp_path / "onnx")
    onnx = S.OnnxSeq2Seq(tmp_path / "onnx")
    rng = S.np.random.default_rng(5)
    failures = []
    for batch, length, pad in ((1, 1, 0), (2, 2, 1), (3, 9, 4)):
        ids = rng.integers(2, model.config.vocab_size, size=(batch, length))
        mask = S.np.ones_like(ids)
        ids[-1, :pad], mask[-1, :pad] = 0, 0
        start = S.np.full((batch, 1), model.config.decoder_start_token_id, S.np.int64)
        with S.torch.no_grad(), S.reference_fix(row.model_type):
            enc = model.get_encoder()(input_ids=S.torch.from_numpy(ids), attention_mask=S.torch.from_numpy(mask))
            logits = model(encoder_outputs=enc, attention_mask=S.torch.from_numpy(mask),
                           decoder_input_ids=S.torch.from_numpy(start)).logits.numpy()
        got_enc = onnx.encode(ids, mask)
        got_logits, _ = onnx.step(start, mask, got_enc, None)
        valid = mask.astype(bool)
        d = max(H.max_abs(got_enc[valid], enc.last_hidden_state.numpy()[valid]), H.max_abs(got_logits, logits))
        if not d <= H.TOL:
            failures.append(f"batch {batch} x {length} (padding {pad}): max|Δ| {d:.3g} > {H.TOL}")
    assert not failures, "\n".join(failures)
