"""Task sentence-embedding (src/tasks/sentence_embedding.h): tiny sentence-transformers models saved
by sentence-transformers itself (SentenceTransformer(modules=[...]).save: modules.json,
1_Pooling/config.json, 2_Dense/ config + safetensors, Normalize) over a tiny encoder checkpoint,
built by `mobius build` with no --task (modules.json chooses it), vs SentenceTransformer.encode
(float32) on a batch of sentences of different lengths as the model's own tokenizer pads them:
sentence_embedding within MAX_COSINE_DISTANCE (cosine distance) and TOL (max|Δ|) of encode, and
token_embeddings within TOL of encode(output_value="token_embeddings") on the kept tokens.
"""

import json

import numpy as np
import pytest
import torch
from transformers import BertTokenizerFast

import harness as H

TOL = 1e-4  # harness.TOL: float32 against float32 here, the same bound
MAX_COSINE_DISTANCE = 1e-5
VOCAB = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"] + [f"w{i}" for i in range(251)]  # ENCODER_BASE vocab 256


def sentences(n: int = 6, seed: int = 0) -> list[str]:
    rng = np.random.RandomState(seed)
    return [" ".join(f"w{w}" for w in rng.randint(0, 251, size=rng.randint(1, 30))) for _ in range(n)]


# (id, encoder type, modules: [("pooling", mode or [modes]), ("dense", in, out, activation), ("normalize",)],
#  tokenizer padding side, legacy pooling flags)
CASES = [
    ("mean-dense-normalize", "bert", [("pooling", "mean"), ("dense", 64, 32, "Tanh"), ("normalize",)], "right", False),
    ("cls", "bert", [("pooling", "cls"), ("normalize",)], "right", False),
    ("max", "bert", [("pooling", "max")], "right", False),
    ("mean-sqrt-len", "bert", [("pooling", "mean_sqrt_len_tokens"), ("normalize",)], "right", False),
    ("weightedmean-left", "bert", [("pooling", "weightedmean"), ("normalize",)], "left", False),
    ("lasttoken-left", "bert", [("pooling", "lasttoken"), ("normalize",)], "left", False),
    ("lasttoken", "bert", [("pooling", "lasttoken")], "right", False),
    ("cls-left", "bert", [("pooling", "cls")], "left", False),
    ("cls-mean-max-dense", "bert", [("pooling", ["cls", "mean", "max"]), ("dense", 192, 48, "Identity")], "right", False),
    ("roberta-two-dense", "roberta", [("pooling", "mean"), ("dense", 64, 40, "ReLU"), ("dense", 40, 16, "Identity")],
     "right", False),
    ("distilbert-legacy-flags", "distilbert", [("pooling", "mean"), ("normalize",)], "right", True),
    ("mpnet-mean-normalize", "mpnet", [("pooling", "mean"), ("normalize",)], "right", False),  # all-mpnet-base-v2's
    # EmbeddingGemma's modules (google/embeddinggemma-300m: mean, Dense up, Dense down, no bias, Normalize)
    ("embeddinggemma", "gemma3_text", [("pooling", "mean"), ("dense", 64, 96, "Identity", False),
                                       ("dense", 96, 64, "Identity", False), ("normalize",)], "right", False),
    ("embeddinggemma-left", "gemma3_text", [("pooling", "mean"), ("normalize",)], "left", False),
]
NO_TOKEN_TYPES = {"distilbert", "mpnet", "gemma3_text"}
# The encoder's config beyond the harness' tiny sizes: EmbeddingGemma is gemma3_text with
# bidirectional attention; layers sliding, full, sliding with a window of 16 (8 each side), shorter
# than the longest sentence.
ENCODER_OVERRIDES = {
    "gemma3_text": dict(use_bidirectional_attention=True, num_hidden_layers=3, sliding_window=16,
                        layer_types=["sliding_attention", "full_attention", "sliding_attention"]),
}


