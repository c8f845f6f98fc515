"""The text-generation parity rows of the modernbert family: modernbert-decoder."""

VARIANTS: dict[str, list[tuple[str, dict]]] = {
    "modernbert-decoder": [
        ("default", {}),  # layers full, sliding (window 8), sliding; RoPE 160000 / 10000; tied head with bias
        ("every-2-biases", dict(global_attn_every_n_layers=2, norm_bias=True, attention_bias=True, mlp_bias=True,
                                classifier_bias=True)),
        ("untied-no-decoder-bias-silu", dict(tie_word_embeddings=False, decoder_bias=False,
                                             classifier_activation="silu", hidden_activation="silu")),
        ("rope-thetas", dict(rope_parameters={"full_attention": {"rope_type": "default", "rope_theta": 5000.0},
                                              "sliding_attention": {"rope_type": "default", "rope_theta": 500.0}})),
        # layer 0 sliding (its attention has no input norm), window local_attention // 2 = 4
        ("window-4-first-sliding", dict(local_attention=8,
                                        layer_types=["sliding_attention", "full_attention", "sliding_attention"])),
    ],
}
