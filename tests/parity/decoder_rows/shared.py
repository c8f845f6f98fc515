"""Settings several families' text-generation rows share."""

# longrope factors: one per rotary frequency (head_dim / 2 = 8), all distinct
SHORT = [1.0 + 0.07 * i for i in range(8)]
LONG = [1.3 + 0.61 * i for i in range(8)]
