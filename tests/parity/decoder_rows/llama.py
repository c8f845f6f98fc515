"""The text-generation parity rows of the llama family: llama, mistral, qwen2, qwen3, iquestcoder."""

from decoder_rows.shared import LONG, SHORT

LLAMA3 = dict(rope_type="llama3", factor=8.0, low_freq_factor=1.0, high_freq_factor=4.0,
              original_max_position_embeddings=32)  # bands: wavelen < 8 kept, 8..32 smoothed, > 32 / 8

# No partial_rotary_factor row: transformers 5.23 llama/mistral/qwen2/qwen3 do not honour it (the
# default rope ignores it and rotates the whole head; scaled rope types then fail with a shape error).
VARIANTS: dict[str, list[tuple[str, dict]]] = {
    "llama": [
        ("default", {}),
        ("default-old-schema", dict(rope_theta=500000.0, rope_scaling=None)),
        ("linear", dict(rope_parameters=dict(rope_type="linear", factor=4.0, rope_theta=10000.0))),
        ("linear-old-schema", dict(rope_theta=10000.0, rope_scaling=dict(type="linear", factor=2.0))),
        ("dynamic", dict(max_position_embeddings=32,
                         rope_parameters=dict(rope_type="dynamic", factor=2.0))),
        ("dynamic-old-schema", dict(max_position_embeddings=24, rope_theta=10000.0,
                                    rope_scaling=dict(type="dynamic", factor=3.0))),
        ("llama3", dict(rope_parameters=dict(LLAMA3, rope_theta=10000.0))),
        ("llama3-old-schema", dict(rope_theta=10000.0, rope_scaling=dict(LLAMA3))),
        ("yarn", dict(max_position_embeddings=128, rope_parameters=dict(
            rope_type="yarn", factor=4.0, original_max_position_embeddings=32))),
        ("yarn-tuned", dict(max_position_embeddings=16384, rope_parameters=dict(
            rope_type="yarn", factor=8.0, original_max_position_embeddings=2048, beta_fast=4.0,
            beta_slow=0.5, mscale=1.0, mscale_all_dim=0.5, truncate=False))),
        ("longrope", dict(max_position_embeddings=128, rope_parameters=dict(
            rope_type="longrope", short_factor=SHORT, long_factor=LONG,
            original_max_position_embeddings=32))),  # factor derived: 128 / 32
        ("longrope-old-schema", dict(max_position_embeddings=128, rope_theta=10000.0, rope_scaling=dict(
            type="longrope", short_factor=SHORT, long_factor=LONG, factor=2.0,
            original_max_position_embeddings=32))),
        ("head-dim-32", dict(head_dim=32)),
        ("tied", dict(tie_word_embeddings=True)),
        ("attention-bias", dict(attention_bias=True)),
        ("mlp-bias", dict(mlp_bias=True)),
        ("sharded", dict(_max_shard_size="40KB")),
    ],
    "mistral": [
        ("default", {}),  # sliding_window 4096 (HF default) > every sequence here
        ("sliding-window-16", dict(sliding_window=16)),
        ("no-sliding-window", dict(sliding_window=None)),
        ("old-schema", dict(rope_theta=1000000.0)),  # no rope_scaling key at all
        ("head-dim-32", dict(head_dim=32)),
    ],
    "qwen2": [
        ("default", {}),  # q/k/v bias
        ("tied", dict(tie_word_embeddings=True)),
        ("yarn-old-schema", dict(rope_theta=1000000.0, rope_scaling=dict(
            type="yarn", factor=4.0, original_max_position_embeddings=32))),
        ("sliding-window-layer1", dict(use_sliding_window=True, sliding_window=16, max_window_layers=1)),
    ],
    "qwen3": [
        ("default", {}),  # q/k norm
        ("head-dim-32", dict(head_dim=32)),
        ("tied", dict(tie_word_embeddings=True)),
        ("attention-bias", dict(attention_bias=True)),
        ("yarn", dict(max_position_embeddings=128, rope_parameters=dict(
            rope_type="yarn", factor=4.0, original_max_position_embeddings=32))),
        ("old-schema", dict(rope_theta=1000000.0, rope_scaling=None)),
    ],
    "iquestcoder": [
        ("default", {}),
    ],
}
