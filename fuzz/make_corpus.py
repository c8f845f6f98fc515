"""Writes the fuzz targets' seed corpus into fuzz/corpus/<target>/ (checked in; rerun after adding a
model type): one valid tiny config.json per parity row of every task (tests/parity: the decoder and
encoder rows of harness.py, vision encoders, seq2seq, speech-to-text, audio encoders,
vision-language models), tiny GGUF files (tests/gguf/gguf_testlib.py, as llama.cpp converts
them: llama in F32 and the block types --precision keep stores, gemma3, falcon, lfm2, t5, gpt-oss, gemma4), GGUF tokenizer metadata of each kind gguf_tokenizer reads (gpt2 with merges,
llama with merges or with scores only, gemma), a safetensors file, a
model.safetensors.index.json and a generation_config.json.

    .venv/bin/python fuzz/make_corpus.py
"""

import hashlib
import json
import struct
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "tests" / "parity"), str(ROOT / "tests" / "gguf")]

import numpy as np  # noqa: E402
import torch  # noqa: E402
from transformers import AutoConfig, AutoModelForCausalLM, AutoModelForSeq2SeqLM  # noqa: E402

import audio_harness  # noqa: E402
import gguf  # noqa: E402
import harness as H  # noqa: E402
import moonshine_harness  # noqa: E402
import seq2seq_harness  # noqa: E402
import speech_harness  # noqa: E402
import vision_harness as V  # noqa: E402
import vlm_harness  # noqa: E402
from gguf_testlib import (QT, write_falcon_gguf, write_gemma4_gguf, write_gguf, write_gpt_oss_gguf,  # noqa: E402
                          write_lfm2_gguf, write_t5_gguf)

CORPUS = ROOT / "fuzz" / "corpus"


def put(target: str, data: bytes) -> None:
    d = CORPUS / target
    d.mkdir(parents=True, exist_ok=True)
    (d / hashlib.sha1(data).hexdigest()[:16]).write_bytes(data)


def configs() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        for model_type, name, overrides in H.rows() + H.encoder_rows():
            if any(k.startswith("_") and k != "_json" for k in overrides):
                continue  # harness options (shards, attention implementation): same config
            cfg = H.make_config(model_type, overrides)
            d = Path(tmp) / f"{model_type}-{name}"
            cfg.save_pretrained(d)
            if any(k in overrides for k in H.OLD_KEYS):
                H._rewrite_old_schema(d / "config.json", overrides)
            if "_json" in overrides:
                H._edit_json(d / "config.json", overrides["_json"])
            put("config", json.dumps(json.loads((d / "config.json").read_text()), separators=(",", ":")).encode())
        # vision encoders, text towers and dual models; seq2seq; speech-to-text; audio encoders;
        # vision-language models: rows of AutoConfig.for_model kwargs
        task_rows = (V.ROWS + seq2seq_harness.ROWS + speech_harness.ROWS + moonshine_harness.ROWS +
                     audio_harness.ROWS + vlm_harness.ROWS)
        for row in task_rows:
            d = Path(tmp) / f"{row.model_type}-{row.variant}"
            AutoConfig.for_model(row.model_type, **row.config).save_pretrained(d)
            put("config", json.dumps(json.loads((d / "config.json").read_text()), separators=(",", ":")).encode())


