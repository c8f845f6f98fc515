"""The text-generation parity rows of the dbrx family: dbrx."""

# DbrxConfig's sub-configs: a row's attn_config / ffn_config replaces the base one whole. DbrxAttention
# reads attn_config.rope_theta (an AttributeError without it) and uses none of it: RoPE takes the
# top-level rope_parameters. clip_qkv is required (torch.clamp fails on None): DBRX's 8, which the
# tiny model's q/k/v (|x| < 5) stay under
ATTN = dict(kv_n_heads=2, rope_theta=10000.0, clip_qkv=8.0)
FFN = dict(ffn_hidden_size=32, moe_num_experts=4, moe_top_k=2)

VARIANTS: dict[str, list[tuple[str, dict]]] = {
    "dbrx": [
        ("default", {}),  # top-2 weights over their sum (moe_normalize_expert_weights 1)
        # the clamp before the q/k/v split acting (1.0 clamps some of the tiny model's values); the
        # weights over their 2-norm
        ("clip-qkv-norm-2", dict(attn_config=dict(ATTN, clip_qkv=1.0),
                                 ffn_config=dict(FFN, moe_normalize_expert_weights=2.0))),
        ("unnormalized-gelu", dict(ffn_config=dict(FFN, moe_normalize_expert_weights=None,
                                                   ffn_act_fn=dict(name="gelu")))),
    ],
}
