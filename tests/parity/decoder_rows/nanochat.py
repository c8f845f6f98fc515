"""The text-generation parity rows of the nanochat family: nanochat."""

VARIANTS: dict[str, list[tuple[str, dict]]] = {
    "nanochat": [
        ("default", {}),  # L2 norms, embedding norm, reversed rope, fc1/fc2, softcap 15
        ("softcap-0.5", dict(final_logit_softcapping=0.5, attention_bias=True)),
        ("no-softcap", dict(final_logit_softcapping=None)),
    ],
}