def ggufs() -> None:
    """Tiny GGUF files as llama.cpp converts them: llama (F32, and Q4_0 / Q8_0 / Q6_K for
    --precision keep's stored blocks), gemma3, falcon (the 7B and the 40B layouts), lfm2, t5, gpt-oss
    (split MXFP4 and fused experts) and gemma4."""
    with tempfile.TemporaryDirectory() as tmp:
        small = dict(vocab_size=32, hidden_size=16, intermediate_size=32, num_hidden_layers=2, num_attention_heads=2,
                     num_key_value_heads=1, head_dim=8, max_position_embeddings=64)

        def tiny(model_type, **kw):
            torch.manual_seed(0)
            config = AutoConfig.for_model(model_type, **kw)
            return AutoModelForCausalLM.from_config(config, dtype=torch.float32).eval()

        def emit(name, write, *args):
            path = Path(tmp) / f"{name}.gguf"
            write(path, *args)
            put("gguf", path.read_bytes())

        emit("llama", lambda p: write_gguf(tiny("llama", **small), p))
        emit("gemma3_text", lambda p: write_gguf(tiny("gemma3_text", **small, sliding_window=4, layer_types=None), p))
        # rows of K = 256 elements: whole Q4_0 / Q8_0 blocks (32) and Q6_K super-blocks (256)
        wide = dict(small, hidden_size=256, intermediate_size=256, num_attention_heads=2, head_dim=128)
        for qtype in (QT.Q4_0, QT.Q8_0, QT.Q6_K):
            emit(f"llama-{qtype.name}", lambda p, q=qtype: write_gguf(tiny("llama", **wide), p, q))
        falcon = dict(vocab_size=32, hidden_size=32, num_hidden_layers=2, num_attention_heads=4)
        emit("falcon-7b", lambda p: write_falcon_gguf(tiny("falcon", **falcon), p, QT.Q8_0))
        emit("falcon-40b", lambda p: write_falcon_gguf(tiny("falcon", **falcon, new_decoder_architecture=True,
                                                            num_kv_heads=2), p))
        emit("lfm2", lambda p: write_lfm2_gguf(tiny("lfm2", **dict(small, num_hidden_layers=3),
                                                    layer_types=["conv", "full_attention", "conv"]), p))
        torch.manual_seed(0)
        t5 = AutoModelForSeq2SeqLM.from_config(AutoConfig.for_model(
            "t5", vocab_size=32, d_model=16, d_kv=8, d_ff=32, num_layers=2, num_heads=2, feed_forward_proj="gated-gelu",
            decoder_start_token_id=0)).eval()
        emit("t5", lambda p: write_t5_gguf(t5, p))
        # gpt-oss: the experts split (MXFP4, as llama.cpp releases them; rows of 32) and fused (F32)
        gpt_oss = dict(vocab_size=32, hidden_size=32, intermediate_size=32, num_hidden_layers=2, num_attention_heads=2,
                       num_key_value_heads=1, head_dim=16, max_position_embeddings=64, num_local_experts=2,
                       num_experts_per_tok=1, sliding_window=4)
        emit("gpt-oss-mxfp4", lambda p: write_gpt_oss_gguf(tiny("gpt_oss", **gpt_oss), p, QT.Q8_0, QT.MXFP4))
        emit("gpt-oss-fused", lambda p: write_gpt_oss_gguf(tiny("gpt_oss", **gpt_oss), p, fuse_gate_up=True))
        # gemma4: sliding / full layers of two head sizes, per-layer inputs, KV sharing, k_eq_v, a
        # double-wide MLP, the proportional rope's rope_freqs
        emit("gemma4", lambda p: write_gemma4_gguf(tiny(
            "gemma4_text", **dict(small, num_hidden_layers=4, global_head_dim=16,
                                  layer_types=["sliding_attention", "full_attention"] * 2, sliding_window=4,
                                  hidden_size_per_layer_input=4, vocab_size_per_layer_input=32, num_kv_shared_layers=2,
                                  attention_k_eq_v=True, num_global_key_value_heads=1, use_double_wide_mlp=True)), p))


