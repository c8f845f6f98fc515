"""The text-generation parity rows of the dbrx family: dbrx."""

ATTN = dict(kv_n_heads=2, clip_qkv=8.0, rope_theta=10000.0)  # as decoder_harness.TYPE_BASE
FFN = dict(ffn_hidden_size=32, moe_num_experts=4, moe_top_k=2)

VARIANTS: dict[str, list[tuple[str, dict]]] = {
    "dbrx": [
        ("default", {}),  # softmax top-2 of 4, divided by their 1-norm; LayerNorm without bias
        ("clip-qkv-0.3", dict(attn_config=dict(ATTN, clip_qkv=0.3))),  # the clamp acts
        ("normalize-p2", dict(ffn_config=dict(FFN, moe_normalize_expert_weights=2.0))),
        ("no-normalize", dict(ffn_config=dict(FFN, moe_normalize_expert_weights=None))),
        ("mha-top-3-of-8-gelu", dict(attn_config=dict(ATTN, kv_n_heads=4),
                                     ffn_config=dict(FFN, moe_num_experts=8, moe_top_k=3,
                                                     ffn_act_fn=dict(name="gelu")))),
        ("rope-theta-500000", dict(rope_parameters=dict(rope_type="default", rope_theta=500000.0))),
    ],
}
