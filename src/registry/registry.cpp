#include "registry/registry.h"

#include <algorithm>

#include "util/error.h"
#include "util/input_files.h"
#include "weights/weight_plan.h"

namespace mobius {

const std::vector<RegistryEntry>& registry() {
  static const std::vector<RegistryEntry> table = [] {
    std::vector<RegistryEntry> t = {
        {"albert", "bert", "feature-extraction", create_albert},
        {"bert", "bert", "feature-extraction", create_bert},
        {"camembert", "bert", "feature-extraction", create_camembert},
        {"data2vec-text", "bert", "feature-extraction", create_data2vec_text},
        {"deberta", "deberta", "feature-extraction", create_deberta},
        {"deberta-v2", "deberta", "feature-extraction", create_deberta_v2},
        {"distilbert", "bert", "feature-extraction", create_distilbert},
        {"electra", "bert", "feature-extraction", create_electra},
        {"ernie", "bert", "feature-extraction", create_ernie},
        {"esm", "esm", "feature-extraction", create_esm},
        {"megatron-bert", "bert", "feature-extraction", create_megatron_bert},
        {"modernbert", "modernbert", "feature-extraction", create_modernbert},
        {"eurobert", "eurobert", "feature-extraction", create_eurobert},
        {"ultrabert", "eurobert", "feature-extraction", create_ultrabert},
        {"esmc", "eurobert", "feature-extraction", create_esmc},
        {"openai_privacy_filter", "eurobert", "feature-extraction", create_openai_privacy_filter},
        {"canine", "canine", "feature-extraction", create_canine},
        // the contrastive models' BERT / RoBERTa text towers (archs/contrastive_text_towers.cpp)
        {"chinese_clip_text_model", "contrastive_text_towers", "feature-extraction", create_chinese_clip_text_model},
        {"align_text_model", "contrastive_text_towers", "feature-extraction", create_align_text_model},
        {"clap_text_model", "contrastive_text_towers", "feature-extraction", create_clap_text_model},
        {"altclip_text_model", "contrastive_text_towers", "feature-extraction", create_altclip_text_model},
        {"xlm", "xlm", "feature-extraction", create_xlm},
        {"flaubert", "xlm", "feature-extraction", create_flaubert},
        {"jina_embeddings_v3", "jina_embeddings_v3", "feature-extraction", create_jina_embeddings_v3},
        {"nomic_bert", "jina_embeddings_v3", "feature-extraction", create_nomic_bert},
        {"gte", "jina_embeddings_v3", "feature-extraction", create_gte},
        {"mpnet", "bert", "feature-extraction", create_mpnet},
        {"gemma", "gemma", "text-generation", create_gemma, "gemma"},
        {"gemma2", "gemma", "text-generation", create_gemma2, "gemma2"},
        {"gemma3_text", "gemma", "text-generation", create_gemma3_text, "gemma3_text"},
        // per-layer inputs and KV-shared layers without a cache (archs/gemma4.cpp): onnxruntime-genai
        // 0.18 names gemma4 / gemma4_text types and a per_layer_inputs tensor (its multimodal pipeline's,
        // not probed further), and its "decoder" cannot skip a layer without a cache; no genai model type
        {"gemma4_text", "gemma", "text-generation", create_gemma4_text, ""},
        {"gemma4_unified_text", "gemma", "text-generation", create_gemma4_unified_text, ""},
        // Gemma 4's attention and KV sharing with AltUp streams (archs/gemma3n.cpp): genai 0.18 has no
        // gemma3n type and its decoder cannot skip the KV-shared layers' caches; no genai model type
        {"gemma3n_text", "gemma", "text-generation", create_gemma3n_text, ""},
        {"vaultgemma", "gemma", "text-generation", create_vaultgemma},
        {"llama", "llama", "text-generation", create_llama, "llama"},
        {"mistral", "llama", "text-generation", create_mistral, "mistral"},
        {"qwen2", "llama", "text-generation", create_qwen2, "qwen2"},
        {"qwen3", "llama", "text-generation", create_qwen3, "qwen3"},
        {"roberta", "bert", "feature-extraction", create_roberta},
        {"rembert", "bert", "feature-extraction", create_rembert},
        {"roberta-prelayernorm", "bert", "feature-extraction", create_roberta_prelayernorm},
        {"roformer", "bert", "feature-extraction", create_roformer},
        {"xlm-roberta", "bert", "feature-extraction", create_xlm_roberta},
        {"xlm-roberta-xl", "bert", "feature-extraction", create_xlm_roberta_xl},
        {"xmod", "bert", "feature-extraction", create_xmod},
        {"ibert", "bert", "feature-extraction", create_ibert},
        {"roc_bert", "bert", "feature-extraction", create_roc_bert},
        {"layoutlm", "bert", "feature-extraction", create_layoutlm},
        {"tapas", "bert", "feature-extraction", create_tapas},
        {"splinter", "bert", "feature-extraction", create_splinter},
        {"luke", "bert", "feature-extraction", create_luke},
        {"convbert", "bert", "feature-extraction", create_convbert},
        {"nystromformer", "bert", "feature-extraction", create_nystromformer},
        {"yoso", "bert", "feature-extraction", create_yoso},
        {"longformer", "bert", "feature-extraction", create_longformer},
        {"big_bird", "bert", "feature-extraction", create_big_bird},
        {"markuplm", "bert", "feature-extraction", create_markuplm},
        {"squeezebert", "bert", "feature-extraction", create_squeezebert},
        {"lilt", "bert", "feature-extraction", create_lilt},
        {"layoutlmv3", "bert", "feature-extraction", create_layoutlmv3},
        {"xlnet", "xlnet", "feature-extraction", create_xlnet},
        {"funnel", "funnel", "feature-extraction", create_funnel},
        {"bros", "bert", "feature-extraction", create_bros},
        {"mobilebert", "bert", "feature-extraction", create_mobilebert},
        {"fnet", "bert", "feature-extraction", create_fnet},
        {"phi", "phi", "text-generation", create_phi, "phi"},
        {"phi3", "phi3", "text-generation", create_phi3, "phi3"},
        {"gpt_neox", "gpt_neox", "text-generation", create_gpt_neox},
        {"gpt_neox_japanese", "gpt_neox_japanese", "text-generation", create_gpt_neox_japanese},
        {"stablelm", "stablelm", "text-generation", create_stablelm},
        {"persimmon", "persimmon", "text-generation", create_persimmon},
        {"gptj", "gptj", "text-generation", create_gptj},
        {"codegen", "gptj", "text-generation", create_codegen},
        {"glm", "glm", "text-generation", create_glm},
        {"glm4", "glm", "text-generation", create_glm4},
        {"cohere", "cohere", "text-generation", create_cohere},
        {"cohere2", "cohere", "text-generation", create_cohere2},
        {"cohere2_moe", "cohere", "text-generation", create_cohere2_moe},
        {"cohere_compass_text", "cohere", "text-generation", create_cohere_compass_text},
        {"mixtral", "mixtral", "text-generation", create_mixtral},
        {"qwen2_moe", "mixtral", "text-generation", create_qwen2_moe},
        {"qwen3_moe", "mixtral", "text-generation", create_qwen3_moe},
        {"aria_text", "mixtral", "text-generation", create_aria_text},
        {"dbrx", "mixtral", "text-generation", create_dbrx},
        {"olmoe", "mixtral", "text-generation", create_olmoe},
        {"phimoe", "mixtral", "text-generation", create_phimoe, "phimoe"},
        {"granitemoe", "mixtral", "text-generation", create_granitemoe},
        {"granitemoeshared", "mixtral", "text-generation", create_granitemoeshared},
        {"granitemoe_swa", "mixtral", "text-generation", create_granitemoe_swa},
        {"deepseek_v2", "deepseek", "text-generation", create_deepseek_v2},
        {"deepseek_v3", "deepseek", "text-generation", create_deepseek_v3},
        {"glm4_moe_lite", "deepseek", "text-generation", create_glm4_moe_lite},
        {"axk1", "deepseek", "text-generation", create_axk1},
        // the indexer keys beside the KV cache: a second layer state genai does not read (blocks/dsa.h)
        {"deepseek_v32", "deepseek", "text-generation", create_deepseek_v32, ""},
        {"glm_moe_dsa", "deepseek", "text-generation", create_glm_moe_dsa, ""},
        // two MLA caches per layer (cache layers 2l, 2l + 1): genai's generic "decoder" reads them as layers
        {"longcat_flash", "deepseek", "text-generation", create_longcat_flash},
        {"axk2", "deepseek", "text-generation", create_axk2, ""},
        {"youtu", "deepseek", "text-generation", create_youtu},
        {"minicpm3", "deepseek", "text-generation", create_minicpm3},
        {"dots1", "dots1", "text-generation", create_dots1},
        {"glm4_moe", "glm4_moe", "text-generation", create_glm4_moe},
        {"solar_open", "solar_open", "text-generation", create_solar_open},
        {"minimax_m2", "minimax_m2", "text-generation", create_minimax_m2},
        // the block indexer's keys beside the KV cache (blocks/block_sparse_attention.h): no genai type
        {"minimax_m3_vl_text", "minimax_m3_vl", "text-generation", create_minimax_m3_vl_text, ""},
        {"gpt_oss", "gpt_oss", "text-generation", create_gpt_oss, "gptoss"},
        {"jetmoe", "jetmoe", "text-generation", create_jetmoe},
        {"gpt2", "gpt2", "text-generation", create_gpt2},
        {"gpt-sw3", "gpt2", "text-generation", create_gpt2},  // GPT2Config and GPT2LMHeadModel
        {"gpt_bigcode", "gpt_bigcode", "text-generation", create_gpt_bigcode},
        {"gpt_neo", "gpt_neo", "text-generation", create_gpt_neo},
        {"opt", "opt", "text-generation", create_opt},
        {"biogpt", "biogpt", "text-generation", create_biogpt},
        {"xglm", "xglm", "text-generation", create_xglm},
        {"ctrl", "ctrl", "text-generation", create_ctrl},
        // the prompt positions ahead of attention_mask's in the cache: genai does not run it (archs/cpmant.cpp)
        {"cpmant", "cpmant", "text-generation", create_cpmant, ""},
        {"openai-gpt", "openai_gpt", "text-generation", create_openai_gpt},
        {"bloom", "bloom", "text-generation", create_bloom},
        {"mpt", "mpt", "text-generation", create_mpt},
        {"diffllama", "diffllama", "text-generation", create_diffllama},
        {"modernbert-decoder", "modernbert", "text-generation", create_modernbert_decoder},
        {"bert-generation", "bert_generation", "text-generation", create_bert_generation},
        {"bitnet", "bitnet", "text-generation", create_bitnet},
        {"afmoe", "afmoe", "text-generation", create_afmoe},
        {"hy_v3", "hy_v3", "text-generation", create_hy_v3},
        {"llama4_text", "llama4", "text-generation", create_llama4_text},
        {"doge", "doge", "text-generation", create_doge},
        {"laguna", "laguna", "text-generation", create_laguna},
        {"mellum", "laguna", "text-generation", create_mellum},
        {"flint", "flint", "text-generation", create_flint},
        // sliding layers with twice the full layers' KV heads, values narrower than keys: a cache
        // layout per layer type, which genai does not read (onnxruntime-genai 0.18 has no mimo type)
        {"mimo_v2_flash", "laguna", "text-generation", create_mimo_v2_flash, ""},
        {"beam", "beam", "text-generation", create_beam},
        {"kolibri1", "kolibri1", "text-generation", create_kolibri1},
        {"falcon", "falcon", "text-generation", create_falcon},
        // Llama-like types with DecoderSpec options (archs/<family>.cpp)
        {"apertus", "apertus", "text-generation", create_apertus},
        {"arcee", "arcee", "text-generation", create_arcee},
        {"cwm", "cwm", "text-generation", create_cwm},
        {"ernie4_5", "ernie4_5", "text-generation", create_ernie4_5, "ernie4_5"},
        {"ernie4_5_moe", "ernie4_5", "text-generation", create_ernie4_5_moe},
        {"exaone4", "exaone4", "text-generation", create_exaone4},
        {"exaone_moe", "exaone4", "text-generation", create_exaone_moe},
        {"granite", "granite", "text-generation", create_granite, "granite"},
        {"granite_swa", "granite", "text-generation", create_granite_swa},
        {"helium", "helium", "text-generation", create_helium},
        {"hunyuan_v1_dense", "hunyuan_v1_dense", "text-generation", create_hunyuan_v1_dense, "hunyuandensev1"},
        {"hunyuan_v1_moe", "hunyuan_v1_dense", "text-generation", create_hunyuan_v1_moe},
        {"hyperclovax", "granite", "text-generation", create_hyperclovax},
        {"internlm3", "internlm3", "text-generation", create_internlm3},
        {"iquestcoder", "llama", "text-generation", create_iquestcoder},
        {"jais2", "jais2", "text-generation", create_jais2},
        {"ministral", "ministral", "text-generation", create_ministral},
        {"ministral3", "ministral3", "text-generation", create_ministral3},
        {"nanochat", "nanochat", "text-generation", create_nanochat},
        {"nemotron", "nemotron", "text-generation", create_nemotron, "nemotron"},
        {"olmo", "olmo", "text-generation", create_olmo, "olmo"},
        {"olmo2", "olmo", "text-generation", create_olmo2},
        {"olmo3", "olmo", "text-generation", create_olmo3},
        {"flex_olmo", "olmo", "text-generation", create_flex_olmo},
        {"seed_oss", "seed_oss", "text-generation", create_seed_oss},
        {"smollm3", "smollm3", "text-generation", create_smollm3, "smollm3"},
        {"starcoder2", "starcoder2", "text-generation", create_starcoder2},
        // state-space models (archs/mamba.cpp, falcon_mamba.cpp, mamba2.cpp): onnxruntime-genai 0.18's
        // "decoder" type reads their conv/recurrent states by name (genai_config.json layer_types)
        {"mamba", "mamba", "text-generation", create_mamba},
        {"falcon_mamba", "mamba", "text-generation", create_falcon_mamba},
        {"mamba2", "mamba", "text-generation", create_mamba2},
        // hybrids of attention and state-space layers (archs/bamba.cpp, granitemoehybrid.cpp):
        // onnxruntime-genai 0.18 reads their conv/recurrent states by name (genai_config.json layer_types)
        {"bamba", "hybrid", "text-generation", create_bamba},
        {"granitemoehybrid", "hybrid", "text-generation", create_granitemoehybrid, "granitemoehybrid"},
        // Mamba + attention (archs/jamba.cpp): genai's generic "decoder" reads its states as bamba's
        {"jamba", "hybrid", "text-generation", create_jamba},
        // Mamba-2, attention and MLP layers (archs/nemotron_h.cpp): an MLP layer carries no state, which
        // genai 0.18's "decoder" cannot skip; no onnxruntime-genai model type
        {"nemotron_h", "hybrid", "text-generation", create_nemotron_h, ""},
        // attention and Mamba-2 side by side in every layer (archs/falcon_h1.cpp): a layer carrying a
        // KV cache and conv/recurrent states, which genai 0.18's "decoder" cannot read; no genai model type
        {"falcon_h1", "hybrid", "text-generation", create_falcon_h1, ""},
        // Mamba layers and a shared attention block on concat(hidden, embeddings) (archs/zamba.cpp,
        // zamba2.cpp, archs/zamba.h): a hybrid layer carries a KV cache and conv/recurrent states; no
        // genai model type
        {"zamba", "hybrid", "text-generation", create_zamba, ""},
        {"zamba2", "hybrid", "text-generation", create_zamba2, ""},
        // short-convolution + attention (archs/lfm2.cpp, lfm2_moe.cpp): onnxruntime-genai 0.18's "lfm2"
        // and "lfm2_moe" types read the conv states (genai_config.json layer_types "conv", conv_cache_size)
        {"lfm2", "lfm2", "text-generation", create_lfm2, "lfm2"},
        {"lfm2_moe", "lfm2", "text-generation", create_lfm2_moe, "lfm2_moe"},
        // LFM3 (archs/lfm3.cpp): LFM2's layers plus sliding-window attention, which genai's "lfm2" type lacks:
        // its generic "decoder", as the hybrids below
        {"lfm3", "lfm2", "text-generation", create_lfm3},
        // gated DeltaNet + gated attention layers (archs/qwen3_next.cpp, qwen3_5.cpp): genai's generic
        // "decoder" reads their conv/recurrent states by name as bamba's (genai_config.json layer_types)
        {"qwen3_next", "hybrid", "text-generation", create_qwen3_next},
        {"qwen3_5_text", "hybrid", "text-generation", create_qwen3_5_text},
        {"qwen3_5_moe_text", "hybrid", "text-generation", create_qwen3_5_moe_text},
        // Qwen4-Exp text (archs/qwen4_exp.cpp): hyper-connection streams, QSA attention, n-gram PLE
        // states (an int64 n-gram context); onnxruntime-genai 0.18 has no qwen4_exp type
        {"qwen4_exp_text", "hybrid", "text-generation", create_qwen4_exp_text, ""},
        // OLMo 2 attention + gated DeltaNet layers (archs/olmo_hybrid.cpp): genai's generic "decoder" as qwen3_next
        {"olmo_hybrid", "hybrid", "text-generation", create_olmo_hybrid},
        // Kimi Delta Attention + NoPE MLA layers (archs/kimi_linear.cpp): genai's generic "decoder" as qwen3_next
        {"kimi_linear", "hybrid", "text-generation", create_kimi_linear},
        // Ling 3.0's Kimi Delta Attention + gated MLA layers (archs/kimi_linear.cpp): as kimi_linear
        {"bailing_hybrid", "hybrid", "text-generation", create_bailing_hybrid},
        // softmax attention + lightning attention layers (archs/minimax.cpp): a lightning layer's state
        // is linear_cache, which genai 0.18's "decoder" does not read; no genai model type
        {"minimax", "hybrid", "text-generation", create_minimax, ""},
        // attention + four short-convolution states per layer (archs/inkling.cpp): no genai model type
        {"inkling_text", "hybrid", "text-generation", create_inkling_text, ""},
        // RG-LRU recurrent blocks + local attention (archs/recurrent_gemma.cpp, blocks/rg_lru.h):
        // genai's generic "decoder" reads their conv/recurrent states by name (genai_config.json layer_types)
        {"recurrent_gemma", "hybrid", "text-generation", create_recurrent_gemma},
        // RWKV-4 (archs/rwkv.cpp): time-shift and wkv (num/den/max) states, which genai 0.18 does not read
        {"rwkv", "rwkv", "text-generation", create_rwkv, ""},
        // xLSTM (archs/xlstm.cpp, blocks/mlstm.h): the mLSTM states C / n / m, which genai 0.18 does not read
        {"xlstm", "xlstm", "text-generation", create_xlstm, ""},
        // ZAYA1 (archs/zaya.cpp): a CCA conv window and delayed value beside each KV cache, which genai 0.18 does not read
        {"zaya", "hybrid", "text-generation", create_zaya, ""},
        // vision-language models (archs/qwen2_vl.cpp, llava.cpp, vipllava.cpp, llava_next.cpp, idefics3.cpp,
        // paddleocr_vl.cpp, mistral3.cpp, gemma3.cpp, paligemma.cpp)
        {"gemma3", "gemma", "image-text-to-text", create_gemma3, "gemma3"},
        {"idefics3", "idefics3", "image-text-to-text", create_idefics3},
        {"llava", "llava", "image-text-to-text", create_llava},
        {"llava_next", "llava", "image-text-to-text", create_llava_next},
        {"mistral3", "mistral3", "image-text-to-text", create_mistral3, "mistral3"},
        {"paddleocr_vl", "paddleocr_vl", "image-text-to-text", create_paddleocr_vl},
        {"paligemma", "gemma", "image-text-to-text", create_paligemma},
        {"phi4_multimodal", "phi4_multimodal", "image-text-to-text", create_phi4_multimodal, "phi4mm"},
        {"qwen2_5_vl", "qwen2_vl", "image-text-to-text", create_qwen2_5_vl, "qwen2_5_vl"},
        {"qwen2_vl", "qwen2_vl", "image-text-to-text", create_qwen2_vl, "qwen2_5_vl"},
        {"qwen3_vl", "qwen2_vl", "image-text-to-text", create_qwen3_vl, "qwen3_vl"},
        {"qwen3_vl_moe", "qwen2_vl", "image-text-to-text", create_qwen3_vl_moe, "qwen3_vl"},
        {"smolvlm", "idefics3", "image-text-to-text", create_smolvlm},
        {"vipllava", "llava", "image-text-to-text", create_vipllava},
        // encoder-decoders (archs/t5.cpp, bart.cpp, pegasus_x.cpp, nllb_moe.cpp, prophetnet.cpp)
        {"bart", "bart", "text2text-generation", create_bart},
        {"mbart", "bart", "text2text-generation", create_mbart},
        {"plbart", "bart", "text2text-generation", create_plbart},
        {"marian", "bart", "text2text-generation", create_marian},
        {"pegasus", "bart", "text2text-generation", create_pegasus},
        {"blenderbot", "bart", "text2text-generation", create_blenderbot},
        {"blenderbot-small", "bart", "text2text-generation", create_blenderbot_small},
        {"m2m_100", "bart", "text2text-generation", create_m2m_100},
        {"bigbird_pegasus", "bart", "text2text-generation", create_bigbird_pegasus},
        {"led", "bart", "text2text-generation", create_led},
        {"fsmt", "bart", "text2text-generation", create_fsmt},
        {"t5", "t5", "text2text-generation", create_t5},
        {"mt5", "t5", "text2text-generation", create_mt5},
        {"umt5", "t5", "text2text-generation", create_umt5},
        {"switch_transformers", "t5", "text2text-generation", create_switch_transformers},
        {"longt5", "t5", "text2text-generation", create_longt5},
        {"pegasus_x", "pegasus_x", "text2text-generation", create_pegasus_x},
        {"nllb-moe", "nllb_moe", "text2text-generation", create_nllb_moe},
        {"prophetnet", "prophetnet", "text2text-generation", create_prophetnet},
        // vision encoders (archs/vit.cpp, dinov2.cpp, dinov3_vit.cpp, beit.cpp, clip.cpp, siglip.cpp;
        // docs/vision.md): the
        // task is image-classification for a *ForImageClassification checkpoint
        {"beit", "beit", "image-feature-extraction", create_beit},
        {"clip", "clip", "zero-shot-image-classification", create_clip},
        {"clip_text_model", "clip", "feature-extraction", create_clip_text_model},
        {"clip_vision_model", "clip", "image-feature-extraction", create_clip_vision_model},
        // CLIP's text tower in other families (archs/clip.cpp, aimv2.cpp)
        {"owlvit_text_model", "clip", "feature-extraction", create_owlvit_text_model},
        {"owlv2_text_model", "clip", "feature-extraction", create_owlv2_text_model},
        {"groupvit_text_model", "clip", "feature-extraction", create_groupvit_text_model},
        {"xclip_text_model", "clip", "feature-extraction", create_xclip_text_model},
        {"clipseg_text_model", "clip", "feature-extraction", create_clipseg_text_model},
        {"metaclip_2_text_model", "clip", "feature-extraction", create_metaclip_2_text_model},
        {"aimv2_text_model", "clip", "feature-extraction", create_aimv2_text_model},
        {"data2vec-vision", "beit", "image-feature-extraction", create_data2vec_vision},
        {"deit", "vit", "image-feature-extraction", create_deit},
        {"dinov2", "dinov2", "image-feature-extraction", create_dinov2},
        {"dinov2_with_registers", "dinov2", "image-feature-extraction", create_dinov2_with_registers},
        {"dinov3_vit", "dinov3_vit", "image-feature-extraction", create_dinov3_vit},
        {"ijepa", "vit", "image-feature-extraction", create_ijepa},
        {"pixtral", "pixtral", "image-feature-extraction", create_pixtral},
        {"siglip", "siglip", "zero-shot-image-classification", create_siglip},
        {"siglip_text_model", "siglip", "feature-extraction", create_siglip_text_model},
        {"siglip_vision_model", "siglip", "image-feature-extraction", create_siglip_vision_model},
        {"siglip2", "siglip2", "zero-shot-image-classification", create_siglip2},
        {"siglip2_text_model", "siglip", "feature-extraction", create_siglip2_text_model},
        {"siglip2_vision_model", "siglip2", "image-feature-extraction", create_siglip2_vision_model},
        {"vit", "vit", "image-feature-extraction", create_vit},
        {"vit_msn", "vit", "image-feature-extraction", create_vit_msn},
        // speech-to-text (archs/whisper.cpp, moonshine.cpp)
        {"whisper", "whisper", "speech-to-text", create_whisper, "whisper"},
        {"moonshine", "moonshine", "speech-to-text", create_moonshine},
        // speech encoders (audio-feature-extraction, docs/audio.md)
        {"wav2vec2", "wav2vec2", "audio-feature-extraction", create_wav2vec2},
        {"hubert", "wav2vec2", "audio-feature-extraction", create_hubert},
        {"data2vec-audio", "wav2vec2", "audio-feature-extraction", create_data2vec_audio},
        {"unispeech", "wav2vec2", "audio-feature-extraction", create_unispeech},
        {"unispeech-sat", "wav2vec2", "audio-feature-extraction", create_unispeech_sat},
        {"wavlm", "wavlm", "audio-feature-extraction", create_wavlm},
        {"sew", "sew", "audio-feature-extraction", create_sew},
        {"sew-d", "sew", "audio-feature-extraction", create_sew_d},
        {"wav2vec2-conformer", "wav2vec2", "audio-feature-extraction", create_wav2vec2_conformer},
        {"wav2vec2-bert", "wav2vec2_bert", "audio-feature-extraction", create_wav2vec2_bert},
    };
    std::sort(t.begin(), t.end(), [](const RegistryEntry& a, const RegistryEntry& b) {
      return std::string(a.model_type) < b.model_type;
    });
    return t;
  }();
  return table;
}

std::string genai_model_type(const RegistryEntry& e) {
  if (e.genai_type) return e.genai_type;
  return std::string(e.task) == "text-generation" ? "decoder" : "";
}

const HfModelType* find_hf_model_type(const std::string& model_type) {
  static const HfModelType rows[] = {
#include "registry/hf_model_types.inc"
  };
  auto it = std::lower_bound(std::begin(rows), std::end(rows), model_type,
                             [](const HfModelType& r, const std::string& t) { return r.model_type < t; });
  return it != std::end(rows) && model_type == it->model_type ? &*it : nullptr;
}

namespace {

bool registered(const std::string& model_type) {
  return std::any_of(registry().begin(), registry().end(),
                     [&](const RegistryEntry& e) { return model_type == e.model_type; });
}

// The registered names a misspelling away from `model_type` (a third of its letters, at least 2),
// or only where to look.
std::string nearest_registered(const std::string& model_type) {
  std::vector<std::string> names;
  for (const auto& e : registry()) names.push_back(e.model_type);
  const auto near = nearest_names(model_type, names, 3, std::max<size_t>(2, model_type.size() / 3));
  std::string msg = near.empty() ? " (" : " (did you mean";
  for (const auto& n : near) msg += " " + n;
  return msg + (near.empty() ? "" : "? ") + "see `mobius list models`)";
}

// What transformers says `hf` is: "text-generation model type 'mamba' (transformers'
// MambaForCausalLM)".
std::string described(const HfModelType& hf) {
  const std::string kind = hf.kind;
  const std::string cls = *hf.model_class ? std::string(" (transformers' ") + hf.model_class + ")" : "";
  if (kind == "model part" || kind == "other")
    return "model type '" + std::string(hf.model_type) + "'" + cls + ", a " + kind + " in transformers,";
  return kind + " model type '" + hf.model_type + "'" + cls;
}

}  // namespace

std::string explain_unregistered(const std::string& model_type, const std::string& text_model_type) {
  const HfModelType* hf = find_hf_model_type(model_type);
  if (!hf) return "unknown model type '" + escaped(model_type) + "'" + nearest_registered(model_type);
  const std::string kind = hf->kind;
  if (std::string(hf->mechanism) == "state-space")
    return described(*hf) + " is a state-space / hybrid recurrent model: not supported yet, planned (issue "
           "\"state-space\"); its recurrent layers are not attention, so --try-generic cannot build it either";
  std::string msg = described(*hf) + " is not supported" + (kind == "model part" || kind == "other" ? "" : " yet");
  const std::string text = text_model_type.empty() ? hf->text_part : text_model_type;
  if (!text.empty() && registered(text))
    return msg + "; its text part (config.json's text_config, model type '" + text + "') is supported: save it " +
           "alone with transformers (README.md, \"The text part of a multimodal checkpoint\") and build that";
  if (kind == "text-generation" || kind == "text encoder") return msg + nearest_registered(model_type);
  return msg + " (mobius builds the types `mobius list models` lists, by task: text generation, text "
               "encoders, encoder-decoders, speech-to-text, audio and vision encoders, vision-language)";
}

std::string generic_refusal(const std::string& model_type) {
  const HfModelType* hf = find_hf_model_type(model_type);
  if (!hf) return "";
  if (std::string(hf->mechanism) == "state-space")
    return described(*hf) + " is a state-space / hybrid recurrent model: the generic Llama decoder has no such layers";
  if (std::string(hf->kind) != "text-generation")
    return described(*hf) + " is not a text-generation model: the generic Llama decoder builds decoders only";
  return "";
}

const RegistryEntry& find_architecture(const std::string& model_type, const std::string& config_file,
                                       const std::string& text_model_type) {
  for (const auto& e : registry())
    if (model_type == e.model_type) return e;
  throw Error(config_file + ": field 'model_type': " + explain_unregistered(model_type, text_model_type));
}

}  // namespace mobius
