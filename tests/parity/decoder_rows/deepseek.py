"""The text-generation parity rows of the deepseek family: deepseek_v2, deepseek_v3, deepseek_v32,
glm_moe_dsa, axk2, glm4_moe_lite, axk1, youtu, minicpm3, longcat_flash."""

from decoder_rows.shared import LONG, SHORT

DEEPSEEK_YARN = dict(max_position_embeddings=128, rope_parameters=dict(
    rope_type="yarn", factor=4.0, original_max_position_embeddings=32, mscale=1.0, mscale_all_dim=0.8))

VARIANTS: dict[str, list[tuple[str, dict]]] = {
    "deepseek_v2": [
        ("default", {}),  # MLA with q_lora, greedy top-2 of 8, layer 0 dense
        ("v-head-dim-12", dict(v_head_dim=12, _runtime="none")),
        ("group-limited", dict(topk_method="group_limited_greedy", n_group=4, topk_group=1,
                               routed_scaling_factor=2.0)),
        ("no-q-lora", dict(q_lora_rank=None)),
        ("yarn-mscale", DEEPSEEK_YARN),
        ("dense-only", dict(n_routed_experts=0, first_k_dense_replace=2)),  # no MoE layer
    ],
    "deepseek_v3": [
        ("default", {}),  # MLA, interleaved rope, sigmoid + correction bias, 2 of 4 groups
        ("v-head-dim-12", dict(v_head_dim=12, _runtime="none")),
        ("rope-not-interleaved", dict(rope_interleave=False)),
        ("no-norm-topk", dict(norm_topk_prob=False, routed_scaling_factor=1.0)),
        ("no-q-lora", dict(q_lora_rank=None)),
        ("yarn-mscale", DEEPSEEK_YARN),
    ],
    # the indexer's keys are a second state: onnxruntime-genai cannot run it (--runtime none)
    "deepseek_v32": [
        ("default", dict(_runtime="none")),  # top-8 keys per query, interleaved MLA rope, 2 of 4 groups
        # index_topk above every length: the sparse mask keeps every allowed key (TopK also picks
        # masked ones, which stay masked); yarn's mscale on the MLA and the indexer's tables
        ("topk-above-length-yarn", dict(DEEPSEEK_YARN, index_topk=64, _runtime="none")),
    ],
    "glm_moe_dsa": [
        ("default", dict(_runtime="none")),  # every layer "full" (index_topk_freq 1): its own indexer
        # layer 1 "shared": no indexer (nor its keys' state), layer 0's selection reused
        ("shared-layer", dict(indexer_types=["full", "shared"], _runtime="none")),
    ],
    # A.X-K2: deepseek_v32's attention with q_gate_proj and its output gate, gated RMSNorms
    "axk2": [
        ("default", dict(_runtime="none")),  # no expert groups; layer 1's post-attention norm gated
        # layer 0 sparse (both its norms gated), 2 of 4 expert groups (the others' scores 0), yarn
        ("groups-sparse-first-yarn", dict(DEEPSEEK_YARN, n_group=4, topk_group=2, mlp_layer_types=["sparse", "dense"],
                                          _runtime="none")),
    ],
    "glm4_moe_lite": [
        ("default", {}),  # deepseek_v3's MLA and router (routed_scaling_factor 1.8), layer 0 dense
        ("mlp-layer-types-not-interleaved", dict(mlp_layer_types=["sparse", "dense"], rope_interleave=False)),
        ("yarn-mscale", DEEPSEEK_YARN),
    ],
    "axk1": [
        ("default", {}),  # deepseek_v3's MLA and router, layer 0 dense, layer 1 MoE + post_mlp_layernorm
        ("sparse-then-dense", dict(mlp_layer_types=["sparse", "dense"])),  # the normed MoE on layer 0
    ],
    "youtu": [
        ("default", {}),  # deepseek_v3's MLA, interleaved rope, dense MLP, tied
        ("no-q-lora-not-interleaved", dict(q_lora_rank=None, rope_interleave=False, tie_word_embeddings=False)),
        ("yarn-mscale", DEEPSEEK_YARN),
    ],
    "longcat_flash": [
        ("default", {}),  # two MLA + two MLPs per layer, shortcut MoE with 2 identity experts of 6
        # no identity expert (zero_expert_num 0); yarn's mscale on the softmax scale besides the LoRA scales
        ("no-zero-experts-yarn", dict(DEEPSEEK_YARN, zero_expert_num=0)),
    ],
    "minicpm3": [
        ("default", {}),  # MLA with q_lora, Llama RoPE, scale_emb 12, scale_depth 1.4, dim_model_base 256, tied
        # v_head_dim null: hidden_size / heads (16), narrower than the qk head (genai cannot run it)
        ("v-head-dim-null", dict(v_head_dim=None, _runtime="none")),
        ("no-q-lora-no-scales", dict(q_lora_rank=None, scale_depth=None, dim_model_base=None, scale_emb=1.0,
                                     tie_word_embeddings=False)),
        ("longrope", dict(max_position_embeddings=128, rope_parameters=dict(
            rope_type="longrope", short_factor=SHORT[:4], long_factor=LONG[:4],
            original_max_position_embeddings=32))),  # 4 frequencies: qk_rope_head_dim 8
    ],
}