def gguf_tokenizers() -> None:
    """Metadata-only GGUF files with a tokenizer of each kind (fuzz_gguf_tokenizer)."""
    byte_tokens = [f"<0x{b:02X}>" for b in range(256)]
    words = ["a", "b", "ab", "abc", "\u2581a", "\u2581ab", "c", "bc"]
    kinds = {
        "gpt2-merges": ("llama", "gpt2", ["a", "b", "c", "ab", "bc", "abc", "Ġ", "Ġa"], ["a b", "b c", "ab c", "Ġ a"]),
        "llama-merges": ("llama", "llama", ["<unk>", "<s>", "</s>"] + byte_tokens + words, ["a b", "ab c", "b c"]),
        "llama-scores": ("llama", "llama", ["<unk>", "<s>", "</s>"] + byte_tokens + words, None),
        "gemma-scores": ("gemma3", "llama", ["<pad>", "<eos>", "<bos>", "<unk>"] + byte_tokens + words, None),
    }
    with tempfile.TemporaryDirectory() as tmp:
        for name, (arch, model, tokens, merges) in kinds.items():
            path = Path(tmp) / f"{name}.gguf"
            w = gguf.GGUFWriter(str(path), arch)
            w.add_tokenizer_model(model)
            w.add_token_list(tokens)
            w.add_token_scores([-float(i) for i in range(len(tokens))])
            w.add_token_types([3 if t.startswith("<") and len(t) <= 5 and not t.startswith("<0x") else
                               6 if t.startswith("<0x") else 1 for t in tokens])
            if merges:
                w.add_token_merges(merges)
            w.add_bos_token_id(1 if model == "llama" else 0)
            w.add_eos_token_id(2 if model == "llama" else 1)
            w.add_unk_token_id(0)
            w.add_add_bos_token(True)
            w.add_chat_template("{{ bos_token }}{% for m in messages %}{{ m['content'] }}{% endfor %}")
            w.write_header_to_file()
            w.write_kv_data_to_file()
            w.write_tensors_to_file()
            w.close()
            put("gguf_tokenizer", path.read_bytes())


def safetensors() -> bytes:
    data = np.arange(6, dtype=np.float32).tobytes() + np.arange(4, dtype=np.float16).tobytes()
    header = {"__metadata__": {"format": "pt"},
              "a": {"dtype": "F32", "shape": [2, 3], "data_offsets": [0, 24]},
              "b": {"dtype": "F16", "shape": [4], "data_offsets": [24, 32]}}
    hb = json.dumps(header).encode()
    return struct.pack("<Q", len(hb)) + hb + data


def sentence_transformers_files(pooling: list[str], dense: bool) -> bytes:
    """fuzz_side_files' sentence-transformers input: the side files by name, as
    SentenceTransformer.save writes them for the target's tiny bert (hidden 16)."""
    modules = [{"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
               {"idx": 1, "name": "1", "path": "1_Pooling", "type": "sentence_transformers.models.Pooling"}]
    files = {"1_Pooling/config.json": {"word_embedding_dimension": 16, "pooling_mode": pooling,
                                       "include_prompt": True}}
    if dense:
        modules.append({"idx": 2, "name": "2", "path": "2_Dense", "type": "sentence_transformers.models.Dense"})
        files["2_Dense/config.json"] = {"in_features": 16 * len(pooling), "out_features": 8, "bias": True,
                                        "activation_function": "torch.nn.modules.activation.Tanh"}
    modules.append({"idx": len(modules), "name": str(len(modules)), "path": f"{len(modules)}_Normalize",
                    "type": "sentence_transformers.models.Normalize"})
    return json.dumps({"modules.json": modules, **files}).encode()


if __name__ == "__main__":
    configs()
    ggufs()
    gguf_tokenizers()
    put("safetensors", safetensors())
    put("safetensors_index", json.dumps({"metadata": {"total_size": 16},
                                         "weight_map": {"a": "a.safetensors", "b": "b.safetensors"}}).encode())
    put("side_files", json.dumps({"bos_token_id": 1, "eos_token_id": [2, 3], "pad_token_id": 0, "do_sample": True,
                                  "temperature": 0.7, "top_k": 20, "top_p": 0.9, "repetition_penalty": 1.1}).encode())
    put("side_files", sentence_transformers_files(["mean"], dense=True))
    put("side_files", sentence_transformers_files(["cls", "max", "weightedmean"], dense=False))
    for d in sorted(CORPUS.iterdir()):
        print(f"{d.name}: {len(list(d.iterdir()))} seeds")
