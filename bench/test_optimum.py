"""mobius packages in Optimum's ONNX Runtime classes (optimum-onnx 0.1.0, optimum 2.1.0, transformers
4.57.3: bench/requirements-optimum.txt, made by `bash bench/setup_bench.sh optimum`), one row per task
family against transformers' outputs on the same tiny checkpoint (made here, with that transformers,
seed 0, every parameter re-randomized). Run: bench/.venv-optimum/bin/python -m pytest bench/test_optimum.py
(scripts/test.sh does). Uses build/mobius of this checkout.

Each row: `mobius build` (text2text and speech: `--runtime optimum` for speech), Optimum's
from_pretrained on the package directory as it is (the default hf layout: onnx/model.onnx,
onnx/encoder_model.onnx + onnx/decoder_model_merged.onnx, Optimum's ONNX_ENCODER_NAME and
ONNX_DECODER_MERGED_NAME), then transformers' and Optimum's outputs on the same inputs: float
tensors max|Δ| <= 1e-4 and greedy generation (no token repeated) token for token; the text
encoders' heads (BertFor<Task>) in ORTModelFor<Task>. A diffusers pipeline folder (a tiny
StableDiffusionPipeline) is built to one package and run by ORTStableDiffusionPipeline from a prompt
against diffusers' own pipeline (diffusers 0.39.0), its latent and image within 1e-4 x their scale.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import numpy as np
import pytest
import torch
import transformers as T
from optimum.onnxruntime import (ORTModelForCausalLM, ORTModelForCTC, ORTModelForFeatureExtraction,
                                 ORTModelForImageClassification, ORTModelForMaskedLM, ORTModelForMultipleChoice,
                                 ORTModelForQuestionAnswering, ORTModelForSeq2SeqLM,
                                 ORTModelForSequenceClassification, ORTModelForSpeechSeq2Seq,
                                 ORTModelForTokenClassification)

MOBIUS = Path(__file__).resolve().parent.parent / "build" / "mobius"
TOL = 1e-4
NEW = 16
GREEDY = dict(max_new_tokens=NEW, min_new_tokens=NEW, do_sample=False, num_beams=1, no_repeat_ngram_size=1)


def rerandomize(model) -> None:
    """Every parameter from a seed-0 normal (matrices scaled by 1/sqrt(fan-in)), so that no row is a
    freshly initialized zero bias or unit norm."""
    g = torch.Generator().manual_seed(0)
    with torch.no_grad():
        for p in model.parameters():
            scale = p.shape[-1] ** -0.5 if p.dim() > 1 else 0.1
            p.copy_(torch.randn(p.shape, generator=g) * scale)


def make(model_class, config, hf: Path):
    torch.manual_seed(0)
    model = model_class(config).eval()
    rerandomize(model)
    model.save_pretrained(hf)
    return model


def build(hf: Path, out: Path, *args: str) -> Path:
    r = subprocess.run([str(MOBIUS), "build", str(hf), str(out), *args], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    return out


def close(got, want, what: str) -> None:
    d = float((torch.as_tensor(got) - torch.as_tensor(want)).abs().max())
    assert d <= TOL, f"{what}: max|Δ| {d:.3g} > {TOL}"


BART = dict(vocab_size=256, d_model=64, encoder_layers=2, decoder_layers=2, encoder_attention_heads=4,
            decoder_attention_heads=4, encoder_ffn_dim=128, decoder_ffn_dim=96, max_position_embeddings=64,
            pad_token_id=0, bos_token_id=2, eos_token_id=1, decoder_start_token_id=2, forced_eos_token_id=None)


def test_feature_extraction(tmp_path):
    cfg = T.BertConfig(vocab_size=256, hidden_size=64, num_hidden_layers=2, num_attention_heads=4,
                       intermediate_size=128, max_position_embeddings=64)
    ref = make(T.BertModel, cfg, tmp_path / "hf")
    ort = ORTModelForFeatureExtraction.from_pretrained(build(tmp_path / "hf", tmp_path / "pkg"))
    ids = torch.randint(3, 256, (2, 12), generator=torch.Generator().manual_seed(1))
    mask = torch.ones_like(ids)
    mask[1, 8:] = 0
    with torch.no_grad():
        want = ref(input_ids=ids, attention_mask=mask).last_hidden_state
    got = ort(input_ids=ids, attention_mask=mask).last_hidden_state
    close(got[mask.bool()], want[mask.bool()], "last_hidden_state")


# The text encoders' heads (src/tasks/text_heads.h), built from config.json's architectures.
HEADS = [("fill-mask", T.BertForMaskedLM, ORTModelForMaskedLM, ("logits",)),
         ("text-classification", T.BertForSequenceClassification, ORTModelForSequenceClassification, ("logits",)),
         ("token-classification", T.BertForTokenClassification, ORTModelForTokenClassification, ("logits",)),
         ("question-answering", T.BertForQuestionAnswering, ORTModelForQuestionAnswering,
          ("start_logits", "end_logits")),
         ("multiple-choice", T.BertForMultipleChoice, ORTModelForMultipleChoice, ("logits",))]


@pytest.mark.parametrize("task,model_class,ort_class,outputs", HEADS, ids=[h[0] for h in HEADS])
def test_text_heads(task, model_class, ort_class, outputs, tmp_path):
    cfg = T.BertConfig(vocab_size=256, hidden_size=64, num_hidden_layers=2, num_attention_heads=4,
                       intermediate_size=128, max_position_embeddings=64, num_labels=2 if task == "question-answering" else 3)
    ref = make(model_class, cfg, tmp_path / "hf")
    ort = ort_class.from_pretrained(build(tmp_path / "hf", tmp_path / "pkg"))
    shape = (2, 3, 12) if task == "multiple-choice" else (2, 12)
    ids = torch.randint(3, 256, shape, generator=torch.Generator().manual_seed(1))
    mask, types = torch.ones_like(ids), torch.zeros_like(ids)
    mask[1, ..., 8:] = 0
    types[..., 6:] = 1
    with torch.no_grad():
        want = ref(input_ids=ids, attention_mask=mask, token_type_ids=types)
    got = ort(input_ids=ids, attention_mask=mask, token_type_ids=types)
    per_token = task in ("fill-mask", "token-classification", "question-answering")
    for name in outputs:
        g, w = getattr(got, name), getattr(want, name)
        close(g[mask.bool()] if per_token else g, w[mask.bool()] if per_token else w, name)


def test_causal_lm(tmp_path):
    cfg = T.LlamaConfig(vocab_size=256, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                        num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=128)
    ref = make(T.LlamaForCausalLM, cfg, tmp_path / "hf")
    ort = ORTModelForCausalLM.from_pretrained(build(tmp_path / "hf", tmp_path / "pkg"), use_io_binding=False)
    ids = torch.randint(3, 256, (1, 10), generator=torch.Generator().manual_seed(1))
    with torch.no_grad():
        close(ort(input_ids=ids, attention_mask=torch.ones_like(ids)).logits, ref(input_ids=ids).logits, "logits")
        want = ref.generate(input_ids=ids, attention_mask=torch.ones_like(ids), **GREEDY)
    got = ort.generate(input_ids=ids, attention_mask=torch.ones_like(ids), **GREEDY)
    assert torch.equal(got, want), f"tokens {got.tolist()} != transformers {want.tolist()}"


@pytest.mark.parametrize("model_type", ["bart", "t5"])
def test_seq2seq_lm(model_type, tmp_path):
    """The decoder passed encoder_hidden_states at every step (ORTDecoderForSeq2Seq)."""
    if model_type == "bart":
        ref = make(T.BartForConditionalGeneration, T.BartConfig(**BART), tmp_path / "hf")
    else:
        cfg = T.T5Config(vocab_size=256, d_model=64, d_kv=16, d_ff=128, num_layers=2, num_heads=4,
                         decoder_start_token_id=0, pad_token_id=0, eos_token_id=1)
        ref = make(T.T5ForConditionalGeneration, cfg, tmp_path / "hf")
    ort = ORTModelForSeq2SeqLM.from_pretrained(build(tmp_path / "hf", tmp_path / "pkg"),
                                               use_io_binding=False)
    ids = torch.randint(3, 256, (2, 12), generator=torch.Generator().manual_seed(1))
    mask = torch.ones_like(ids)
    ids[1, :4], mask[1, :4] = 0, 0
    with torch.no_grad():
        want = ref.generate(input_ids=ids, attention_mask=mask, **GREEDY)
        close(ort(input_ids=ids, attention_mask=mask, decoder_input_ids=want[:, :8]).logits,
              ref(input_ids=ids, attention_mask=mask, decoder_input_ids=want[:, :8]).logits, "logits")
    got = ort.generate(input_ids=ids, attention_mask=mask, **GREEDY)
    assert torch.equal(got, want), f"tokens {got.tolist()} != transformers {want.tolist()}"


@pytest.mark.parametrize("model_type", ["whisper", "moonshine"])
def test_speech_seq2seq(model_type, tmp_path):
    """`--runtime optimum` (docs/speech.md): ORTModelForWhisper / ORTModelForMoonshine generate."""
    gen = torch.Generator().manual_seed(1)
    if model_type == "whisper":
        cfg = T.WhisperConfig(vocab_size=320, d_model=64, encoder_layers=2, decoder_layers=3, encoder_attention_heads=4,
                              decoder_attention_heads=4, encoder_ffn_dim=128, decoder_ffn_dim=96, num_mel_bins=80,
                              max_source_positions=1500, max_target_positions=64, pad_token_id=0, bos_token_id=1,
                              eos_token_id=2, decoder_start_token_id=3, suppress_tokens=None, begin_suppress_tokens=None)
        ref = make(T.WhisperForConditionalGeneration, cfg, tmp_path / "hf")
        inputs = {"input_features": torch.rand(2, 80, 3000, generator=gen) * 2 - 1,
                  "decoder_input_ids": torch.tensor([[3, 7, 8, 9]] * 2)}
    else:
        cfg = T.MoonshineConfig(vocab_size=320, hidden_size=64, intermediate_size=96, encoder_num_hidden_layers=2,
                                decoder_num_hidden_layers=3, encoder_num_attention_heads=4,
                                decoder_num_attention_heads=4, max_position_embeddings=64, pad_token_id=0,
                                bos_token_id=1, eos_token_id=2, decoder_start_token_id=1)
        ref = make(T.MoonshineForConditionalGeneration, cfg, tmp_path / "hf")
        values, mask = torch.rand(2, 16000, generator=gen) * 2 - 1, torch.ones(2, 16000, dtype=torch.long)
        values[0, 11000:], mask[0, 11000:] = 0, 0  # row 0 padded: the decoder reduces the mask to frames
        inputs = {"input_values": values, "attention_mask": mask}
    ort = ORTModelForSpeechSeq2Seq.from_pretrained(
        build(tmp_path / "hf", tmp_path / "pkg", "--runtime", "optimum"), use_io_binding=False)
    with torch.no_grad():
        want = ref.generate(**inputs, **GREEDY)
    got = ort.generate(**inputs, **GREEDY)
    assert torch.equal(got, want), f"tokens {got.tolist()} != transformers {want.tolist()}"


def test_image_classification(tmp_path):
    cfg = T.ViTConfig(image_size=32, patch_size=8, hidden_size=64, num_hidden_layers=2, num_attention_heads=4,
                      intermediate_size=128, num_labels=5)
    ref = make(T.ViTForImageClassification, cfg, tmp_path / "hf")
    ort = ORTModelForImageClassification.from_pretrained(build(tmp_path / "hf", tmp_path / "pkg"))
    pixels = torch.randn(2, 3, 32, 32, generator=torch.Generator().manual_seed(1))
    with torch.no_grad():
        close(ort(pixel_values=pixels).logits, ref(pixel_values=pixels).logits, "logits")


def test_ctc(tmp_path):
    cfg = T.Wav2Vec2Config(vocab_size=32, hidden_size=64, num_hidden_layers=2, num_attention_heads=4,
                           intermediate_size=128, conv_dim=(32, 32), conv_stride=(5, 2), conv_kernel=(10, 3),
                           num_conv_pos_embeddings=16, num_conv_pos_embedding_groups=4)
    ref = make(T.Wav2Vec2ForCTC, cfg, tmp_path / "hf")
    ort = ORTModelForCTC.from_pretrained(build(tmp_path / "hf", tmp_path / "pkg"))
    values = torch.randn(2, 4000, generator=torch.Generator().manual_seed(1))
    with torch.no_grad():
        close(ort(input_values=values).logits, ref(input_values=values).logits, "logits")


# A diffusers pipeline (src/driver/pipeline.h): a tiny StableDiffusionPipeline made by diffusers
# (UNet2DConditionModel, AutoencoderKL, CLIPTextModel with a CLIPTokenizer of a byte-level vocabulary,
# DDIMScheduler), built with one `mobius build`, run by ORTStableDiffusionPipeline from a prompt.
DIFFUSION_STEPS = 3


def diffusion_randomize(module, seed: int) -> None:
    """Every parameter N(0, 0.2) (norm weights and biases too), as tests/parity/test_diffusion_pipeline.py."""
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for p in module.parameters():
            p.copy_(torch.randn(p.shape, generator=g) * 0.2)


def byte_level_clip_tokenizer(path: Path, max_length: int):
    """A CLIPTokenizer whose vocabulary is CLIP's 256 byte symbols, each also as a word end, and the
    two special tokens (no merges): every prompt is tokenized character by character."""
    from transformers.models.clip.tokenization_clip import bytes_to_unicode

    symbols = list(bytes_to_unicode().values())
    vocab = {s: i for i, s in enumerate(symbols + [s + "</w>" for s in symbols] + ["<|startoftext|>", "<|endoftext|>"])}
    path.mkdir(parents=True)
    (path / "vocab.json").write_text(json.dumps(vocab))
    (path / "merges.txt").write_text("#version: 0.2\n")
    return T.CLIPTokenizer(str(path / "vocab.json"), str(path / "merges.txt"), model_max_length=max_length)


def close_scaled(got, want, what: str) -> None:
    """max|Δ| <= 1e-4 x the reference's largest magnitude (its scale)."""
    got, want = np.asarray(got, dtype=np.float64), np.asarray(want, dtype=np.float64)
    scale = float(np.abs(want).max())
    d = float(np.abs(got - want).max())
    print(f"{what}: max|Δ| {d:.3g}, scale {scale:.3g}")
    assert d <= 1e-4 * scale, f"{what}: max|Δ| {d:.3g} > 1e-4 x scale {scale:.3g}"


