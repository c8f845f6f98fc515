"""The text-generation parity rows of the beam family: beam."""

VARIANTS: dict[str, list[tuple[str, dict]]] = {
    "beam": [
        # layers sliding (RoPE) x3, full (NoPE, query scale); per-head gate bias; sandwich norms with
        # depth-scaled residuals; layers 0-2 dense, layer 3 MoE (V3 router, 2 of 4 groups); softcap 30
        ("default", {}),
        # RoPE on the full layer only (the sliding ones NoPE, scaled), q/k/v/o bias, no softcap,
        # three MoE layers without renormalized weights
        ("rope-full-bias-no-softcap-sparse", dict(
            rope_parameters={"sliding_attention": None, "full_attention": {"rope_type": "default", "rope_theta": 500.0}},
            attention_bias=True, final_logit_softcapping=None, mlp_layer_types=["dense", "sparse", "sparse", "sparse"],
            norm_topk_prob=False)),
    ],
}
