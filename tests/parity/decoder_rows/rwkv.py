"""The text-generation parity rows of RWKV-4 (src/archs/rwkv.cpp): its layers carry the channel and
time mixes' previous token and the wkv numerator / denominator / running max
(harness.RECURRENT_STATES); each row also checks the state handoff (decoder_harness.check_handoff).
onnxruntime-genai 0.18 has no model type that reads these states: built with --runtime none, the
default build must refuse it."""

VARIANTS: dict[str, list[tuple[str, dict]]] = {
    "rwkv": [
        # 3 layers (decoder_harness.TYPE_BASE), rescale_every 6: no rescaling within them
        ("default", dict(_runtime="none")),
        # the inference rescaling after every block (block i's output / value projections / 2**i, the
        # hidden state halved after each), with a LayerNorm epsilon large enough to see it; tied head
        ("rescale-every-1-eps-tied", dict(rescale_every=1, layer_norm_epsilon=0.5, tie_word_embeddings=True,
                                          _runtime="none")),
        # rescale_every 2 (layer 2 halved once); intermediate_size null: 4 * hidden_size
        ("rescale-every-2-intermediate-null", dict(rescale_every=2, intermediate_size=None, _runtime="none")),
    ],
}
