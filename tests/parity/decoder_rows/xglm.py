"""The text-generation parity rows of the xglm family: xglm."""

VARIANTS: dict[str, list[tuple[str, dict]]] = {
    "xglm": [
        ("default", {}),  # sinusoidal positions + 2 (row pad_token_id 1 zero), embeddings * sqrt(d_model), tied
        # the zero row pad_token_id 3 is position 1's: the table's padding row is exercised
        ("pad-row-in-use", dict(pad_token_id=3)),
        ("no-scale-embedding-untied", dict(scale_embedding=False, tie_word_embeddings=False,
                                           activation_function="relu")),
    ],
}
