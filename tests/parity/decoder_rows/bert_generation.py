"""The text-generation parity rows of the bert_generation family: bert-generation."""

VARIANTS: dict[str, list[tuple[str, dict]]] = {
    "bert-generation": [
        ("default", {}),  # post-norm BERT layers, causal; head tied to the word embeddings, bias lm_head.bias
        ("untied-relu", dict(tie_word_embeddings=False, hidden_act="relu")),
        ("3-layers-8-heads", dict(num_hidden_layers=3, num_attention_heads=8)),
    ],
}