def save_sentence_transformer(work, model_type, modules, padding_side, legacy):
    from sentence_transformers import SentenceTransformer
    from sentence_transformers.base.modules import Dense, Normalize, Transformer
    from sentence_transformers.sentence_transformer.modules import Pooling

    from transformers import AutoModel

    enc = work / "encoder"
    H.write_checkpoint(model_type, ENCODER_OVERRIDES.get(model_type, {}), enc, AutoModel)
    (enc / "vocab.txt").write_text("\n".join(VOCAB) + "\n")
    BertTokenizerFast(vocab_file=str(enc / "vocab.txt"), padding_side=padding_side).save_pretrained(enc)
    torch.manual_seed(1)
    parts = [Transformer(str(enc))]
    hidden = parts[0].get_embedding_dimension()
    for m in modules:
        if m[0] == "pooling":
            parts.append(Pooling(hidden, pooling_mode=m[1]))
        elif m[0] == "dense":
            parts.append(Dense(m[1], m[2], bias=m[4] if len(m) > 4 else True,
                               activation_function=getattr(torch.nn, m[3])()))
        else:
            parts.append(Normalize())
    st = SentenceTransformer(modules=parts, device="cpu")
    st.save(str(work / "st"))
    if legacy:  # the Pooling config of sentence-transformers 2.x (all-MiniLM-L6-v2's)
        mode = modules[0][1]
        (work / "st" / "1_Pooling" / "config.json").write_text(json.dumps(
            {"word_embedding_dimension": hidden, "pooling_mode_cls_token": mode == "cls",
             "pooling_mode_mean_tokens": mode == "mean", "pooling_mode_max_tokens": mode == "max",
             "pooling_mode_mean_sqrt_len_tokens": False}))
    return SentenceTransformer(str(work / "st"), device="cpu")


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_sentence_embedding_equals_encode(case, tmp_path):
    check(case, tmp_path)


# --ep cpu (GraphLowering::attention: MultiHeadAttention) under the pooling and Dense layers
EP_CASES = [c for c in CASES if c[0] in ("mean-dense-normalize", "cls-mean-max-dense", "lasttoken-left")]


@pytest.mark.parametrize("case", EP_CASES, ids=[c[0] for c in EP_CASES])
def test_sentence_embedding_ep_cpu(case, tmp_path):
    check(case, tmp_path, ("--ep", "cpu"))
    assert not H.attention_lowering_problems(H.graph_path(tmp_path / "onnx", "model"))


def check(case, tmp_path, build_args=()):
    name, model_type, modules, padding_side, legacy = case
    st = save_sentence_transformer(tmp_path, model_type, modules, padding_side, legacy)
    texts = sentences()
    feats = st.tokenize(texts)
    inputs = {"input_ids", "attention_mask"} | (set() if model_type in NO_TOKEN_TYPES else {"token_type_ids"})
    feeds = {k: np.asarray(v, np.int64) for k, v in feats.items() if k in inputs}
    mask = feeds["attention_mask"]
    assert (mask == 0).any() and (mask[:, 0 if padding_side == "left" else -1] == 0).any(), "the batch must be padded"

    path = H.build(tmp_path / "st", tmp_path / "onnx", *build_args)
    assert not H.check_model(path, {}), "onnx.checker"
    sess = H.ort_session(path)
    problems = H.io_problems(sess, set(feeds), {"token_embeddings", "sentence_embedding"})
    assert not problems, problems
    tokens, emb = sess.run(["token_embeddings", "sentence_embedding"], feeds)

    ref = st.encode(texts, convert_to_numpy=True, batch_size=len(texts)).astype(np.float64)
    ref_tokens = st.encode(texts, output_value="token_embeddings", batch_size=len(texts))
    assert emb.shape == ref.shape, (emb.shape, ref.shape)
    cosine = (emb * ref).sum(1) / np.linalg.norm(emb, axis=1) / np.linalg.norm(ref, axis=1)
    distance, delta = float(1 - cosine.min()), H.max_abs(emb, ref)
    # encode's token embeddings: each sentence up to its last kept token (right padding cut)
    token_delta = max(H.max_abs(tokens[i][:len(t)][mask[i][:len(t)] == 1], t.numpy()[mask[i][:len(t)] == 1])
                      for i, t in enumerate(ref_tokens))
    print(f"\n{name}: cosine distance {distance:.3g}, sentence_embedding max|Δ| {delta:.3g}, "
          f"token_embeddings max|Δ| {token_delta:.3g}")
    assert distance <= MAX_COSINE_DISTANCE, f"cosine distance {distance:.3g} > {MAX_COSINE_DISTANCE}"
    assert delta <= TOL, f"sentence_embedding max|Δ| {delta:.3g} > {TOL}"
    assert token_delta <= TOL, f"token_embeddings max|Δ| {token_delta:.3g} > {TOL}"


def test_feature_extraction_task_keeps_last_hidden_state(tmp_path):
    """--task feature-extraction on a sentence-transformers directory: the encoder alone."""
    save_sentence_transformer(tmp_path, "bert", [("pooling", "mean")], "right", False)
    path = H.build(tmp_path / "st", tmp_path / "onnx", "--task", "feature-extraction")
    sess = H.ort_session(path)
    assert {o.name for o in sess.get_outputs()} == {"last_hidden_state"}
