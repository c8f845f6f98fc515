"""The text-generation parity rows of the minimax_m3_vl family: minimax_m3_vl_text."""

VARIANTS: dict[str, list[tuple[str, dict]]] = {
    "minimax_m3_vl_text": [
        # layer 0 block-sparse (blocks of 8, top 2, 1 local block), dense clamped-SwiGLU MLP;
        # layer 1 full attention, MoE (sigmoid router, stacked experts, shared experts) * 2.0
        # (onnxruntime-genai has no type for the indexer keys: --runtime none)
        ("default", dict(_runtime="none")),
        # both layers block-sparse without a local block (blocks of 16, top 2) and MoE
        ("all-sparse-no-local", dict(layer_types=["minimax_m3_sparse"] * 2, mlp_layer_types=["sparse"] * 2,
                                     index_block_size=16, index_local_blocks=0, _runtime="none")),
    ],
}
