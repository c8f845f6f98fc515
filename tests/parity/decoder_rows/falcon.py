"""The text-generation parity rows of the falcon family: falcon."""

VARIANTS: dict[str, list[tuple[str, dict]]] = {
    "falcon": [
        ("default", {}),  # old layout, multi_query, parallel attention, RoPE
        ("multi-head", dict(multi_query=False)),  # query_key_value per head [q | k | v]
        ("sequential-bias", dict(multi_query=False, parallel_attn=False, bias=True)),
        ("new-architecture", dict(new_decoder_architecture=True, num_kv_heads=2)),  # ln_attn, ln_mlp
        ("new-architecture-one-norm", dict(new_decoder_architecture=True, num_kv_heads=2,
                                           num_ln_in_parallel_attn=1)),
        ("rope-linear", dict(rope_parameters=dict(rope_type="linear", factor=2.0, rope_theta=10000.0))),
        # ALiBi: transformers 5.23's eager FalconAttention adds the bias twice (once through the
        # mask FalconModel builds, once itself); its default SDPA path adds it once, as trained.
        ("alibi", dict(alibi=True, _attn_implementation="sdpa")),
        ("alibi-16-heads", dict(alibi=True, num_attention_heads=16, multi_query=False,
                                _attn_implementation="sdpa")),  # slopes 2^(-k/2): bfloat16 rounding
        ("untied", dict(tie_word_embeddings=False)),
    ],
}
