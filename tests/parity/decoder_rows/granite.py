"""The text-generation parity rows of the granite family: granite, hyperclovax, granite_swa."""

VARIANTS: dict[str, list[tuple[str, dict]]] = {
    "granite": [
        ("default", {}),  # attention_multiplier 1.0
        ("multipliers", dict(embedding_multiplier=3.0, residual_multiplier=0.5,
                             attention_multiplier=0.15, logits_scaling=4.0)),
        ("tied", dict(tie_word_embeddings=True, logits_scaling=2.0)),
    ],
    "hyperclovax": [
        ("default", {}),  # post_norm1 / post_norm2
        ("multipliers", dict(embedding_multiplier=3.0, residual_multiplier=0.5,
                             attention_multiplier=0.15, logits_scaling=0.25)),
        ("no-post-norm", dict(use_post_norm=False, logits_scaling=2.0)),
    ],
    "granite_swa": [
        ("default", {}),  # sinks; layer 0 full, layer 1 sliding (window 16); one theta; tied
        ("full-layer-nope", dict(layer_rope_theta=[0.0, 10000.0])),  # layer 0 without RoPE
        ("theta-per-type-multipliers", dict(layer_rope_theta=[50000.0, 10000.0], embedding_multiplier=3.0,
                                            residual_multiplier=0.5, attention_multiplier=0.15,
                                            logits_scaling=4.0)),
        ("both-sliding-untied", dict(layer_types=["sliding_attention", "sliding_attention"],
                                     tie_word_embeddings=False)),
    ],
}
