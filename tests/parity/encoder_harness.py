"""Task feature-extraction and the text encoders' heads (src/tasks/text_heads.h): the encoder
parity rows (typed, harness.Row) and their runner: one padded batch (right- and left-padded rows),
last_hidden_state (or the head's outputs) compared on the non-padding tokens, onnx.checker
(run_encoder_parity). A head row is a variant named after its task (overrides "_task"): the
checkpoint is the type's transformers class of that task, saved as transformers saves it (encoder
under base_model_prefix, tied decoder), and the package is built from config.json's architectures.
The shared core is harness.py; test_encoder_parity.py runs these rows."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import torch
from transformers import (AlignTextModel, AltCLIPTextModel, AutoModel, AutoModelForDocumentQuestionAnswering,
                          AutoModelForMaskedLM, ChineseCLIPTextModel, ClapTextModel,
                          AutoModelForMultipleChoice,
                          AutoModelForQuestionAnswering, AutoModelForSequenceClassification,
                          AutoModelForTokenClassification)
from transformers.models.auto import modeling_auto

import harness as H
from harness import DROP, PAD, PREFILL_LEN, TOL, Row

# Encoders (task feature-extraction, AutoModel checkpoints without a head): the same schema.
ENCODER_BASE = dict(hidden_size=64, num_hidden_layers=2, num_attention_heads=4, vocab_size=256,
                    intermediate_size=128, max_position_embeddings=512)
# DeBERTa-v3's disentangled attention (microsoft/deberta-v3-base: relative attention, shared
# position keys, log buckets, normalized relative embeddings, no absolute positions), with 8 buckets
# up to distance 32 so that the batch's distances reach the log buckets and their clamp; DeBERTa's
# (microsoft/deberta-base: c2p and p2c, no absolute positions) with 16 relative positions, which
# the batch's distances pass.
DEBERTA_V3 = dict(relative_attention=True, pos_att_type=["p2c", "c2p"], share_att_key=True, position_buckets=8,
                  max_relative_positions=32, norm_rel_ebd="layer_norm", position_biased_input=False)
ENCODER_TYPE_BASE = {
    "distilbert": dict(hidden_dim=128),  # DistilBERT's intermediate size
    # ESM-2 (facebook/esm2_t6_8M_UR50D): rotary, token_dropout with mask id 32, padding id 1
    "esm": dict(vocab_size=33, position_embedding_type="rotary", token_dropout=True, mask_token_id=32, pad_token_id=1,
                emb_layer_norm_before=False, max_position_embeddings=128),
    "deberta": dict(relative_attention=True, pos_att_type="c2p|p2c", max_relative_positions=16,
                    position_biased_input=False),
    "deberta-v2": DEBERTA_V3,
    # two language adapters, the second one the default (XmodModel without lang_ids runs it)
    "xmod": dict(languages=["en_XX", "de_DE"], default_language="de_DE"),
    # RoC-BERT's glyph-shape and pronunciation vocabularies, small
    "roc_bert": dict(shape_vocab_size=40, shape_embed_dim=24, pronunciation_vocab_size=30,
                     pronunciation_embed_dim=16),
    "layoutlm": dict(max_2d_position_embeddings=64),  # boxes with coordinates 0..63
    # LiLT: hidden 48 (its six box tables are hidden_size // 6 wide), 4 heads of 12, the layout stream
    # 48 / 4 = 12 wide (heads of 3); boxes with coordinates 0..63
    "lilt": dict(hidden_size=48, max_2d_position_embeddings=64),
    # LayoutLMv3: boxes with coordinates 0..63 embedded in 4 * 8 + 2 * 16 = 64 features; the default
    # buckets (1-D: 32 up to 128, 2-D: 64 up to 256) reach their log buckets in the batch
    "layoutlmv3": dict(max_2d_position_embeddings=64, coordinate_size=8, shape_size=16),
    # TAPAS' seven token type tables, small: segment, column, row, prev label, ranks, numeric relation
    "tapas": dict(type_vocab_sizes=[3, 4, 5, 2, 6, 6, 10]),
    # the question token 216: at positions 31 and 32 of the batch's row 0, 37 of row 1
    "splinter": dict(question_token_id=216),
    # ConvBERT: embeddings of 32 projected to 64; head_ratio 2: 2 attention heads of 16 beside the convolution
    "convbert": dict(embedding_size=32),
    # LUKE's entity tables, small (unread: the word-only path)
    "luke": dict(entity_vocab_size=16, entity_emb_size=16),
    # Nystromformer: its depthwise value conv of 5 (65 by default); num_landmarks == segment_means_seq_len
    # (64, the defaults): plain softmax attention
    "nystromformer": dict(conv_kernel_size=5),
    # BigBird: blocks of 4 and one random block: block-sparse past (5 + 2) * 4 = 28 tokens (12 blocks)
    "big_bird": dict(block_size=4, num_random_blocks=1),
    # Longformer: a window of 10 (5 each side); the batch (48 tokens) padded to 50 inside transformers
    "longformer": dict(attention_window=10),
    "squeezebert": dict(embedding_size=64),  # = hidden_size (SqueezeBertEncoder asserts it)
    # XPaths of depth 3 over small tag / subscript vocabularies
    "markuplm": dict(max_depth=3, xpath_unit_hidden_size=8, max_xpath_tag_unit_embeddings=20,
                     max_xpath_subs_unit_embeddings=30, tag_pad_id=19, subs_pad_id=29),
    # ModernBERT's special ids inside the tiny vocabulary; a window of 16 (8 each side) on the
    # sliding layers, shorter than the batch; 3 layers: full, sliding, sliding (every 3rd global)
    # MobileBERT's bottlenecks 64 -> 32 (4 heads of 8), embeddings of 32 (trigram 96 -> 64); one stacked
    # FFN besides the layer's own (NoNorm does not bound the residual sums: the outputs stay small)
    "mobilebert": dict(embedding_size=32, intra_bottleneck_size=32, num_feedforward_networks=2),
    "modernbert": dict(pad_token_id=3, bos_token_id=1, eos_token_id=2, cls_token_id=1, sep_token_id=2,
                       local_attention=16, num_hidden_layers=3),
    # OpenAI Privacy Filter: 4 heads of 16 over 2 key/value heads, 4 experts (top 2) of 32, a window of 8
    # each side (wider than the left padding), the special ids inside the tiny vocabulary
    "openai_privacy_filter": dict(head_dim=16, num_key_value_heads=2, num_local_experts=4, num_experts_per_tok=2,
                                  intermediate_size=32, sliding_window=8, pad_token_id=1, eos_token_id=2),
    # CANINE: 8 hash tables of 128 buckets (shards of 8), local attention in chunks of 16, molecules of 4
    # characters; vocab_size only bounds the batch's code points (CanineConfig has none)
    "canine": dict(num_hash_buckets=128, type_vocab_size=4, local_transformer_stride=16),
    # ESM C's special ids (EsmcConfig's) inside the tiny vocabulary
    "esmc": dict(pad_token_id=1, bos_token_id=0, eos_token_id=2, mask_token_id=32),
    # EuroBERT's / UltraBERT's special ids inside the tiny vocabulary
    "eurobert": dict(pad_token_id=3, bos_token_id=1, eos_token_id=2, mask_token_id=4),
    # 3 layers: sliding, sliding, full ((i + 1) % 3); a window of 8 each side, shorter than the batch
    # and wider than its left padding (PAD 7: every query sees a token, see HEAD_VARIANTS for the rest)
    "ultrabert": dict(pad_token_id=3, bos_token_id=1, eos_token_id=2, num_hidden_layers=3, sliding_window=8,
                      prediction_head_size=32),
    # three languages (lang_embeddings, the langs input); the sizes through XLMConfig.attribute_map
    # (config.json: emb_dim, n_layers, n_heads; the feed-forward 4 * emb_dim wide)
    "xlm": dict(n_langs=3),
    # XLNet's sizes through XLNetConfig.attribute_map (config.json: d_model, n_layer, n_head), d_inner and d_head
    # its own fields (d_head: the config class checks it against d_model // n_head); no max_position_embeddings
    # (XLNetConfig refuses to set it: relative positions, no length limit)
    "xlnet": dict(d_inner=128, d_head=16, max_position_embeddings=DROP),
    "flaubert": dict(n_langs=3),
    # Funnel: sizes through FunnelConfig.attribute_map (d_model, n_head), its own d_head / d_inner; 3 blocks
    # (1, 2, 1 layers: two poolings, a pooled block's second layer) and one decoder layer; no pad_token_id
    # (FunnelConfig's default and the released configs': see BATCH_PAD_IDS), no num_hidden_layers (FunnelConfig
    # refuses to set it: sum(block_sizes)), no position table (architectures: AutoModel.from_config picks
    # FunnelModel of its two classes by it, and fails without)
    "funnel": dict(d_inner=128, d_head=16, block_sizes=[1, 2, 1], num_decoder_layers=1,
                   architectures=["FunnelModel"], num_hidden_layers=DROP, intermediate_size=DROP,
                   max_position_embeddings=DROP),
}
# XLM's token_type_ids index its word embeddings: segments 0 / 1 (no type_vocab_size)
# XLNet's segment ids (its tokenizer's 0, 1 and 2 for <cls>), compared for equality: no table
# Funnel's: 0, 1 and 2 for <cls> (FunnelAttentionStructure.cls_token_type_id), compared for equality: no table
TOKEN_TYPES = {"xlm": 2, "flaubert": 2, "xlnet": 3, "funnel": 3}
# The batch's padding id of the types whose config sets no pad_token_id: Funnel's <pad> (0). With
# pad_token_id set, transformers zeroes that word embedding row when it loads a Funnel checkpoint
# (FunnelPreTrainedModel._init_weights runs on the loaded FunnelEmbeddings), which mobius does not follow
# (src/archs/funnel.cpp); the pooled states mix padding into the tokens' outputs
BATCH_PAD_IDS = {"funnel": 0}
# The types whose feature-extraction graph also outputs pooler_output (Encoder::forward_outputs):
# compared whole with the reference's
POOLER_OUTPUT = {"canine"}

ENCODER_VARIANTS: dict[str, list[tuple[str, dict]]] = {
    "albert": [
        ("default", {}),  # embedding_size 128 -> embedding_hidden_mapping_in -> 64; one group of one layer, shared
        ("groups-2", dict(num_hidden_groups=2, num_hidden_layers=3)),  # layers 0, 1 of group 0, layer 2 of group 1
        ("inner-2", dict(inner_group_num=2)),  # each group runs two layers
    ],
    "bert": [
        ("default", {}),  # gelu (erf), 2 token types
        ("gelu-tanh", dict(hidden_act="gelu_new")),
        ("layer-norm-eps", dict(layer_norm_eps=1e-3)),  # large enough to move the output > TOL
        ("type-vocab-4", dict(type_vocab_size=4)),
    ],
    "camembert": [("default", {})],  # roberta position ids
    "data2vec-text": [("default", {})],  # roberta position ids
    "deberta": [
        ("default", {}),  # fused in_proj + q_bias / v_bias, pos_proj (c2p) and pos_q_proj (p2c)
        ("c2p-absolute-types", dict(pos_att_type=["c2p"], position_biased_input=True, type_vocab_size=2,
                                    embedding_size=32)),  # embed_proj 32 -> 64
        ("no-relative", dict(relative_attention=False)),  # pos_att_type still scales the scores
    ],
    "deberta-v2": [
        ("default", {}),  # DeBERTa-v3-like
        ("own-position-projections", dict(share_att_key=False, pos_att_type="p2c|c2p")),  # pos_key_proj, pos_query_proj
        ("no-buckets-types", dict(position_buckets=-1, max_relative_positions=16, type_vocab_size=2,
                                  position_biased_input=True, embedding_size=32, norm_rel_ebd="none")),
        ("conv", dict(conv_kernel_size=3, conv_act="gelu", conv_groups=2)),  # ConvLayer after layer 0
        ("p2c-only", dict(pos_att_type=["p2c"])),
        ("no-relative", dict(relative_attention=False, position_biased_input=True)),
    ],
    "distilbert": [("default", {})],  # own names, no token types
    "electra": [
        ("default", {}),  # embedding_size 128 (ElectraConfig default) != hidden 64: embeddings_project
        ("embedding-size-64", dict(embedding_size=64)),  # no projection
    ],
    "ernie": [("default", {})],  # use_task_id false
    "esm": [
        ("default", {}),  # ESM-2: rotary, token_dropout (the batch holds mask tokens), no embeddings LayerNorm
        ("absolute-emb-norm", dict(position_embedding_type="absolute", emb_layer_norm_before=True,
                                   token_dropout=False)),  # ESM-1b: positions from the ids (padding_idx 1)
    ],
    "megatron-bert": [("default", {})],  # pre-norm layers, encoder.ln, no embeddings LayerNorm; 2 token types
    "fnet": [
        ("default", {}),  # gelu_new, 4 token types, the padding mixed in as FNetModel does (no attention_mask)
        ("gelu-eps", dict(hidden_act="gelu", layer_norm_eps=1e-3)),
    ],
    "mobilebert": [
        ("default", {}),  # NoNorm, trigram input, shared q/k bottleneck, relu
        # LayerNorms: layer_norm_eps on most, torch's 1e-5 on the embeddings' and output.LayerNorm; 3 stacked FFNs
        ("layer-norm-eps", dict(normalization_type="layer_norm", layer_norm_eps=1e-3, hidden_act="gelu",
                                num_feedforward_networks=4)),
        ("bottleneck-attention", dict(use_bottleneck_attention=True, key_query_shared_bottleneck=False)),  # q = k = v
        # q = k = v = x, the bottleneck only for the residual (as wide as hidden_size: the projections read x)
        ("no-shared-bottleneck", dict(key_query_shared_bottleneck=False, intra_bottleneck_size=64,
                                      num_feedforward_networks=1)),
        # no bottleneck (true_hidden_size = hidden_size), no trigram: embedding_transformation 32 -> 64
        ("no-bottleneck-no-trigram", dict(use_bottleneck=False, trigram_input=False, num_feedforward_networks=1)),
    ],
    "modernbert": [
        ("default", {}),  # layer 0 global (no attn_norm), 1-2 sliding; thetas 160000 / 10000; GeGLU; bias-free norms
        ("biases-global-2", dict(norm_bias=True, attention_bias=True, mlp_bias=True, global_attn_every_n_layers=2,
                                 hidden_activation="gelu_new")),  # full, sliding, full
        ("window-4-thetas", dict(local_attention=4, global_rope_theta=1000.0, local_rope_theta=50.0)),  # pad rows see no token
        # a config.json of the ModernBERT releases: global/local_rope_theta, no rope_parameters nor layer_types
        ("legacy-thetas", dict(global_rope_theta=1000.0, local_rope_theta=50.0, global_attn_every_n_layers=2,
                               _json=dict(rope_parameters=DROP, layer_types=DROP, global_rope_theta=1000.0,
                                          local_rope_theta=50.0, global_attn_every_n_layers=2))),
    ],
    "esmc": [
        ("default", {}),  # LayerNorms, full-width q/k LayerNorms, residuals / sqrt(2 / 36), theta 10000
        ("biases-theta-3-layers", dict(attention_bias=True, mlp_bias=True, num_hidden_layers=3,
                                       rope_parameters=dict(rope_type="default", rope_theta=500.0))),
    ],
    "canine": [
        ("default", {}),  # rate 4 (48 characters: 12 molecules), projection kernel 4 (padding 1 before, 2 after)
        # rate 5 (3 characters left over: the last molecule repeated 8 times), kernel 3, chunks of 6 (row 1's
        # first chunk all padding), 4 hash functions, gelu_new
        ("rate-5-kernel-3-chunks-6", dict(downsampling_rate=5, upsampling_kernel_size=3, local_transformer_stride=6,
                                          num_hash_functions=4, hidden_act="gelu_new")),
    ],
    "openai_privacy_filter": [
        ("default", {}),  # sinks, interleaved yarn RoPE, GQA, clamped SwiGLU experts (gate | up halves), biases
        # a window of 3 (row 1's first padding tokens see no token), theta 500, 3 of 4 experts, the clamp
        # at 0.5 (reached), no attention biases
        ("window-3-theta-top-3-clamp", dict(sliding_window=3, attention_bias=False, num_experts_per_tok=3,
                                            swiglu_limit=0.5, rope_parameters=dict(rope_type="default",
                                                                                   rope_theta=500.0))),
    ],
    "eurobert": [
        ("default", {}),  # Llama layers, bidirectional; theta 10000, SwiGLU, no biases
        ("gqa-biases-theta", dict(num_key_value_heads=2, attention_bias=True, mlp_bias=True, hidden_act="gelu",
                                  rope_parameters=dict(rope_type="default", rope_theta=500.0))),
    ],
    "ultrabert": [
        ("default", {}),  # sliding, sliding, full; thetas 10000 / 2560000
        ("full-sliding-thetas", dict(layer_types=["full_attention", "sliding_attention", "sliding_attention"],
                                     sliding_window=2, rope_parameters=dict(
                                         full_attention=dict(rope_type="default", rope_theta=1000.0),
                                         sliding_attention=dict(rope_type="default", rope_theta=50.0)))),
        # the released checkpoints' config.json: attention_windows and a theta per layer, no
        # layer_types / rope_parameters / sliding_window (UltrabertConfig.__post_init__'s BC path)
        ("attention-windows", dict(attention_windows=[0, 6, 6], rope_theta=[1000.0, 50.0, 50.0],
                                   _json=dict(layer_types=DROP, rope_parameters=DROP, sliding_window=DROP,
                                              attention_windows=[0, 6, 6], rope_theta=[1000.0, 50.0, 50.0]))),
    ],
    "xlm": [
        ("default", {}),  # post-norm, gelu, language embeddings
        ("relu-one-language", dict(gelu_activation=False, n_langs=1)),  # no lang_embeddings, no langs input
        ("sinusoidal", dict(sinusoidal_embeddings=True, layer_norm_eps=1e-3)),
    ],
    "flaubert": [("default", {})],  # XLM's post-norm layers (pre_norm: refused, see archs/xlm.cpp)
    "mpnet": [("default", {})],  # roberta position ids (padding_idx 1), relative position bias, no token types
    # the rotary post-norm encoders (src/archs/jina_embeddings_v3.cpp)
    "jina_embeddings_v3": [
        ("default", {}),  # rotary (theta 20000), biases, fc1/fc2 gelu, one token type
        ("theta-types-2", dict(rope_theta=500.0, type_vocab_size=2, hidden_act="gelu_new")),
    ],
    "nomic_bert": [
        ("default", {}),  # no attention biases, SwiGLU (silu), theta 1000, 2 token types
        ("head-dim-8", dict(head_dim=8)),  # head_dim * heads != hidden_size
    ],
    "gte": [
        ("default", {}),  # gated gelu, down_proj bias only, theta 160000, one token type
        ("no-token-types", dict(type_vocab_size=0)),
    ],
    "roberta": [
        ("default", {}),  # position ids from padding_idx + 1 = 2
        ("pad-token-5", dict(pad_token_id=5)),
    ],
    "rembert": [("default", dict(input_embedding_size=32, output_embedding_size=48))],  # 32 -> 64; untied decoder from 48
    "roberta-prelayernorm": [("default", {})],
    "roformer": [
        ("default", {}),  # rotary (interleaved) from encoder.embed_positions, 2 token types
        ("embedding-size-32", dict(embedding_size=32)),  # embeddings_project 32 -> 64
    ],  # pre-norm layers, the model's final LayerNorm
    "xlm-roberta": [("default", {})],  # roberta position ids
    "xlm-roberta-xl": [("default", {})],  # pre-norm layers, encoder.LayerNorm, no embeddings LayerNorm
    "xmod": [
        ("default", {}),  # post-norm, the adapter after output.LayerNorm reused, ln_before_adapter
        ("pre-norm", dict(pre_norm=True)),  # pre-norm layers, encoder.LayerNorm
        ("adapter-norm-after-residual", dict(adapter_layer_norm=True, ln_before_adapter=False)),
        ("no-adapter-norm-factor-4", dict(adapter_reuse_layer_norm=False, adapter_reduction_factor=4)),
    ],
    "ibert": [("default", {})],  # float mode: roberta's math, exact GELU
    "roc_bert": [
        ("default", {}),  # concat_input: map_inputs_layer over word | shape | pronunciation embeddings
        ("added-embeddings", dict(concat_input=False, shape_embed_dim=64, pronunciation_embed_dim=64)),
        ("shape-only", dict(enable_pronunciation=False)),
    ],
    "layoutlm": [("default", {})],  # bbox: x / y / h / w position embeddings
    "xlnet": [
        ("default", {}),  # relative positions (sin | cos), segment terms, gelu
        ("clamp-8-relu-eps", dict(clamp_len=8, ff_activation="relu", layer_norm_eps=1e-3)),  # distances clamped to +-8
    ],
    "lilt": [
        ("default", {}),  # channel_shrink_ratio 4: the layout stream 12 wide, heads of 3
        ("shrink-2-gelu-tanh", dict(channel_shrink_ratio=2, hidden_act="gelu_new", pad_token_id=1)),
    ],
    "layoutlmv3": [
        ("default", {}),  # 1-D and 2-D relative position biases, positions from the ids (pad 1)
        ("no-spatial-bias", dict(has_spatial_attention_bias=False, rel_pos_bins=16, max_rel_pos=32)),
        ("no-relative-bias", dict(has_relative_attention_bias=False)),  # the spatial bias alone is not added
    ],
    "tapas": [
        ("default", {}),  # positions reset per cell (column id, row id), 7 token type tables
        ("absolute-positions", dict(reset_position_index_per_cell=False, layer_norm_eps=1e-3)),
    ],
    "splinter": [("default", {})],  # BERT's layers; its head: question-aware span selection
    # RoBERTa's embeddings, BERT's layers, no entities (entity-aware queries unread); its fill-mask
    # decoder untied whatever tie_word_embeddings
    "luke": [("default", {})],
    "convbert": [
        ("default", {}),  # 2 heads of 16 and the span-based convolution (kernel 9), embeddings_project 32 -> 64
        # grouped feed-forward Linears, kernel 3, 4 heads of 8, no embeddings_project
        ("groups-2-kernel-3-ratio-1", dict(num_groups=2, conv_kernel_size=3, head_ratio=1, embedding_size=64,
                                           hidden_act="gelu_new")),
    ],
    "nystromformer": [
        ("default", {}),  # plain softmax attention beside the value conv, positions from 2, gelu_new, eps 1e-5
        # the Nystrom approximation over the batch's PREFILL_LEN tokens: 8 landmarks (segment means of 6),
        # the iterative pseudo-inverse; 4 landmarks of 12 with a conv of 3
        ("landmarks-8", dict(segment_means_seq_len=PREFILL_LEN, num_landmarks=8)),
        ("landmarks-4-kernel-3", dict(segment_means_seq_len=PREFILL_LEN, num_landmarks=4, conv_kernel_size=3,
                                      hidden_act="gelu", type_vocab_size=3)),
    ],
    # YOSO's expectation path: (1 - acos(cos) / pi)^hash_code_len over every key, padding's included
    "yoso": [
        ("default", {}),  # hash_code_len 9, no conv, one token type
        # the depthwise conv over the masked values, 2 token types
        ("conv-window-3-hash-4", dict(conv_window=3, hash_code_len=4, type_vocab_size=2, hidden_act="gelu_new")),
    ],
    "big_bird": [
        ("default", {}),  # block-sparse: 12 blocks of 4, block 0 listed twice in the middle rows
        # blocks of 5 (the batch padded to 50 inside transformers), 2 random blocks, no q/k/v biases
        ("block-5-random-2-no-bias", dict(block_size=5, num_random_blocks=2, use_bias=False)),
        # (5 + 2) * 8 = 56 >= 48 tokens: transformers switches block_sparse to original_full
        ("block-8-short-input", dict(block_size=8)),
        ("original-full", dict(attention_type="original_full")),
    ],
    # the band and the global tokens of global_attention_mask (extra_inputs)
    "longformer": [
        ("default", {}),
        # a window per layer: 2 and 8 each side, the batch padded to 64 inside transformers
        ("windows-4-16", dict(attention_window=[4, 16])),
    ],
    "markuplm": [
        ("default", {}),  # xpath_tags_seq / xpath_subs_seq, positions from the ids (pad 0)
        ("pad-token-1", dict(pad_token_id=1)),
    ],
    "squeezebert": [
        ("default", {}),  # q / k / v / intermediate / output convolutions in 4 groups, post-attention in 1
        ("groups-2-8", dict(q_groups=2, k_groups=8, v_groups=1, post_attention_groups=2, intermediate_groups=8,
                            output_groups=2, layer_norm_eps=1e-3)),  # the layers' LayerNorms keep eps 1e-12
    ],
    "funnel": [
        ("default", {}),  # relative_shift, mean pooling of queries only, cls apart, truncated; gelu_new
        # the phi / pi / psi / omega products; max pooling; block 0's layer run twice (the decoder's
        # residual is its first run: hidden_states[block_sizes[0]])
        ("factorized-max-repeats", dict(attention_type="factorized", pooling_type="max", block_repeats=[2, 1, 1])),
        # queries, keys and values pooled (the key mask by min); the cls token pooled with the rest
        ("no-separate-cls-pool-qkv", dict(separate_cls=False, pool_q_only=False)),
        ("no-truncate-factorized-pool-qkv", dict(truncate_seq=False, attention_type="factorized", pool_q_only=False)),
    ],
    "bros": [
        ("default", {}),  # 8 corner coordinates (from the 4 of bbox), 1 frequency each, bbox_scale 100
        ("dim-bbox-4-scale-10", dict(dim_bbox=4, bbox_scale=10.0, hidden_act="gelu_new")),  # 4 coordinates, 2 frequencies
    ],
}

# The contrastive models' BERT / RoBERTa text towers (src/archs/contrastive_text_towers.cpp), each
# checkpoint its *TextModel saved alone: AutoModel maps none of them (their dual models build them),
# so they are registered with it here. Each outputs pooler_output too: BertPooler's (ChineseCLIP,
# ALIGN, CLAP), AltCLIP's the first projected token (its last_hidden_state is
# transformation(pre_LN(...)), project_dim 32 wide).
for _tower in (ChineseCLIPTextModel, AlignTextModel, ClapTextModel, AltCLIPTextModel):
    AutoModel.register(_tower.config_class, _tower, exist_ok=True)
ENCODER_TYPE_BASE["altclip_text_model"] = dict(project_dim=32)
POOLER_OUTPUT |= {"chinese_clip_text_model", "align_text_model", "clap_text_model", "altclip_text_model"}
ENCODER_VARIANTS |= {
    "chinese_clip_text_model": [("default", {})],  # BERT (positions 0..seq-1, 2 token types), BertPooler
    "align_text_model": [("default", {})],  # the same
    "clap_text_model": [("default", {})],  # RoBERTa positions (padding_idx 1), one token type, BertPooler
    "altclip_text_model": [("default", {})],  # RoBERTa under roberta.*, encoder.layers, pre_LN eps 1e-5, transformation
}

# The heads: transformers' auto class (whose mapping says which types have the head) and
# Optimum's output names (ORTModelFor<Task>).
HEAD_CLASSES = {
    "fill-mask": (AutoModelForMaskedLM, ("logits",)),
    "text-classification": (AutoModelForSequenceClassification, ("logits",)),
    "token-classification": (AutoModelForTokenClassification, ("logits",)),
    "question-answering": (AutoModelForQuestionAnswering, ("start_logits", "end_logits")),
    "multiple-choice": (AutoModelForMultipleChoice, ("logits",)),
}
NUM_CHOICES = 3  # multiple-choice rows: input_ids [2, NUM_CHOICES, PREFILL_LEN]


def head_class(model_type: str, task: str):
    """The task's auto class; for question-answering of a type that transformers maps only as
    document-question-answering (LayoutLMForQuestionAnswering: start / end logits), that one."""
    auto = HEAD_CLASSES[task][0]
    mapped = auto._model_mapping._model_mapping  # noqa: SLF001 - the auto mapping
    document = AutoModelForDocumentQuestionAnswering._model_mapping._model_mapping  # noqa: SLF001
    return AutoModelForDocumentQuestionAnswering if task == "question-answering" and model_type not in mapped \
        and model_type in document else auto


def has_head(model_type: str, task: str) -> bool:
    return model_type in head_class(model_type, task)._model_mapping._model_mapping  # noqa: SLF001 - the auto mapping


# Every head of every encoder type (variant = the task), and the head configs beside the defaults.
HEAD_VARIANTS: dict[str, list[tuple[str, dict]]] = {
    "bert": [
        # the graph outputs the logits whatever the loss: regression (1 label), multi-label (sigmoid)
        ("text-classification-regression", dict(_task="text-classification", num_labels=1, problem_type="regression")),
        ("text-classification-multi-label",
         dict(_task="text-classification", num_labels=5, problem_type="multi_label_classification")),
        ("token-classification-7", dict(_task="token-classification", num_labels=7)),
        ("fill-mask-untied", dict(_task="fill-mask", tie_word_embeddings=False)),  # decoder.weight saved
        ("fill-mask-gelu-tanh", dict(_task="fill-mask", hidden_act="gelu_new")),  # the transform's activation
    ],
    "deberta": [("fill-mask-not-legacy", dict(_task="fill-mask", legacy=False))],  # lm_predictions.lm_head
    "deberta-v2": [
        ("fill-mask-not-legacy", dict(_task="fill-mask", legacy=False)),
        ("fill-mask-untied", dict(_task="fill-mask", tie_word_embeddings=False)),
        ("text-classification-pooler-tanh", dict(_task="text-classification", pooler_hidden_act="tanh")),
    ],
    "distilbert": [("fill-mask-relu", dict(_task="fill-mask", activation="relu"))],
    # BigBirdForQuestionAnswering's question mask: id 72 is at position 12 of both batch rows, so
    # positions 1..12 get -1e6 (the default row's sep id 66 is not in the batch: no mask)
    "big_bird": [("question-answering-sep-72", dict(_task="question-answering", sep_token_id=72))],
    "modernbert": [
        # classifier_pooling mean: over the mask, before head and classifier
        ("text-classification-mean", dict(_task="text-classification", classifier_pooling="mean", num_labels=3)),
        ("multiple-choice-mean", dict(_task="multiple-choice", classifier_pooling="mean")),
        # the head's dense and norm with biases, no decoder bias, gelu_new in the head
        ("fill-mask-biases", dict(_task="fill-mask", classifier_bias=True, norm_bias=True, decoder_bias=False,
                                  classifier_activation="gelu_new")),
        ("fill-mask-untied", dict(_task="fill-mask", tie_word_embeddings=False)),
    ],
    "eurobert": [
        # classifier_pooling bos / mean (the default "late" pools the logits): dense + gelu + classifier
        ("text-classification-bos", dict(_task="text-classification", classifier_pooling="bos")),
        ("text-classification-mean", dict(_task="text-classification", classifier_pooling="mean", num_labels=3)),
        ("fill-mask-tied-bias", dict(_task="fill-mask", tie_word_embeddings=True, mlp_bias=True)),  # lm_head.bias
    ],
    # tie_word_embeddings true ties nothing: EsmcForMaskedLM has no _tied_weights_keys
    "esmc": [("fill-mask-tie-word-embeddings", dict(_task="fill-mask", tie_word_embeddings=True))],
    "ultrabert": [
        # a window of 4 < the left padding (7): "cls" pools row 1's first position, a padding token whose
        # sliding layers see no token; transformers' eager path attends uniformly over every key there,
        # its default sdpa path (UltrabertPreTrainedModel: sdpa) unmasks the row: mobius equals sdpa
        ("text-classification-window-4-sdpa", dict(_task="text-classification", sliding_window=4,
                                                   _attn_implementation="sdpa")),
        ("text-classification-mean", dict(_task="text-classification", classifier_pooling="mean", num_labels=3)),
        ("fill-mask-tied", dict(_task="fill-mask", tie_word_embeddings=True)),
    ],
    "xlm": [
        # the summary of the last token with its activation after the labels' projection
        ("text-classification-last-tanh", dict(_task="text-classification", summary_type="last",
                                               summary_activation="tanh", num_labels=3)),
        ("multiple-choice-tanh", dict(_task="multiple-choice", summary_activation="tanh", num_labels=3)),
    ],
    "mobilebert": [
        ("fill-mask-untied", dict(_task="fill-mask", tie_word_embeddings=False)),  # cls.predictions.decoder.weight saved
        ("text-classification-no-pooler-activation", dict(_task="text-classification", classifier_activation=False)),
    ],
    # no question token in the batch: the span selection queries position 0 (row 1: a padding token)
    "splinter": [("question-answering-no-question-token", dict(_task="question-answering", question_token_id=104))],
    "roformer": [("multiple-choice-first-proj", dict(_task="multiple-choice", summary_type="first",
                                                     summary_use_proj=True, summary_activation="tanh"))],
    # the summary of the first token, projected, tanh (the default: the last token alone)
    "convbert": [("multiple-choice-first-proj", dict(_task="multiple-choice", summary_type="first",
                                                     summary_use_proj=True, summary_activation="tanh"))],
    # XLNetSequenceSummary of the first token without its projection, gelu (the default: the last token,
    # projected, tanh: row 0's last token is padding)
    "xlnet": [("text-classification-first-no-proj", dict(_task="text-classification", summary_type="first",
                                                         summary_use_proj=False, summary_activation="gelu",
                                                         num_labels=3))],
    # from 10 labels LayoutLMv3ForTokenClassification's classifier is its classification head (dense, tanh, out_proj)
    "layoutlmv3": [("token-classification-10", dict(_task="token-classification", num_labels=10))],
    # the landmark path under a head (its key mask: see reference_mask)
    "nystromformer": [("text-classification-landmarks", dict(_task="text-classification", segment_means_seq_len=PREFILL_LEN,
                                                             num_landmarks=8, num_labels=3))],
    "electra": [("multiple-choice-no-summary-proj", dict(_task="multiple-choice", summary_use_proj=False,
                                                        summary_activation="tanh"))],
}

ROWS = [Row("feature-extraction", mt, name, ov) for mt, vs in ENCODER_VARIANTS.items() for name, ov in vs] + [
    Row(task, mt, task, {"_task": task}) for mt in ENCODER_VARIANTS for task in HEAD_CLASSES
    if has_head(mt, task)] + [
    Row(ov["_task"], mt, name, ov) for mt, vs in HEAD_VARIANTS.items() for name, ov in vs]


def base_kwargs(model_type: str) -> dict:
    """The tiny sizes (and per-type settings) every row of `model_type` starts from (DROP: a size
    of ENCODER_BASE the type's config class does not take)."""
    return {k: v for k, v in {**ENCODER_BASE, **ENCODER_TYPE_BASE.get(model_type, {})}.items() if v != DROP}


# ---------------------------------------------------------------------------------------------
# Encoders (feature-extraction): one padded batch, last_hidden_state on the tokens
# ---------------------------------------------------------------------------------------------
RIGHT_PAD = 5  # right padding of encoder batch row 0 (BERT tokenizers pad on the right)


def encoder_batch(config, seed: int = 1):
    """Batch of 2, PREFILL_LEN long: row 0 right-padded by RIGHT_PAD, row 1 left-padded by PAD
    (which moves roberta's input_ids-derived position ids off 0..seq-1). Padding holds the
    config's pad_token_id and no real token is the pad id; token_type_ids are random over the type
    vocabulary (XLM's: TOKEN_TYPES) on the tokens, 0 on padding (None for models without token types)."""
    rng = np.random.RandomState(seed)
    pad = config.pad_token_id if config.pad_token_id is not None else BATCH_PAD_IDS[config.model_type]
    ids = rng.randint(0, config.vocab_size - 1, size=(2, PREFILL_LEN)).astype(np.int64)
    ids[ids >= pad] += 1
    mask = np.ones_like(ids)
    mask[0, PREFILL_LEN - RIGHT_PAD:] = 0
    mask[1, :PAD] = 0
    ids[mask == 0] = pad
    types = getattr(config, "type_vocab_size", None) or TOKEN_TYPES.get(config.model_type)
    token_types = rng.randint(0, types, size=ids.shape).astype(np.int64) * mask if types else None
    return ids, mask, token_types


def extra_inputs(config, mask: np.ndarray, seed: int = 1) -> dict[str, np.ndarray]:
    """The inputs a type reads beside input_ids / attention_mask / token_type_ids (the graph's
    Encoder::extra_inputs, named as the transformers forward names them), for encoder_batch's
    mask: RoC-BERT's input_shape_ids / input_pronunciation_ids random over their vocabularies on
    the tokens, TAPAS' token_type_ids [batch, seq, 7] random over its type_vocab_sizes (cells of
    scattered tokens), LayoutLM's, LiLT's and LayoutLMv3's bbox [batch, seq, 4] random boxes (x0 <= x1, y0 <= y1) within
    max_2d_position_embeddings, BROS' bbox [batch, seq, 4] float32 random boxes in [0, 1), MarkupLM's xpath_tags_seq / xpath_subs_seq [batch, seq, max_depth]
    random over their tables (tag_pad_id / subs_pad_id on padding), XLM's / FlauBERT's langs random
    over n_langs (with language embeddings); 0 on padding. Longformer's global_attention_mask
    [batch, seq]: 1 on about one position in eight, on padding too (merged away there), so
    that the rows hold different numbers of global tokens."""
    rng = np.random.RandomState(seed + 100)
    out = {}
    if config.model_type in ("layoutlm", "lilt", "layoutlmv3"):
        half = config.max_2d_position_embeddings // 2
        corner = rng.randint(0, half, size=(*mask.shape, 2))
        size = rng.randint(0, half, size=(*mask.shape, 2))
        out["bbox"] = np.concatenate([corner, corner + size], axis=-1).astype(np.int64) * mask[..., None]
    if config.model_type == "bros":  # float boxes (x0 <= x1, y0 <= y1) in [0, 1)
        corner = rng.rand(*mask.shape, 2) * 0.5
        size = rng.rand(*mask.shape, 2) * 0.5
        out["bbox"] = (np.concatenate([corner, corner + size], axis=-1) * mask[..., None]).astype(np.float32)
    if config.model_type == "markuplm":
        shape = (*mask.shape, config.max_depth)
        tags = rng.randint(0, config.max_xpath_tag_unit_embeddings, size=shape)
        subs = rng.randint(0, config.max_xpath_subs_unit_embeddings, size=shape)
        out["xpath_tags_seq"] = np.where(mask[..., None] == 1, tags, config.tag_pad_id).astype(np.int64)
        out["xpath_subs_seq"] = np.where(mask[..., None] == 1, subs, config.subs_pad_id).astype(np.int64)
    if config.model_type in ("xlm", "flaubert") and config.n_langs > 1 and config.use_lang_emb:
        out["langs"] = rng.randint(0, config.n_langs, size=mask.shape).astype(np.int64) * mask
    if config.model_type == "tapas":  # token_type_ids [batch, seq, 7]: one id per table
        sizes = config.type_vocab_sizes
        types = np.stack([rng.randint(0, n, size=mask.shape) for n in sizes], axis=-1)
        out["token_type_ids"] = types.astype(np.int64) * mask[..., None]
    if config.model_type == "longformer":
        out["global_attention_mask"] = (rng.rand(*mask.shape) < 0.125).astype(np.int64)
    if config.model_type == "roc_bert":
        if config.enable_shape:
            out["input_shape_ids"] = rng.randint(0, config.shape_vocab_size, size=mask.shape).astype(np.int64) * mask
        if config.enable_pronunciation:
            out["input_pronunciation_ids"] = (
                rng.randint(0, config.pronunciation_vocab_size, size=mask.shape).astype(np.int64) * mask)
    return out


def reference_mask(model, mask: np.ndarray) -> torch.Tensor:
    """attention_mask as the reference takes it: the 2-D mask, but for Nystromformer's landmark path
    (num_landmarks != segment_means_seq_len) the additive key mask [batch, 1, 1, seq] in the model's
    dtype (0 on tokens, its lowest value on padding; transformers 4.x's get_extended_attention_mask),
    which create_bidirectional_mask passes on as it is: transformers 5.23's own [batch, 1, seq, seq]
    mask cannot be added to the landmark scores [batch, heads, num_landmarks, seq], its forward fails
    on any padded batch (src/archs/nystromformer.cpp)."""
    m = torch.as_tensor(mask)
    config = model.config
    if config.model_type != "nystromformer" or config.num_landmarks == config.segment_means_seq_len:
        return m
    assert m.ndim == 2, "the landmark path's key mask is made for a [batch, seq] mask"
    dtype = next(model.parameters()).dtype
    return (1 - m[:, None, None, :]).to(dtype) * torch.finfo(dtype).min


def torch_kwargs(token_types, extra: dict) -> dict:
    kw = {name: torch.as_tensor(v) for name, v in extra.items()}
    if token_types is not None:
        kw["token_type_ids"] = torch.as_tensor(token_types)
    return kw


@torch.no_grad()
def hf_encode(model, ids, mask, token_types, extra=None) -> np.ndarray:
    out = model(input_ids=torch.as_tensor(ids), attention_mask=reference_mask(model, mask),
                **torch_kwargs(token_types, extra or {}))
    return out.last_hidden_state.double().numpy()


@torch.no_grad()
def hf_pooler_output(model, ids, mask, token_types, extra=None) -> np.ndarray:
    out = model(input_ids=torch.as_tensor(ids), attention_mask=torch.as_tensor(mask),
                **torch_kwargs(token_types, extra or {}))
    return out.pooler_output.double().numpy()


def run_encoder_parity(model_type: str, overrides: dict, work: Path, row: dict, build_args=()) -> list[str]:
    """Fills row["prefill"] with max|Δ| of last_hidden_state (a head row: of each of the head's
    outputs) over the non-padding tokens of the padded batch; returns the failed checks (empty
    list = pass). build_args: further `mobius build` options (--ep cpu)."""
    if "_task" in overrides:
        return run_head_parity(model_type, overrides, work, row, build_args)
    hf_dir, out_dir = work / "hf", work / "onnx"
    model = H.write_checkpoint(model_type, overrides, hf_dir)
    ref = H.load_reference(hf_dir, AutoModel, overrides)
    ids, mask, token_types = encoder_batch(ref.config)
    extra = extra_inputs(ref.config, mask)

    path = H.build(hf_dir, out_dir, *build_args)
    failures = H.check_model(path, row)

    sess = H.ort_session(path)
    inputs = {"input_ids", "attention_mask"} | (set() if token_types is None else {"token_type_ids"}) | set(extra)
    outputs = ["last_hidden_state"] + (["pooler_output"] if model_type in POOLER_OUTPUT else [])
    problems = H.io_problems(sess, inputs, set(outputs))
    if problems:
        return failures + [f"I/O contract: {p}" for p in problems]

    # harness self-check: the checkpoint on disk is the model we made, on the tokens (loading
    # ChineseCLIPTextModel zeroes its word embeddings' padding row, which only padding positions read)
    valid = mask.astype(bool)
    assert np.array_equal(hf_encode(ref, ids, mask, token_types, extra)[valid],
                          hf_encode(model, ids, mask, token_types, extra)[valid]), \
        "reloaded checkpoint differs from the in-memory model"
    hf = hf_encode(H.float64(ref), ids, mask, token_types, extra)
    feeds = {"input_ids": ids, "attention_mask": mask, **extra}
    if token_types is not None:
        feeds["token_type_ids"] = token_types
    ox, *pooled = sess.run(outputs, feeds)
    assert ox.shape == hf.shape, f"last_hidden_state shape {ox.shape}, expected {hf.shape}"
    row["prefill"] = H.delta(row, ox[valid], hf[valid])
    if not row["prefill"] <= TOL:
        failures.append(f"last_hidden_state max|Δ| {row['prefill']:.3g} > {TOL}")
    if pooled:
        want = hf_pooler_output(H.float64(ref), ids, mask, token_types, extra)
        assert pooled[0].shape == want.shape, f"pooler_output shape {pooled[0].shape}, expected {want.shape}"
        delta = H.delta(row, pooled[0], want)
        row["prefill"] = max(row["prefill"], delta)
        if not delta <= TOL:
            failures.append(f"pooler_output max|Δ| {delta:.3g} > {TOL}")
    return failures


@torch.no_grad()
def hf_head(model, task: str, ids, mask, token_types, extra=None) -> dict[str, np.ndarray]:
    out = model(input_ids=torch.as_tensor(ids), attention_mask=reference_mask(model, mask),
                **torch_kwargs(token_types, extra or {}))
    return {name: getattr(out, name).double().numpy() for name in HEAD_CLASSES[task][1]}


def head_batch(config, task: str):
    """encoder_batch and its extra_inputs, or for multiple-choice NUM_CHOICES of them (seeds 1..)
    as [2, choices, seq]."""
    if task != "multiple-choice":
        ids, mask, types = encoder_batch(config)
        return ids, mask, types, extra_inputs(config, mask)
    batches = [encoder_batch(config, seed) for seed in range(1, NUM_CHOICES + 1)]
    extras = [extra_inputs(config, b[1], seed) for seed, b in zip(range(1, NUM_CHOICES + 1), batches)]
    stacked = tuple(None if parts[0] is None else np.stack(parts, axis=1) for parts in zip(*batches))
    return (*stacked, {name: np.stack([e[name] for e in extras], axis=1) for name in extras[0]})


PUSHED_OUT = 1e5  # |logit| above which run_head_parity compares within float32's spacing


def run_head_parity(model_type: str, overrides: dict, work: Path, row: dict, build_args=()) -> list[str]:
    """A head row: the checkpoint of the task's class, the package built from its architectures
    (no --task), each output compared with the float64 reference: per-token outputs on the
    non-padding tokens, per-sequence ones (classification, multiple choice) whole."""
    task = overrides["_task"]
    auto, outputs = head_class(model_type, task), HEAD_CLASSES[task][1]
    hf_dir, out_dir = work / "hf", work / "onnx"
    model = H.write_checkpoint(model_type, overrides, hf_dir, auto)
    ref = H.load_reference(hf_dir, auto, overrides)
    ids, mask, token_types, extra = head_batch(ref.config, task)

    path = H.build(hf_dir, out_dir, *build_args)
    failures = H.check_model(path, row)
    sess = H.ort_session(path)
    inputs = {"input_ids", "attention_mask"} | (set() if token_types is None else {"token_type_ids"}) | set(extra)
    problems = H.io_problems(sess, inputs, set(outputs))
    if problems:
        return failures + [f"I/O contract: {p}" for p in problems]

    # harness self-check, on the tensors: two equal float32 models may differ in the last bit of
    # their outputs (seen on multiple-choice's batch of 6: 6e-8, the kernels' memory alignment)
    saved, made = ref.state_dict(), model.state_dict()
    assert saved.keys() == made.keys() and all(torch.equal(saved[k], made[k]) for k in saved), \
        "reloaded checkpoint differs from the in-memory model"
    hf = hf_head(H.float64(ref), task, ids, mask, token_types, extra)
    feeds = {"input_ids": ids, "attention_mask": mask, **extra}
    if token_types is not None:
        feeds["token_type_ids"] = token_types
    got = dict(zip(outputs, sess.run(list(outputs), feeds)))
    per_token = task in ("fill-mask", "token-classification", "question-answering")
    valid = mask.astype(bool)
    deltas = []
    for name in outputs:
        if got[name].shape != hf[name].shape:
            return failures + [f"{name} shape {got[name].shape}, expected {hf[name].shape}"]
        g, want = (got[name][valid], hf[name][valid]) if per_token else (got[name], hf[name])
        # logits a head pushed out of the competition (BigBird's question mask: logits - 1e6) are
        # held by float32 to its spacing there (1/16), not to TOL: compared within that spacing
        pushed = np.abs(want) > PUSHED_OUT
        if pushed.any():
            spacing = np.spacing(np.abs(want[pushed]).astype(np.float32))
            if not (np.abs(g[pushed] - want[pushed]) <= spacing).all():
                failures.append(f"{name}: a logit below -{PUSHED_OUT:g} differs by more than float32's spacing")
            g, want = g[~pushed], want[~pushed]
        deltas.append(H.delta(row, g, want))
        if not deltas[-1] <= TOL:
            failures.append(f"{name} max|Δ| {deltas[-1]:.3g} > {TOL}")
    row["prefill"] = max(deltas)
    return failures


def check_quantized(model_type: str, overrides: dict, work: Path, bits: int) -> list[str]:
    """`--precision int4|int8` (bits 4 | 8) with seq2seq_harness.INT4_PINNED (accuracy level 0,
    embeddings in float, as MatMulNBitsQuantizer's defaults): every MatMul by a 2-D checkpoint
    weight is a MatMulNBits of `bits`, and every output (last_hidden_state, or the head's) equals
    that of mobius' float build quantized by onnxruntime's MatMulNBitsQuantizer (the same weights
    and kernel), max|Δ| <= harness.TOL over the padded batch."""
    from onnxruntime.quantization.matmul_nbits_quantizer import MatMulNBitsQuantizer

    import seq2seq_harness as S

    task = overrides.get("_task")
    auto = head_class(model_type, task) if task else AutoModel
    hf_dir, q_dir, f_dir = work / "hf", work / f"int{bits}", work / "float"
    model = H.write_checkpoint(model_type, overrides, hf_dir, *([auto] if task else []))
    H.build(hf_dir, q_dir, "--precision", f"int{bits}", *S.INT4_PINNED)
    H.build(hf_dir, f_dir)
    quantized = onnx.load(str(H.graph_path(q_dir, "model")))
    nbits, left = S.weight_matmuls(quantized)
    widths = {a.i for n in quantized.graph.node if n.op_type == "MatMulNBits" for a in n.attribute if a.name == "bits"}
    if nbits == 0 or left or widths != {bits}:
        return [f"{nbits} MatMulNBits of bits {sorted(widths)}, float weight MatMuls left: {left}"]
    q = MatMulNBitsQuantizer(onnx.load(str(H.graph_path(f_dir, "model"))), bits=bits, block_size=32,
                             is_symmetric=True)
    q.process()
    ref_path = work / f"ort-int{bits}.onnx"
    onnx.save(q.model.model, str(ref_path))
    ids, mask, token_types, extra = head_batch(model.config, task or "feature-extraction")
    feeds = {"input_ids": ids, "attention_mask": mask, **extra}
    if token_types is not None:
        feeds["token_type_ids"] = token_types
    sess = H.ort_session(H.graph_path(q_dir, "model"))
    names = [o.name for o in sess.get_outputs()]
    got, want = sess.run(names, feeds), H.ort_session(ref_path).run(names, feeds)
    return [f"int{bits} {n} vs onnxruntime's quantizer on the float build: max|Δ| {d:.3g} > {H.TOL}"
            for n, g, w in zip(names, got, want) if not (d := H.max_abs(g, w)) <= H.TOL]