def tiny_stable_diffusion(kind: str, path: Path):
    """diffusers' StableDiffusionPipeline ("sd") or StableDiffusionXLPipeline ("sdxl": text_encoder_2 a
    CLIPTextModelWithProjection, a text_time UNet), tiny, every parameter re-randomized, saved to `path`."""
    import diffusers

    tokenizer = byte_level_clip_tokenizer(path.parent / "vocab", max_length=16)
    torch.manual_seed(0)
    text = dict(vocab_size=len(tokenizer), intermediate_size=40, num_hidden_layers=2, num_attention_heads=4,
                max_position_embeddings=16, bos_token_id=tokenizer.bos_token_id, eos_token_id=tokenizer.eos_token_id,
                pad_token_id=tokenizer.pad_token_id)
    text_encoder = T.CLIPTextModel(T.CLIPTextConfig(hidden_size=24, **text))
    if kind == "sdxl":
        text_encoder_2 = T.CLIPTextModelWithProjection(T.CLIPTextConfig(hidden_size=16, projection_dim=12, **text))
        unet = dict(down_block_types=("DownBlock2D", "CrossAttnDownBlock2D"),
                    up_block_types=("CrossAttnUpBlock2D", "UpBlock2D"), cross_attention_dim=24 + 16,
                    use_linear_projection=True, addition_embed_type="text_time", addition_time_embed_dim=4,
                    projection_class_embeddings_input_dim=6 * 4 + 12)
    else:
        unet = dict(down_block_types=("CrossAttnDownBlock2D", "DownBlock2D"),
                    up_block_types=("UpBlock2D", "CrossAttnUpBlock2D"), cross_attention_dim=24)
    unet = diffusers.UNet2DConditionModel(sample_size=8, in_channels=4, out_channels=4, layers_per_block=1,
                                          block_out_channels=(16, 32), attention_head_dim=4, norm_num_groups=8, **unet)
    vae = diffusers.AutoencoderKL(
        in_channels=3, out_channels=3, latent_channels=4, block_out_channels=(16, 32), layers_per_block=1,
        down_block_types=("DownEncoderBlock2D",) * 2, up_block_types=("UpDecoderBlock2D",) * 2, norm_num_groups=8)
    models = (unet, vae, text_encoder) + ((text_encoder_2,) if kind == "sdxl" else ())
    for i, m in enumerate(models):
        diffusion_randomize(m, i)
    scheduler = diffusers.DDIMScheduler(num_train_timesteps=1000, beta_schedule="scaled_linear", beta_start=0.00085,
                                        beta_end=0.012, clip_sample=False, set_alpha_to_one=False, steps_offset=1)
    common = dict(vae=vae, text_encoder=text_encoder, tokenizer=tokenizer, unet=unet, scheduler=scheduler)
    if kind == "sdxl":
        pipe = diffusers.StableDiffusionXLPipeline(text_encoder_2=text_encoder_2, tokenizer_2=tokenizer, **common)
    else:
        pipe = diffusers.StableDiffusionPipeline(safety_checker=None, feature_extractor=None,
                                                 requires_safety_checker=False, **common)
    pipe.save_pretrained(path)
    return pipe


