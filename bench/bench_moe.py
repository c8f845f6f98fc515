#!/usr/bin/env python3
"""MoE on the CPU: mobius' composed MoE graph against onnxruntime's com.microsoft MoE / QMoE ops.

mobius writes a sparse mixture of experts in standard ops (src/blocks/moe.h): every expert runs on
every token as batched MatMuls and the routing weights (0 for the experts a token did not pick)
sum their outputs. onnxruntime 1.31 has a CPU kernel for com.microsoft MoE (float32) and QMoE
(float32 activations, 4/8-bit block-quantized experts) that runs only the picked experts. This
measures both on one random Mixtral checkpoint of a small-but-not-tiny shape (SHAPE below):

  composed-f32     mobius build --ep cpu by a binary from before the mixture_of_experts pass
                   (--composed-bin; commit 212c7de or earlier): the dense MoE in standard ops
  moe-f32          that package with each layer's MoE subgraph replaced by one MoE node
                   (router logits in, softmax top-k inside, normalize_routing_weights=1,
                   activation swiglu with swiglu_fusion=1: w1 / w3 rows interleaved in fc1, w2 as
                   fc2: the CPU kernel has no fc3 and no other fusion)
  composed-int4    the same binary with --precision int4 (attention and LM head in MatMulNBits;
                   mobius leaves the stacked experts in float)
  mobius-cpu-f32   build/mobius build --ep cpu as it is now: its mixture_of_experts pass
                   (src/passes/mixture_of_experts.cpp) writes the MoE node itself
  qmoe-int4        that package with QMoE nodes: experts 4-bit, symmetric, block 32 along the
                   input features (q - 8) * scale, accuracy_level as the package's MatMulNBits
  mobius-cpu-int4  build/mobius build --ep cpu --precision int4 as it is now: its
                   mixture_of_experts pass writes QMoE, the experts quantized as MatMulNBits'

Numerics first: the float packages' logits against transformers' MixtralForCausalLM (float64) on
a 16-token prompt; QMoE (accuracy_level 0) against the MoE node on the experts it dequantizes to,
so that the op, not the quantization, is what is compared. Then timing, batch 1, onnxruntime CPU
EP with every core as intra-op threads: a decode step after a 128-token cache and a 128-token
prefill, medians over --rounds rounds, the variants alternating within each round (A/B on a
shared machine: a round's runs see about the same load); load averages are recorded per round.
Writes bench/work/moe/results.json and the table between the BEGIN/END moe markers of
docs/benchmarks.md. Never part of the test run.

    .venv/bin/python bench/bench_moe.py --rounds 5 --composed-bin /path/to/mobius-212c7de
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
from onnx import helper, numpy_helper

sys.path.insert(0, str(Path(__file__).resolve().parent))
import report  # noqa: E402

REPO = report.REPO
WORK = REPO / "bench" / "work" / "moe"
MOBIUS_BIN = Path(os.environ.get("MOBIUS_BIN", REPO / "build" / "mobius"))
SHAPE = dict(hidden_size=1024, intermediate_size=2048, num_local_experts=8, num_experts_per_tok=2,
             num_hidden_layers=4, num_attention_heads=16, num_key_value_heads=4, vocab_size=32000,
             max_position_embeddings=4096, rms_norm_eps=1e-5, tie_word_embeddings=False)
PROMPT = 128
BLOCK = 32
VARIANTS = ["composed-f32", "moe-f32", "mobius-cpu-f32", "composed-int4", "qmoe-int4", "mobius-cpu-int4"]


# ---------------------------------------------------------------------------------------------
# Checkpoint and packages
# ---------------------------------------------------------------------------------------------
def make_checkpoint() -> tuple[Path, object]:
    import torch
    from transformers import MixtralConfig, MixtralForCausalLM

    ckpt = WORK / "ckpt"
    torch.manual_seed(0)
    model = MixtralForCausalLM(MixtralConfig(**SHAPE)).eval()
    with torch.no_grad():  # weights of a trained model's scale: N(0, 0.02), norms near 1
        for name, p in model.named_parameters():
            p.copy_(1.0 + 0.1 * torch.randn_like(p) if "norm" in name else 0.02 * torch.randn_like(p))
    if not (ckpt / "config.json").exists():
        model.save_pretrained(ckpt)
    return ckpt, model


def build(binary: Path, ckpt: Path, out: Path, *extra: str) -> Path:
    if not list(out.rglob("*.onnx")):
        cmd = [str(binary), "build", "--config", str(ckpt), str(out), "--ep", "cpu", "--runtime", "none",
               "--force", *extra]
        subprocess.run(cmd, check=True, capture_output=True, text=True)
    return next(out.rglob("model.onnx"))


def expert_weights(ckpt: Path, layer: int) -> tuple[np.ndarray, np.ndarray]:
    """fc1 [E, 2I, H] (w1 / w3 rows interleaved: gate 2i, up 2i + 1), fc2 [E, H, I] (w2)."""
    from safetensors.numpy import load_file

    if not hasattr(expert_weights, "cache"):
        expert_weights.cache = {}
        for f in ckpt.glob("*.safetensors"):
            expert_weights.cache.update(load_file(f))
    t = expert_weights.cache
    E = SHAPE["num_local_experts"]
    key = f"model.layers.{layer}.block_sparse_moe.experts"
    w1 = np.stack([t[f"{key}.{e}.w1.weight"] for e in range(E)])
    w3 = np.stack([t[f"{key}.{e}.w3.weight"] for e in range(E)])
    w2 = np.stack([t[f"{key}.{e}.w2.weight"] for e in range(E)])
    fc1 = np.empty((E, 2 * w1.shape[1], w1.shape[2]), np.float32)
    fc1[:, 0::2], fc1[:, 1::2] = w1, w3
    return fc1, w2.astype(np.float32)


def quantize4(w: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Symmetric 4-bit blocks of BLOCK along the last axis: q in 0..15, w ~ (q - 8) * scale.
    Returns (packed uint8 [..., K / 2], low nibble first; scales [..., K / BLOCK]; the dequantized w)."""
    *lead, K = w.shape
    b = w.reshape(*lead, K // BLOCK, BLOCK)
    scale = np.abs(b).max(-1, keepdims=True) / 7.0
    scale[scale == 0] = 1.0
    q = (np.clip(np.rint(b / scale), -8, 7) + 8).astype(np.uint8).reshape(*lead, K)
    packed = (q[..., 0::2] | (q[..., 1::2] << 4)).astype(np.uint8)
    deq = ((q.reshape(b.shape).astype(np.float32) - 8) * scale).reshape(w.shape)
    return packed, scale[..., 0].astype(np.float32), deq


def with_moe_op(src: Path, dst_dir: Path, ckpt: Path, op: str, accuracy_level: int = 0,
                dequantized: bool = False) -> Path:
    """`src` with each layer's model.layers.N.block_sparse_moe subgraph (Reshape to tokens, router
    MatMul kept) replaced by one com.microsoft `op` (MoE or QMoE) node. dequantized: MoE on the
    experts QMoE would dequantize to."""
    dst = dst_dir / "model.onnx"
    if dst.exists():
        return dst
    dst_dir.mkdir(parents=True, exist_ok=True)
    m = onnx.load(src, load_external_data=False)
    for f in {e.value for t in m.graph.initializer for e in t.external_data if e.key == "location"}:
        if not (dst_dir / f).exists():
            os.link(src.parent / f, dst_dir / f)  # a hard link: onnxruntime refuses data outside the model directory
    g = m.graph
    data_file = dst_dir / "moe.onnx_data"
    data = open(data_file, "wb")

    def add_init(name: str, a: np.ndarray) -> None:
        t = numpy_helper.from_array(np.ascontiguousarray(a), name)
        off = data.tell()
        data.write(t.raw_data)
        t.ClearField("raw_data")
        t.data_location = onnx.TensorProto.EXTERNAL
        for k, v in (("location", data_file.name), ("offset", str(off)), ("length", str(a.nbytes))):
            t.external_data.add(key=k, value=v)
        g.initializer.append(t)

    nodes = list(g.node)
    keep = []
    for layer in range(SHAPE["num_hidden_layers"]):
        prefix = f"model.layers.{layer}.block_sparse_moe"
        block = [n for n in nodes if n.name.startswith(prefix + "/") or n.name.startswith(prefix + ".")]
        by = {n.name: n for n in block}
        x2d = by[f"{prefix}/Reshape_0"].output[0]
        router = next(n for n in block if n.name.startswith(f"{prefix}.gate/MatMul"))  # MatMulNBits in int4
        logits = router.output[0]
        out = by[f"{prefix}/Reshape_1"]
        keep_names = {f"{prefix}/Reshape_0", router.name, f"{prefix}/Shape_0", f"{prefix}/Reshape_1"}
        for n in block:
            if n.name not in keep_names:
                n.name = "DROP"
        fc1, fc2 = expert_weights(ckpt, layer)
        attrs = dict(k=SHAPE["num_experts_per_tok"], normalize_routing_weights=1, activation_type="swiglu",
                     swiglu_fusion=1, activation_alpha=1.0, activation_beta=0.0)
        y = f"{prefix}/{op}_out"
        if op == "MoE":
            if dequantized:
                fc1, fc2 = quantize4(fc1)[2], quantize4(fc2)[2]
            add_init(f"{prefix}.fc1", fc1)
            add_init(f"{prefix}.fc2", fc2)
            keep.append(helper.make_node("MoE", [x2d, logits, f"{prefix}.fc1", "", f"{prefix}.fc2"], [y],
                                         name=f"{prefix}/MoE", domain="com.microsoft", **attrs))
        else:
            q1, s1, _ = quantize4(fc1)
            q2, s2, _ = quantize4(fc2)
            for name, a in (("fc1", q1), ("fc1_scales", s1), ("fc2", q2), ("fc2_scales", s2)):
                add_init(f"{prefix}.{name}", a)
            keep.append(helper.make_node(
                "QMoE", [x2d, logits, f"{prefix}.fc1", f"{prefix}.fc1_scales", "", f"{prefix}.fc2",
                         f"{prefix}.fc2_scales"], [y], name=f"{prefix}/QMoE", domain="com.microsoft",
                expert_weight_bits=4, block_size=BLOCK, accuracy_level=accuracy_level, **attrs))
        out.input[0] = y
    data.close()
    order = [n for n in nodes if n.name != "DROP"]
    # the MoE node after the router MatMul of its layer
    for new in keep:
        at = next(i for i, n in enumerate(order) if n.output and n.output[0] == new.input[1])
        order.insert(at + 1, new)
    del g.node[:]
    g.node.extend(order)
    used = {i for n in g.node for i in n.input}
    kept_inits = [t for t in g.initializer if t.name in used]
    del g.initializer[:]
    g.initializer.extend(kept_inits)
    if not any(o.domain == "com.microsoft" for o in m.opset_import):
        m.opset_import.append(helper.make_opsetid("com.microsoft", 1))
    onnx.save(m, dst)
    return dst


# ---------------------------------------------------------------------------------------------
# Running
# ---------------------------------------------------------------------------------------------
def session(path: Path) -> ort.InferenceSession:
    so = ort.SessionOptions()
    so.intra_op_num_threads = os.cpu_count() or 1
    return ort.InferenceSession(str(path), so, providers=["CPUExecutionProvider"])


def feeds(s: ort.InferenceSession, ids: np.ndarray, past_len: int, rng) -> dict:
    kv, hd = SHAPE["num_key_value_heads"], SHAPE["hidden_size"] // SHAPE["num_attention_heads"]
    f = {}
    for i in s.get_inputs():
        if i.name == "input_ids":
            f[i.name] = ids
        elif i.name == "attention_mask":
            f[i.name] = np.ones((1, past_len + ids.shape[1]), np.int64)
        elif i.name == "position_ids":
            f[i.name] = np.arange(past_len, past_len + ids.shape[1], dtype=np.int64)[None]
        elif i.name.startswith("past_key_values"):
            f[i.name] = (rng.standard_normal((1, kv, past_len, hd)) * 0.5).astype(np.float32)
        else:
            raise SystemExit(f"bench_moe: unexpected input {i.name}")
    return f


def logits(path: Path, ids: np.ndarray) -> np.ndarray:
    s = session(path)
    return s.run(["logits"], feeds(s, ids, 0, np.random.default_rng(0)))[0]


def timed_ms(s: ort.InferenceSession, f: dict, runs: int) -> float:
    s.run(["logits"], f)  # warm-up
    out = []
    for _ in range(runs):
        t0 = time.perf_counter()
        s.run(["logits"], f)
        out.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(out)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--decode-runs", type=int, default=10)
    ap.add_argument("--prefill-runs", type=int, default=3)
    ap.add_argument("--composed-bin", type=Path, help="a mobius binary without the mixture_of_experts pass")
    ap.add_argument("--render", action="store_true", help="only rewrite the table from results.json")
    a = ap.parse_args()
    results_file = WORK / "results.json"
    if a.render:
        render(json.loads(results_file.read_text()))
        return
    WORK.mkdir(parents=True, exist_ok=True)
    load_start = report.load_average()
    import torch

    ckpt, model = make_checkpoint()
    if not a.composed_bin:
        raise SystemExit("bench_moe: --composed-bin: a mobius binary from before the mixture_of_experts pass")
    f32 = build(a.composed_bin, ckpt, WORK / "composed-f32")
    int4 = build(a.composed_bin, ckpt, WORK / "composed-int4", "--precision", "int4")
    level = next((at.i for n in onnx.load(int4, load_external_data=False).graph.node if n.op_type == "MatMulNBits"
                  for at in n.attribute if at.name == "accuracy_level"), 0)
    paths = {
        "composed-f32": f32,
        "moe-f32": with_moe_op(f32, WORK / "moe-f32", ckpt, "MoE"),
        "mobius-cpu-f32": build(MOBIUS_BIN, ckpt, WORK / "mobius-cpu-f32"),
        "composed-int4": int4,
        "qmoe-int4": with_moe_op(int4, WORK / "qmoe-int4", ckpt, "QMoE", accuracy_level=level),
        "mobius-cpu-int4": build(MOBIUS_BIN, ckpt, WORK / "mobius-cpu-int4", "--precision", "int4"),
    }

    # numerics
    ids = np.random.default_rng(1).integers(0, SHAPE["vocab_size"], (1, 16)).astype(np.int64)
    sys.path.insert(0, str(REPO / "tests" / "parity"))
    import harness  # noqa: PLC0415  (the parity rows' float64 reference: eager experts, float64 softmax)

    with torch.no_grad():
        ref = harness.float64(model, inplace=True)(torch.from_numpy(ids)).logits.numpy()
    check = {v: float(np.abs(logits(paths[v], ids) - ref).max()) for v in ("composed-f32", "moe-f32", "mobius-cpu-f32")}
    check["mobius-cpu-moe-nodes"] = sum(n.op_type == "MoE" for n in onnx.load(paths["mobius-cpu-f32"],
                                                                               load_external_data=False).graph.node)
    check["mobius-cpu-qmoe-nodes"] = sum(n.op_type == "QMoE" for n in onnx.load(paths["mobius-cpu-int4"],
                                                                                load_external_data=False).graph.node)
    # int4 packages: their quantization error against the float64 reference, for scale
    for v in ("composed-int4", "qmoe-int4", "mobius-cpu-int4"):
        check[v] = float(np.abs(logits(paths[v], ids) - ref).max())
    check["package-bytes"] = {v: sum(f.stat().st_size for f in paths[v].parent.iterdir() if f.is_file())
                              for v in ("composed-int4", "mobius-cpu-int4")}
    q0 = with_moe_op(f32, WORK / "qmoe-f32-acc0", ckpt, "QMoE", accuracy_level=0)
    deq = with_moe_op(f32, WORK / "moe-f32-dequantized", ckpt, "MoE", dequantized=True)
    check["qmoe-acc0-vs-moe-dequantized"] = float(np.abs(logits(q0, ids) - logits(deq, ids)).max())
    check["logit-scale"] = float(np.abs(ref).max())
    print("numerics (max |delta|):", json.dumps(check), flush=True)

    # timing, variants alternating within each round
    rng = np.random.default_rng(2)
    decode_ids = np.array([[7]], np.int64)
    prefill_ids = rng.integers(0, SHAPE["vocab_size"], (1, PROMPT)).astype(np.int64)
    times = {v: {"decode": [], "prefill": []} for v in VARIANTS}
    loads = []
    for r in range(a.rounds):
        loads.append(os.getloadavg()[0])
        for v in (VARIANTS if r % 2 == 0 else VARIANTS[::-1]):
            s = session(paths[v])
            times[v]["decode"].append(timed_ms(s, feeds(s, decode_ids, PROMPT, rng), a.decode_runs))
            times[v]["prefill"].append(timed_ms(s, feeds(s, prefill_ids, 0, rng), a.prefill_runs))
            del s
        print(f"round {r + 1}: load {loads[-1]:.2f} " +
              ", ".join(f"{v} {times[v]['decode'][-1]:.1f}/{times[v]['prefill'][-1]:.0f} ms" for v in VARIANTS),
              flush=True)
    res = {"shape": SHAPE, "numerics": check, "times": times, "loads": loads, "accuracy_level": level,
           "load_start": load_start, "load_end": report.load_average(), "machine": report.machine(),
           "cpu_count": os.cpu_count(), "onnxruntime": ort.__version__, "commit": report.git_commit()}
    results_file.write_text(json.dumps(res, indent=1))
    render(res)


def render(res: dict) -> None:
    t = res["times"]
    med = {v: {k: statistics.median(x) for k, x in t[v].items()} for v in VARIANTS}

    def ratio(a_: str, b_: str, k: str) -> float:  # median of the per-round ratios
        return statistics.median(x / y for x, y in zip(t[a_][k], t[b_][k]))

    n = res["numerics"]
    s = res["shape"]
    lines = [
        "## MoE on the CPU: mobius' composed graph vs onnxruntime's MoE / QMoE ops",
        "",
        f"`bench/bench_moe.py --rounds {len(res['loads'])}`: a random Mixtral checkpoint (hidden {s['hidden_size']}, "
        f"{s['num_local_experts']} experts of {s['intermediate_size']}, top-{s['num_experts_per_tok']}, "
        f"{s['num_hidden_layers']} layers, {s['num_attention_heads']} heads / {s['num_key_value_heads']} KV, "
        f"vocab {s['vocab_size']}), built with `--ep cpu` (and `--precision int4`) by mobius before its "
        "mixture_of_experts pass (composed: the dense MoE in standard ops), and by mobius now (mobius-cpu-f32 / "
        "-int4: the pass writes com.microsoft MoE / QMoE); moe-f32 / qmoe-int4 are the composed packages with each layer's MoE "
        "subgraph replaced by the bench (bench_moe.py with_moe_op) with one com.microsoft MoE "
        "(float32 experts) or QMoE (4-bit symmetric experts, block 32, accuracy level "
        f"{res['accuracy_level']} as the package's MatMulNBits) node. onnxruntime {res['onnxruntime']} CPU EP, "
        f"{res['cpu_count']} intra-op threads, batch 1: one decode step after a {PROMPT}-token cache, and a "
        f"{PROMPT}-token prefill; medians over the rounds, the variants alternating within each round; ratios "
        "are medians of the per-round ratios. Load average (1 min) per round: "
        + ", ".join(f"{x:.2f}" for x in res["loads"]) + f"; (1, 5, 15 min) at the start: {res['load_start']}, "
        f"at the end: {res['load_end']}. Machine: {res['machine']}. mobius commit {res['commit']}.",
        "",
        "| variant | decode step ms | prefill 128 ms | decode vs composed | prefill vs composed |",
        "|---|---:|---:|---:|---:|",
    ]
    for v, base in (("composed-f32", None), ("moe-f32", "composed-f32"), ("mobius-cpu-f32", "composed-f32"),
                    ("composed-int4", None), ("qmoe-int4", "composed-int4"), ("mobius-cpu-int4", "composed-int4")):
        rd = f"{ratio(base, v, 'decode'):.2f} × faster" if base else "–"
        rp = f"{ratio(base, v, 'prefill'):.2f} × faster" if base else "–"
        lines.append(f"| {v} | {med[v]['decode']:.1f} | {med[v]['prefill']:.0f} | {rd} | {rp} |")
    lines += [
        "",
        f"Numerics (16-token prompt, logits up to {n['logit-scale']:.2f}): against transformers' "
        f"MixtralForCausalLM in float64, composed max |Δ| {n['composed-f32']:.1e}, MoE op {n['moe-f32']:.1e}, "
        f"mobius `--ep cpu` ({n['mobius-cpu-moe-nodes']} MoE nodes) {n['mobius-cpu-f32']:.1e}; "
        f"QMoE (accuracy level 0) against the MoE op on the dequantized experts {n['qmoe-acc0-vs-moe-dequantized']:.1e}. "
        f"The int4 packages' quantization error against the same reference: composed {n['composed-int4']:.2f}, "
        f"qmoe-int4 {n['qmoe-int4']:.2f}, mobius `--ep cpu --precision int4` ({n['mobius-cpu-qmoe-nodes']} QMoE "
        f"nodes) {n['mobius-cpu-int4']:.2f}; its package is {n['package-bytes']['mobius-cpu-int4'] / 1e6:.0f} MB "
        f"against the composed int4 package's {n['package-bytes']['composed-int4'] / 1e6:.0f} MB (float experts).",
    ]
    lines += [
        "",
        "Per round (decode ms / prefill ms), in run order; a shared machine's load moves whole rounds, "
        "hence the per-round ratios (runs of every variant cluster at about 48 and 112 ms when other processes "
        "have spent the 2 shared cores' time: a run then waits for the next scheduling period): " + "; ".join(
            f"{v} " + ", ".join(f"{d:.1f}/{p:.0f}" for d, p in zip(t[v]["decode"], t[v]["prefill"])) for v in VARIANTS) + ".",
        "",
        "Outcome: onnxruntime's CPU MoE kernel runs the picked experts only and gives the same logits, so "
        "`--ep cpu` now writes it (src/passes/mixture_of_experts.cpp; the mobius-cpu-f32 row). QMoE with 4-bit "
        "experts is faster still, and `--ep cpu --precision int4` now writes it (the mobius-cpu-int4 row): the "
        "experts block-quantized while they stream, symmetric or asymmetric as `--quant-scheme`, the accuracy "
        "level of the MatMulNBits. onnxruntime 1.31's CPU QMoE renormalizes the top-k weights even with "
        "normalize_routing_weights=0, so a router without renormalization passes its softmax as router_weights.",
    ]
    report.update_section("moe", "\n".join(lines))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
