"""The text-generation parity rows of the openai_gpt family: openai-gpt."""

VARIANTS: dict[str, list[tuple[str, dict]]] = {
    # OpenAIGPTLMHeadModel keeps no cache: the reference reruns the whole sequence each step
    # (harness.NO_CACHE)
    "openai-gpt": [
        ("default", {}),  # post-norm, Conv1D, fused c_attn, afn gelu (gelu_new), learned positions, tied
        ("relu-untied", dict(afn="relu", tie_word_embeddings=False)),
        ("swish", dict(afn="swish", layer_norm_epsilon=1e-3)),
    ],
}