@pytest.mark.parametrize("kind", ["sd", "sdxl"])
def test_stable_diffusion_pipeline(kind, tmp_path):
    """ORTDiffusionPipeline.from_pretrained on the package (unet/, vae_decoder/, vae_encoder/,
    text_encoder/[, text_encoder_2/] with their config.json, the tokenizer and scheduler folders,
    model_index.json) gives ORTStableDiffusion[XL]Pipeline, run against diffusers' own pipeline: the
    same prompt and negative prompt (classifier-free guidance 5: the unet runs on a batch of 2 with
    one timestep), generator seed 0, 3 DDIM steps; the final latent (output_type "latent") and the
    decoded image (output_type "np") within 1e-4 x their scale."""
    from optimum.onnxruntime import ORTDiffusionPipeline, ORTStableDiffusionPipeline, ORTStableDiffusionXLPipeline

    ref = tiny_stable_diffusion(kind, tmp_path / "hf")
    ort = ORTDiffusionPipeline.from_pretrained(build(tmp_path / "hf", tmp_path / "pkg"))
    assert type(ort) is (ORTStableDiffusionXLPipeline if kind == "sdxl" else ORTStableDiffusionPipeline), type(ort)
    call = dict(prompt=["a red cube"], negative_prompt=["blurry"], num_inference_steps=DIFFUSION_STEPS,
                guidance_scale=5.0)
    for output_type in ("latent", "np"):
        with torch.no_grad():
            want = ref(**call, output_type=output_type, generator=torch.Generator().manual_seed(0)).images
        got = ort(**call, output_type=output_type, generator=torch.Generator().manual_seed(0)).images
        close_scaled(got, want, "final latent" if output_type == "latent" else "decoded image")
