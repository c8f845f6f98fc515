// Factories of the registered architectures (one per model_type; see registry/registry.cpp).
// Each reads its fields from config.json (throwing mobius::Error naming the field) and returns the
// root module for the given float dtype.
#pragma once

#include <memory>

#include "config/hf_config.h"
#include "tasks/architecture.h"

namespace mobius {

using ArchFactory = std::unique_ptr<Architecture> (*)(const HfConfig&, DataType);

// archs/bert.cpp
std::unique_ptr<Architecture> create_albert(const HfConfig&, DataType);
std::unique_ptr<Architecture> create_bert(const HfConfig&, DataType);
std::unique_ptr<Architecture> create_distilbert(const HfConfig&, DataType);
std::unique_ptr<Architecture> create_electra(const HfConfig&, DataType);
std::unique_ptr<Architecture> create_ernie(const HfConfig&, DataType);
std::unique_ptr<Architecture> create_roberta(const HfConfig&, DataType);
std::unique_ptr<Architecture> create_xlm_roberta(const HfConfig&, DataType);
std::unique_ptr<Architecture> create_camembert(const HfConfig&, DataType);
std::unique_ptr<Architecture> create_roberta_prelayernorm(const HfConfig&, DataType);
std::unique_ptr<Architecture> create_xlm_roberta_xl(const HfConfig&, DataType);
std::unique_ptr<Architecture> create_megatron_bert(const HfConfig&, DataType);
std::unique_ptr<Architecture> create_roformer(const HfConfig&, DataType);
std::unique_ptr<Architecture> create_rembert(const HfConfig&, DataType);
std::unique_ptr<Architecture> create_data2vec_text(const HfConfig&, DataType);
std::unique_ptr<Architecture> create_mpnet(const HfConfig&, DataType);

// archs/xmod.cpp, ibert.cpp, roc_bert.cpp, layoutlm.cpp, tapas.cpp, splinter.cpp, markuplm.cpp, squeezebert.cpp,
// luke.cpp, convbert.cpp, longformer.cpp, big_bird.cpp
std::unique_ptr<Architecture> create_xmod(const HfConfig&, DataType);
std::unique_ptr<Architecture> create_ibert(const HfConfig&, DataType);
std::unique_ptr<Architecture> create_roc_bert(const HfConfig&, DataType);
std::unique_ptr<Architecture> create_layoutlm(const HfConfig&, DataType);
std::unique_ptr<Architecture> create_tapas(const HfConfig&, DataType);
std::unique_ptr<Architecture> create_splinter(const HfConfig&, DataType);
std::unique_ptr<Architecture> create_markuplm(const HfConfig&, DataType);
std::unique_ptr<Architecture> create_squeezebert(const HfConfig&, DataType);
std::unique_ptr<Architecture> create_luke(const HfConfig&, DataType);
std::unique_ptr<Architecture> create_convbert(const HfConfig&, DataType);
std::unique_ptr<Architecture> create_longformer(const HfConfig&, DataType);
std::unique_ptr<Architecture> create_big_bird(const HfConfig&, DataType);
// archs/lilt.cpp, layoutlmv3.cpp, xlnet.cpp
std::unique_ptr<Architecture> create_lilt(const HfConfig&, DataType);
std::unique_ptr<Architecture> create_layoutlmv3(const HfConfig&, DataType);
std::unique_ptr<Architecture> create_xlnet(const HfConfig&, DataType);
// archs/funnel.cpp, bros.cpp
std::unique_ptr<Architecture> create_funnel(const HfConfig&, DataType);
std::unique_ptr<Architecture> create_bros(const HfConfig&, DataType);
// archs/nystromformer.cpp, yoso.cpp
std::unique_ptr<Architecture> create_nystromformer(const HfConfig&, DataType);
std::unique_ptr<Architecture> create_yoso(const HfConfig&, DataType);
// archs/mobilebert.cpp, fnet.cpp
std::unique_ptr<Architecture> create_mobilebert(const HfConfig&, DataType);
std::unique_ptr<Architecture> create_fnet(const HfConfig&, DataType);

// archs/gemma.cpp
std::unique_ptr<Architecture> create_gemma(const HfConfig&, DataType);
std::unique_ptr<Architecture> create_gemma2(const HfConfig&, DataType);
std::unique_ptr<Architecture> create_vaultgemma(const HfConfig&, DataType);
std::unique_ptr<Architecture> create_gemma3_text(const HfConfig&, DataType);
std::unique_ptr<Architecture> create_gemma4_text(const HfConfig&, DataType);
std::unique_ptr<Architecture> create_gemma4_unified_text(const HfConfig&, DataType);
// archs/gemma3n.cpp
std::unique_ptr<Architecture> create_gemma3n_text(const HfConfig&, DataType);

// archs/llama.cpp
std::unique_ptr<Architecture> create_llama(const HfConfig&, DataType);
std::unique_ptr<Architecture> create_mistral(const HfConfig&, DataType);
std::unique_ptr<Architecture> create_qwen2(const HfConfig&, DataType);
std::unique_ptr<Architecture> create_qwen3(const HfConfig&, DataType);

// archs/phi.cpp, phi3.cpp, gpt_neox.cpp, stablelm.cpp, persimmon.cpp
std::unique_ptr<Architecture> create_phi(const HfConfig&, DataType);
std::unique_ptr<Architecture> create_phi3(const HfConfig&, DataType);
std::unique_ptr<Architecture> create_gpt_neox(const HfConfig&, DataType);
std::unique_ptr<Architecture> create_gpt_neox_japanese(const HfConfig&, DataType);
std::unique_ptr<Architecture> create_stablelm(const HfConfig&, DataType);
std::unique_ptr<Architecture> create_persimmon(const HfConfig&, DataType);
// archs/gptj.cpp
std::unique_ptr<Architecture> create_gptj(const HfConfig&, DataType);
std::unique_ptr<Architecture> create_codegen(const HfConfig&, DataType);
// archs/glm.cpp
std::unique_ptr<Architecture> create_glm(const HfConfig&, DataType);
std::unique_ptr<Architecture> create_glm4(const HfConfig&, DataType);
// archs/cohere.cpp
std::unique_ptr<Architecture> create_cohere(const HfConfig&, DataType);
std::unique_ptr<Architecture> create_cohere2(const HfConfig&, DataType);
std::unique_ptr<Architecture> create_cohere2_moe(const HfConfig&, DataType);
std::unique_ptr<Architecture> create_cohere_compass_text(const HfConfig&, DataType);
// archs/gpt2.cpp, gpt_bigcode.cpp, gpt_neo.cpp, opt.cpp, biogpt.cpp, xglm.cpp, ctrl.cpp,
// openai_gpt.cpp, bloom.cpp, mpt.cpp, falcon.cpp
std::unique_ptr<Architecture> create_gpt2(const HfConfig&, DataType);
std::unique_ptr<Architecture> create_gpt_bigcode(const HfConfig&, DataType);
std::unique_ptr<Architecture> create_gpt_neo(const HfConfig&, DataType);
std::unique_ptr<Architecture> create_opt(const HfConfig&, DataType);
std::unique_ptr<Architecture> create_biogpt(const HfConfig&, DataType);
std::unique_ptr<Architecture> create_xglm(const HfConfig&, DataType);
std::unique_ptr<Architecture> create_ctrl(const HfConfig&, DataType);
std::unique_ptr<Architecture> create_openai_gpt(const HfConfig&, DataType);
std::unique_ptr<Architecture> create_bloom(const HfConfig&, DataType);
std::unique_ptr<Architecture> create_mpt(const HfConfig&, DataType);
std::unique_ptr<Architecture> create_falcon(const HfConfig&, DataType);
// archs/cpmant.cpp
std::unique_ptr<Architecture> create_cpmant(const HfConfig&, DataType);

// archs/mixtral.cpp, deepseek.cpp, gpt_oss.cpp, jetmoe.cpp, dbrx.cpp: mixture-of-experts decoders
std::unique_ptr<Architecture> create_mixtral(const HfConfig&, DataType);
std::unique_ptr<Architecture> create_qwen2_moe(const HfConfig&, DataType);
std::unique_ptr<Architecture> create_qwen3_moe(const HfConfig&, DataType);
std::unique_ptr<Architecture> create_aria_text(const HfConfig&, DataType);
std::unique_ptr<Architecture> create_dbrx(const HfConfig&, DataType);
std::unique_ptr<Architecture> create_olmoe(const HfConfig&, DataType);
std::unique_ptr<Architecture> create_phimoe(const HfConfig&, DataType);
std::unique_ptr<Architecture> create_granitemoe(const HfConfig&, DataType);
// archs/diffllama.cpp
std::unique_ptr<Architecture> create_diffllama(const HfConfig&, DataType);
// archs/hy_v3.cpp
std::unique_ptr<Architecture> create_hy_v3(const HfConfig&, DataType);
std::unique_ptr<Architecture> create_granitemoeshared(const HfConfig&, DataType);
std::unique_ptr<Architecture> create_granitemoe_swa(const HfConfig&, DataType);
std::unique_ptr<Architecture> create_dots1(const HfConfig&, DataType);
std::unique_ptr<Architecture> create_glm4_moe(const HfConfig&, DataType);
std::unique_ptr<Architecture> create_solar_open(const HfConfig&, DataType);
std::unique_ptr<Architecture> create_minimax_m2(const HfConfig&, DataType);
// archs/minimax_m3_vl.cpp
std::unique_ptr<Architecture> create_minimax_m3_vl_text(const HfConfig&, DataType);
std::unique_ptr<Architecture> create_deepseek_v2(const HfConfig&, DataType);
std::unique_ptr<Architecture> create_deepseek_v3(const HfConfig&, DataType);
std::unique_ptr<Architecture> create_axk1(const HfConfig&, DataType);
std::unique_ptr<Architecture> create_axk2(const HfConfig&, DataType);
std::unique_ptr<Architecture> create_youtu(const HfConfig&, DataType);
std::unique_ptr<Architecture> create_minicpm3(const HfConfig&, DataType);
std::unique_ptr<Architecture> create_glm4_moe_lite(const HfConfig&, DataType);
std::unique_ptr<Architecture> create_deepseek_v32(const HfConfig&, DataType);
std::unique_ptr<Architecture> create_glm_moe_dsa(const HfConfig&, DataType);
// archs/longcat_flash.cpp: two MLA and two MLPs per layer, a shortcut MoE with identity experts
std::unique_ptr<Architecture> create_longcat_flash(const HfConfig&, DataType);
// archs/inkling.cpp: NoPE attention with a relative bias, four short convolutions per layer, a shared-sink MoE
std::unique_ptr<Architecture> create_inkling_text(const HfConfig&, DataType);
std::unique_ptr<Architecture> create_gpt_oss(const HfConfig&, DataType);
std::unique_ptr<Architecture> create_jetmoe(const HfConfig&, DataType);

// Llama-like types, one file each (archs/<type>.cpp; granite.cpp also has hyperclovax, olmo.cpp
// olmo2 and olmo3)
std::unique_ptr<Architecture> create_apertus(const HfConfig&, DataType);
std::unique_ptr<Architecture> create_arcee(const HfConfig&, DataType);
std::unique_ptr<Architecture> create_cwm(const HfConfig&, DataType);
std::unique_ptr<Architecture> create_ernie4_5(const HfConfig&, DataType);
std::unique_ptr<Architecture> create_ernie4_5_moe(const HfConfig&, DataType);
std::unique_ptr<Architecture> create_exaone4(const HfConfig&, DataType);
std::unique_ptr<Architecture> create_exaone_moe(const HfConfig&, DataType);
std::unique_ptr<Architecture> create_granite(const HfConfig&, DataType);
std::unique_ptr<Architecture> create_granite_swa(const HfConfig&, DataType);
std::unique_ptr<Architecture> create_helium(const HfConfig&, DataType);
std::unique_ptr<Architecture> create_hunyuan_v1_dense(const HfConfig&, DataType);
std::unique_ptr<Architecture> create_hunyuan_v1_moe(const HfConfig&, DataType);
std::unique_ptr<Architecture> create_hyperclovax(const HfConfig&, DataType);
std::unique_ptr<Architecture> create_internlm3(const HfConfig&, DataType);
std::unique_ptr<Architecture> create_iquestcoder(const HfConfig&, DataType);  // archs/llama.cpp
std::unique_ptr<Architecture> create_jais2(const HfConfig&, DataType);
std::unique_ptr<Architecture> create_ministral(const HfConfig&, DataType);
std::unique_ptr<Architecture> create_ministral3(const HfConfig&, DataType);
std::unique_ptr<Architecture> create_nanochat(const HfConfig&, DataType);
// archs/mamba.cpp, falcon_mamba.cpp, mamba2.cpp: selective state-space models (blocks/mamba.h,
// blocks/mamba2.h)
std::unique_ptr<Architecture> create_mamba(const HfConfig&, DataType);
std::unique_ptr<Architecture> create_falcon_mamba(const HfConfig&, DataType);
std::unique_ptr<Architecture> create_mamba2(const HfConfig&, DataType);
// archs/nemotron_h.cpp: the Mamba model whose layers hold Mamba-2, attention or MLP blocks
std::unique_ptr<Architecture> create_nemotron_h(const HfConfig&, DataType);
// archs/bamba.cpp, granitemoehybrid.cpp: hybrids of attention and state-space layers
// (blocks/decoder.h make_mixer)
std::unique_ptr<Architecture> create_bamba(const HfConfig&, DataType);
std::unique_ptr<Architecture> create_granitemoehybrid(const HfConfig&, DataType);
// archs/falcon_h1.cpp: attention and Mamba-2 side by side in every layer (blocks/parallel_mixers.h)
std::unique_ptr<Architecture> create_falcon_h1(const HfConfig&, DataType);
// archs/zamba.cpp: multi-head Mamba layers and a shared transformer block (archs/zamba.h)
std::unique_ptr<Architecture> create_zamba(const HfConfig&, DataType);
// archs/zamba2.cpp: Mamba-2 layers and shared transformer blocks with low-rank adapters (archs/zamba.h)
std::unique_ptr<Architecture> create_zamba2(const HfConfig&, DataType);
// archs/jamba.cpp: a hybrid of Mamba (blocks/mamba.h) and attention layers
std::unique_ptr<Architecture> create_jamba(const HfConfig&, DataType);
// archs/lfm2.cpp, lfm2_moe.cpp: hybrids of short-convolution and attention layers (blocks/short_conv.h)
std::unique_ptr<Architecture> create_lfm2(const HfConfig&, DataType);
std::unique_ptr<Architecture> create_lfm2_moe(const HfConfig&, DataType);
std::unique_ptr<Architecture> create_lfm3(const HfConfig&, DataType);
// archs/qwen3_next.cpp, qwen3_5.cpp: gated DeltaNet (blocks/gated_delta_net.h) and gated attention
// layers (archs/qwen3_next.h); Qwen3-Next's and Qwen3.5-MoE's with MoE
std::unique_ptr<Architecture> create_qwen3_next(const HfConfig&, DataType);
std::unique_ptr<Architecture> create_qwen3_5_text(const HfConfig&, DataType);
std::unique_ptr<Architecture> create_qwen3_5_moe_text(const HfConfig&, DataType);
// archs/qwen4_exp.cpp: Qwen4-Exp text: hyper-connection streams, gated DeltaNet and QSA attention
// layers (blocks/qsa.h), hashed n-gram per-layer embeddings, MoE
std::unique_ptr<Architecture> create_qwen4_exp_text(const HfConfig&, DataType);
// archs/recurrent_gemma.cpp: RG-LRU recurrent blocks (blocks/rg_lru.h) and local attention layers
std::unique_ptr<Architecture> create_recurrent_gemma(const HfConfig&, DataType);
// archs/rwkv.cpp: RWKV-4 (time mix with a wkv state, channel mix)
std::unique_ptr<Architecture> create_rwkv(const HfConfig&, DataType);
// archs/xlstm.cpp: xLSTM (mLSTM blocks, blocks/mlstm.h, with a gated feed-forward)
std::unique_ptr<Architecture> create_xlstm(const HfConfig&, DataType);
// archs/zaya.cpp: ZAYA1 (compressed convolutional attention, an MLP router handing its state on)
std::unique_ptr<Architecture> create_zaya(const HfConfig&, DataType);
std::unique_ptr<Architecture> create_nemotron(const HfConfig&, DataType);
std::unique_ptr<Architecture> create_olmo(const HfConfig&, DataType);
std::unique_ptr<Architecture> create_olmo2(const HfConfig&, DataType);
std::unique_ptr<Architecture> create_olmo3(const HfConfig&, DataType);
// archs/olmo_hybrid.cpp: OLMo 2 attention layers and gated DeltaNet layers (blocks/gated_delta_net.h)
std::unique_ptr<Architecture> create_olmo_hybrid(const HfConfig&, DataType);
// archs/kimi_linear.cpp: Kimi Delta Attention layers (blocks/gated_delta_net.h) and NoPE MLA layers
// (blocks/mla.h) with DeepSeek-V3's MoE
std::unique_ptr<Architecture> create_kimi_linear(const HfConfig&, DataType);
// archs/kimi_linear.cpp: Ling 3.0 (bailing_hybrid): Kimi Delta Attention layers with one-projection
// forget and output gates, gated MLA layers with interleaved RoPE, DeepSeek-V3's MoE
std::unique_ptr<Architecture> create_bailing_hybrid(const HfConfig&, DataType);
// archs/minimax.cpp: softmax attention and lightning attention layers (blocks/lightning_attention.h),
// weighted residuals, Mixtral's MoE
std::unique_ptr<Architecture> create_minimax(const HfConfig&, DataType);
std::unique_ptr<Architecture> create_flex_olmo(const HfConfig&, DataType);
std::unique_ptr<Architecture> create_seed_oss(const HfConfig&, DataType);
std::unique_ptr<Architecture> create_smollm3(const HfConfig&, DataType);
std::unique_ptr<Architecture> create_starcoder2(const HfConfig&, DataType);

// archs/t5.cpp, bart.cpp: encoder-decoders (text2text-generation)
std::unique_ptr<Architecture> create_bart(const HfConfig&, DataType);
std::unique_ptr<Architecture> create_mbart(const HfConfig&, DataType);
std::unique_ptr<Architecture> create_plbart(const HfConfig&, DataType);
std::unique_ptr<Architecture> create_marian(const HfConfig&, DataType);
std::unique_ptr<Architecture> create_pegasus(const HfConfig&, DataType);
std::unique_ptr<Architecture> create_blenderbot(const HfConfig&, DataType);
std::unique_ptr<Architecture> create_blenderbot_small(const HfConfig&, DataType);
std::unique_ptr<Architecture> create_m2m_100(const HfConfig&, DataType);
std::unique_ptr<Architecture> create_bigbird_pegasus(const HfConfig&, DataType);
std::unique_ptr<Architecture> create_led(const HfConfig&, DataType);
std::unique_ptr<Architecture> create_fsmt(const HfConfig&, DataType);
std::unique_ptr<Architecture> create_t5(const HfConfig&, DataType);
std::unique_ptr<Architecture> create_mt5(const HfConfig&, DataType);
std::unique_ptr<Architecture> create_umt5(const HfConfig&, DataType);
std::unique_ptr<Architecture> create_switch_transformers(const HfConfig&, DataType);
std::unique_ptr<Architecture> create_longt5(const HfConfig&, DataType);
std::unique_ptr<Architecture> create_pegasus_x(const HfConfig&, DataType);  // archs/pegasus_x.cpp
std::unique_ptr<Architecture> create_nllb_moe(const HfConfig&, DataType);   // archs/nllb_moe.cpp
std::unique_ptr<Architecture> create_prophetnet(const HfConfig&, DataType);  // archs/prophetnet.cpp
// vision-language models, task image-text-to-text (archs/qwen2_vl.cpp)
std::unique_ptr<Architecture> create_qwen2_vl(const HfConfig&, DataType);
std::unique_ptr<Architecture> create_qwen2_5_vl(const HfConfig&, DataType);
std::unique_ptr<Architecture> create_qwen3_vl(const HfConfig&, DataType);
std::unique_ptr<Architecture> create_qwen3_vl_moe(const HfConfig&, DataType);
std::unique_ptr<Architecture> create_llava(const HfConfig&, DataType);  // archs/llava.cpp
std::unique_ptr<Architecture> create_vipllava(const HfConfig&, DataType);  // archs/vipllava.cpp
std::unique_ptr<Architecture> create_llava_next(const HfConfig&, DataType);  // archs/llava_next.cpp
std::unique_ptr<Architecture> create_idefics3(const HfConfig&, DataType);  // archs/idefics3.cpp
std::unique_ptr<Architecture> create_smolvlm(const HfConfig&, DataType);
std::unique_ptr<Architecture> create_paddleocr_vl(const HfConfig&, DataType);  // archs/paddleocr_vl.cpp
std::unique_ptr<Architecture> create_mistral3(const HfConfig&, DataType);  // archs/mistral3.cpp
std::unique_ptr<Architecture> create_pixtral(const HfConfig&, DataType);  // archs/pixtral.cpp
std::unique_ptr<Architecture> create_gemma3(const HfConfig&, DataType);  // archs/gemma3.cpp
std::unique_ptr<Architecture> create_paligemma(const HfConfig&, DataType);  // archs/paligemma.cpp
std::unique_ptr<Architecture> create_phi4_multimodal(const HfConfig&, DataType);  // archs/phi4_multimodal.cpp

// archs/vit.cpp, dinov2.cpp, dinov3_vit.cpp, beit.cpp, clip.cpp, siglip.cpp: vision encoders (image-feature-extraction,
// image-classification), CLIP / SigLIP text towers (feature-extraction) and dual models
// (zero-shot-image-classification); the reusable towers: archs/vision_towers.h
std::unique_ptr<Architecture> create_vit(const HfConfig&, DataType);
std::unique_ptr<Architecture> create_deit(const HfConfig&, DataType);
std::unique_ptr<Architecture> create_vit_msn(const HfConfig&, DataType);
std::unique_ptr<Architecture> create_ijepa(const HfConfig&, DataType);
std::unique_ptr<Architecture> create_dinov2(const HfConfig&, DataType);
std::unique_ptr<Architecture> create_dinov2_with_registers(const HfConfig&, DataType);
std::unique_ptr<Architecture> create_dinov3_vit(const HfConfig&, DataType);
std::unique_ptr<Architecture> create_beit(const HfConfig&, DataType);
std::unique_ptr<Architecture> create_data2vec_vision(const HfConfig&, DataType);
std::unique_ptr<Architecture> create_clip(const HfConfig&, DataType);
std::unique_ptr<Architecture> create_clip_text_model(const HfConfig&, DataType);
std::unique_ptr<Architecture> create_clip_vision_model(const HfConfig&, DataType);
// CLIP's text tower in other families (archs/clip.cpp; AIMv2's: archs/aimv2.cpp)
std::unique_ptr<Architecture> create_owlvit_text_model(const HfConfig&, DataType);
std::unique_ptr<Architecture> create_owlv2_text_model(const HfConfig&, DataType);
std::unique_ptr<Architecture> create_groupvit_text_model(const HfConfig&, DataType);
std::unique_ptr<Architecture> create_xclip_text_model(const HfConfig&, DataType);
std::unique_ptr<Architecture> create_clipseg_text_model(const HfConfig&, DataType);
std::unique_ptr<Architecture> create_metaclip_2_text_model(const HfConfig&, DataType);
std::unique_ptr<Architecture> create_aimv2_text_model(const HfConfig&, DataType);
std::unique_ptr<Architecture> create_siglip(const HfConfig&, DataType);
std::unique_ptr<Architecture> create_siglip_text_model(const HfConfig&, DataType);
std::unique_ptr<Architecture> create_siglip_vision_model(const HfConfig&, DataType);
std::unique_ptr<Architecture> create_siglip2(const HfConfig&, DataType);  // archs/siglip2.cpp
std::unique_ptr<Architecture> create_siglip2_text_model(const HfConfig&, DataType);  // archs/siglip.cpp
std::unique_ptr<Architecture> create_siglip2_vision_model(const HfConfig&, DataType);  // archs/siglip2.cpp

// archs/whisper.cpp: speech-to-text
std::unique_ptr<Architecture> create_whisper(const HfConfig&, DataType);

// archs/wav2vec2.cpp: speech encoders (audio-feature-extraction)
std::unique_ptr<Architecture> create_wav2vec2(const HfConfig&, DataType);
std::unique_ptr<Architecture> create_hubert(const HfConfig&, DataType);
std::unique_ptr<Architecture> create_data2vec_audio(const HfConfig&, DataType);
std::unique_ptr<Architecture> create_unispeech(const HfConfig&, DataType);
std::unique_ptr<Architecture> create_unispeech_sat(const HfConfig&, DataType);
// archs/wavlm.cpp, sew.cpp, wav2vec2_conformer.cpp
std::unique_ptr<Architecture> create_wavlm(const HfConfig&, DataType);
std::unique_ptr<Architecture> create_sew(const HfConfig&, DataType);
std::unique_ptr<Architecture> create_wav2vec2_conformer(const HfConfig&, DataType);
// archs/esm.cpp
std::unique_ptr<Architecture> create_esm(const HfConfig&, DataType);

// archs/modernbert.cpp
std::unique_ptr<Architecture> create_modernbert(const HfConfig&, DataType);
// archs/afmoe.cpp
std::unique_ptr<Architecture> create_afmoe(const HfConfig&, DataType);
// archs/llama4.cpp
std::unique_ptr<Architecture> create_llama4_text(const HfConfig&, DataType);
// archs/doge.cpp
std::unique_ptr<Architecture> create_doge(const HfConfig&, DataType);
// archs/laguna.cpp, mellum.cpp
std::unique_ptr<Architecture> create_laguna(const HfConfig&, DataType);
std::unique_ptr<Architecture> create_mellum(const HfConfig&, DataType);
// archs/flint.cpp
std::unique_ptr<Architecture> create_flint(const HfConfig&, DataType);
// archs/beam.cpp
std::unique_ptr<Architecture> create_beam(const HfConfig&, DataType);
// archs/mimo_v2_flash.cpp
std::unique_ptr<Architecture> create_mimo_v2_flash(const HfConfig&, DataType);
// archs/kolibri1.cpp
std::unique_ptr<Architecture> create_kolibri1(const HfConfig&, DataType);
// archs/bitnet.cpp
std::unique_ptr<Architecture> create_bitnet(const HfConfig&, DataType);
// archs/bert_generation.cpp
std::unique_ptr<Architecture> create_bert_generation(const HfConfig&, DataType);
// archs/modernbert_decoder.cpp
std::unique_ptr<Architecture> create_modernbert_decoder(const HfConfig&, DataType);

// archs/eurobert.cpp, ultrabert.cpp, esmc.cpp (archs/bidirectional_decoder.h)
std::unique_ptr<Architecture> create_eurobert(const HfConfig&, DataType);
std::unique_ptr<Architecture> create_ultrabert(const HfConfig&, DataType);
std::unique_ptr<Architecture> create_esmc(const HfConfig&, DataType);
// archs/canine.cpp
std::unique_ptr<Architecture> create_canine(const HfConfig&, DataType);
// archs/contrastive_text_towers.cpp
std::unique_ptr<Architecture> create_chinese_clip_text_model(const HfConfig&, DataType);
std::unique_ptr<Architecture> create_align_text_model(const HfConfig&, DataType);
std::unique_ptr<Architecture> create_clap_text_model(const HfConfig&, DataType);
std::unique_ptr<Architecture> create_altclip_text_model(const HfConfig&, DataType);
// archs/openai_privacy_filter.cpp (archs/bidirectional_decoder.h over GPT-OSS' layers)
std::unique_ptr<Architecture> create_openai_privacy_filter(const HfConfig&, DataType);

// archs/xlm.cpp
std::unique_ptr<Architecture> create_xlm(const HfConfig&, DataType);
std::unique_ptr<Architecture> create_flaubert(const HfConfig&, DataType);

// archs/jina_embeddings_v3.cpp
std::unique_ptr<Architecture> create_jina_embeddings_v3(const HfConfig&, DataType);
std::unique_ptr<Architecture> create_nomic_bert(const HfConfig&, DataType);
std::unique_ptr<Architecture> create_gte(const HfConfig&, DataType);

// archs/deberta.cpp
std::unique_ptr<Architecture> create_deberta(const HfConfig&, DataType);
std::unique_ptr<Architecture> create_deberta_v2(const HfConfig&, DataType);

// archs/sew_d.cpp
std::unique_ptr<Architecture> create_sew_d(const HfConfig&, DataType);
// archs/moonshine.cpp (speech-to-text)
std::unique_ptr<Architecture> create_moonshine(const HfConfig&, DataType);
// archs/wav2vec2_bert.cpp
std::unique_ptr<Architecture> create_wav2vec2_bert(const HfConfig&, DataType);

}  // namespace mobius
