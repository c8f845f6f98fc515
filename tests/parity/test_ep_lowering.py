"""T3 on the execution-provider lowering: every decoder row of the parity table, built with
`mobius build --ep cpu` (GroupQueryAttention, SkipSimplifiedLayerNormalization, packed
projections, MoE: src/passes/passes.h), against transformers with the same checks and tolerance as
test_decoder_parity.py (padded batch prefill, decode step, 24 greedy tokens through onnxruntime and
onnxruntime-genai). The Llama-like rows must actually be lowered; what every row lowered goes to
build/parity-results/ (variant "<name>@ep-cpu") and the printed table.

Also: `--ep default` and `--ep onnx-standard` builds of every row contain no custom-domain op.
"""

from collections import Counter

import onnx
import pytest

import decoder_harness as D
import harness as H

ROWS = [pytest.param(i, mt, name, ov, id=f"{mt}-{name}") for i, (mt, name, ov) in enumerate(H.rows())]

# Llama-like types: every layer's attention becomes GroupQueryAttention, every residual add +
# RMSNorm a SkipSimplifiedLayerNormalization (all but layer 0's input norm, which reads the
# embeddings), and with a static RoPE table the rotary goes inside the op (dynamic NTK and longrope
# pick their frequencies from the positions at run time: their RotaryEmbedding nodes stay outside).
LLAMA_LIKE = ("llama", "mistral", "qwen2", "qwen3", "iquestcoder", "mixtral", "qwen2_moe", "qwen3_moe",
              "olmoe", "granitemoe", "granitemoeshared", "granite", "hyperclovax", "helium", "arcee", "apertus", "cwm",
              "seed_oss", "internlm3", "ministral", "ernie4_5", "gemma", "gemma2", "gemma3_text", "vaultgemma", "dots1",
              "solar_open", "ernie4_5_moe", "hy_v3")
# Llama-like too, but with layers whose rotary stays outside by design: phi3's, glm4_moe's and minimax_m2's partial
# rotary of 4 frequencies in the tiny head (onnxruntime wants a multiple of 8), smollm3's NoPE layers
LLAMA_LIKE_ROTARY_OUTSIDE = ("phi3", "smollm3", "glm4_moe", "minimax_m2")
DYNAMIC_ROPE = ("dynamic", "longrope")
# Sparse MoE with a softmax top-k router and SiLU-gated per-expert weights: every MoE layer becomes
# com.microsoft MoE (passes/mixture_of_experts.cpp); no router TopK is left.
MOE_LOWERED = ("mixtral", "qwen2_moe", "qwen3_moe", "olmoe")


def lowered_ops(path) -> tuple[Counter, list]:
    model = onnx.load(str(path), load_external_data=False)
    ops = Counter((n.domain, n.op_type) for n in model.graph.node)
    gqa = [n for n in model.graph.node if n.op_type == "GroupQueryAttention"]
    return ops, gqa


@pytest.mark.parametrize("index,model_type,name,overrides", ROWS)
def test_ep_cpu_parity(index, model_type, name, overrides, tmp_path_factory):
    work = tmp_path_factory.mktemp(f"{model_type}-{name}-ep-cpu")
    with H.recorded(index, model_type, f"{name}@ep-cpu") as row:
        failures = D.run_parity(model_type, overrides, work, row, build_args=("--ep", "cpu"))
        ops, gqa = lowered_ops(H.graph_path(work / "onnx", "model"))
        layers = H.load_reference(work / "hf", overrides=overrides).config.num_hidden_layers
        rotary = sum(1 for n in gqa for a in n.attribute if a.name == "do_rotary" and a.i == 1)
        ssln = ops[("com.microsoft", "SkipSimplifiedLayerNormalization")]
        row["lowered"] = f"GQA {len(gqa)}/{layers} (rotary inside {rotary}), SkipSimplifiedLayerNorm {ssln}"
        moe = ops[("com.microsoft", "MoE")]
        if moe:
            row["lowered"] += f", MoE {moe}"
        if model_type in MOE_LOWERED and (not moe or ops[("", "TopK")]):
            failures.append(f"lowering: MoE {moe}, router TopK left {ops[('', 'TopK')]}")
        if model_type in LLAMA_LIKE + LLAMA_LIKE_ROTARY_OUTSIDE:
            want = (layers, 2 * layers)
            if (len(gqa), ssln) != want:
                failures.append(f"lowering: {row['lowered']}, expected GQA {layers}/{layers}, "
                                f"SkipSimplifiedLayerNorm {2 * layers}")
            want_rotary = 0 if any(name.startswith(d) for d in DYNAMIC_ROPE) else layers
            if model_type in LLAMA_LIKE and rotary != want_rotary:
                failures.append(f"lowering: rotary inside {rotary} layers, expected {want_rotary}")
            if ops[("", "Attention")]:
                failures.append(f"lowering: {ops[('', 'Attention')]} Attention nodes left")
        row.update(failures=failures, status="fail" if failures else "pass")
    assert not failures, "\n".join(failures)


@pytest.mark.parametrize("ep", ["default", "onnx-standard"])
@pytest.mark.parametrize("model_type,name,overrides",
                         [pytest.param(mt, n, ov, id=f"{mt}-{n}")
                          for mt, n, ov in H.rows() + H.encoder_rows() if n == "default"])
def test_standard_eps_have_no_custom_ops(ep, model_type, name, overrides, tmp_path):
    """The graph only (--no-weights) of each type's default row: default-domain ops only."""
    H.make_config(model_type, overrides).save_pretrained(tmp_path / "hf")
    path = H.build(tmp_path / "hf", tmp_path / "onnx", "--no-weights", "--runtime", "none", "--ep", ep)
    model = onnx.load(str(path), load_external_data=False)
    custom = sorted({f"{n.domain}.{n.op_type}" for n in model.graph.node if n.domain not in ("", "ai.onnx")})
    assert not custom, f"--ep {ep}: custom-domain ops {custom}"
    assert {o.domain for o in model.opset_import} <= {"", "ai.onnx"}
