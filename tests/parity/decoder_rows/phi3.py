"""The text-generation parity rows of the phi3 family: phi3."""

from decoder_rows.shared import SHORT, LONG

VARIANTS: dict[str, list[tuple[str, dict]]] = {
    "phi3": [
        ("default", {}),  # qkv_proj, gate_up_proj
        ("partial-rotary", dict(rope_parameters=dict(rope_type="default", partial_rotary_factor=0.5))),
        ("longrope", dict(max_position_embeddings=128, original_max_position_embeddings=32,
                          rope_parameters=dict(rope_type="longrope", short_factor=SHORT, long_factor=LONG))),
        ("longrope-partial", dict(max_position_embeddings=128, original_max_position_embeddings=32,
                                  rope_parameters=dict(rope_type="longrope", partial_rotary_factor=0.5,
                                                       short_factor=SHORT[:4], long_factor=LONG[:4]))),
        ("sliding-window-16", dict(sliding_window=16)),
        ("tied", dict(tie_word_embeddings=True)),
    ],
}
