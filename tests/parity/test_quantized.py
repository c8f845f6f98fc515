"""`mobius build --precision int4|int8` (passes/matmul_nbits.cpp, weights/quantize.h).

(a) The quantized initializers equal onnxruntime's own quantizer's: for each MatMulNBits of a
    tiny model built with every bits × block size × scheme (and float16 scales), B / scales /
    zero_points are read from the package, dequantized per block in numpy and compared with the
    dequantization of what onnxruntime.quantization's MatMulNBits quantizer (the pybind
    quantize_matmul_4bits / quantize_matmul_8bits that DefaultWeightOnlyQuantizer calls) makes of
    the same float weight: exactly equal (the scales and the packed codes too).
(b) Every decoder type's default parity row built with `--precision int4 --ep cpu` and the flags of
    the defaults these rows were written for (pinned(): accuracy level 0, LM head and embeddings in
    float; the ORT GenAI builder's per-EP defaults are tests/cli/test_defaults.py's): every MatMul
    by a 2-D weight but the LM head became MatMulNBits; the top-1 agreement of onnxruntime's
    prefill logits with transformers float32 is recorded (build/parity-results/quantized-top1.jsonl)
    and asserted >= 90% for int8 only: on these tiny random models (vocab 256, near-tied logits)
    round-to-nearest int4 keeps the top-1 token on 49–100% of the positions (median 82%), and
    onnxruntime's own quantizer gives the same logits (checked on every row, below). A smaller set of
    rows covers --ep default, int8, asym (QMoE's zero points too), block 64/128, the quantized LM head (tied and not),
    quantized embeddings (GatherBlockQuantized), float16. Each row's logits also equal those of
    onnxruntime's quantizer applied to mobius' float build (same weights, same kernel); int4 --ep
    cpu writes the MoE experts 4-bit in com.microsoft QMoE, compared with the float build's MoE on
    the experts onnxruntime's quantizer dequantizes to.
"""

import json
import statistics
from collections import Counter

import numpy as np
import onnx
import pytest
from onnx import numpy_helper
from onnxruntime.capi._pybind_state import quantize_matmul_4bits, quantize_matmul_8bits
from safetensors.numpy import load_file

import harness as H

TOP1 = 0.90  # issue 6's top-1 agreement bound, asserted for int8 (int4: recorded, see above)


def load_package(path):
    model = onnx.load(str(path))
    inits = {i.name: numpy_helper.to_array(i) for i in model.graph.initializer}
    return model, inits


def ort_quantize(w_kn: np.ndarray, bits: int, block: int, sym: bool):
    """onnxruntime's quantizer (DefaultWeightOnlyQuantizer.qbits_block_quant, QOperator format)
    on a weight [K, N]: packed [N, k_blocks, blob], scales [N, k_blocks], zero_points."""
    k, n = w_kn.shape
    kb = (k + block - 1) // block
    kpack = 8 // bits
    packed = np.zeros((n, kb, block // kpack), np.uint8)
    zp = np.zeros((n, (kb + kpack - 1) // kpack), np.uint8)
    scales = np.zeros((n, kb), w_kn.dtype)
    padded = np.pad(w_kn, ((0, kb * block - k), (0, 0)))
    (quantize_matmul_4bits if bits == 4 else quantize_matmul_8bits)(packed, padded, scales, zp, block, n, k, sym)
    return packed, scales, zp


def unpack(packed: np.ndarray, bits: int, count: int) -> np.ndarray:
    """Codes [N, count] from bytes [N, ...] (4 bits: low nibble first)."""
    flat = packed.reshape(packed.shape[0], -1)
    if bits == 4:
        flat = np.stack([flat & 15, flat >> 4], -1).reshape(flat.shape[0], -1)
    return flat[:, :count].astype(np.int32)


def dequantize(packed, scales, zp, k: int, bits: int, block: int, sym: bool) -> np.ndarray:
    """[N, K] float32: (q - zero_point) * scale per block; zero point 2^(bits-1) when symmetric."""
    n, kb = scales.shape
    q = unpack(packed, bits, k)
    z = np.full((n, kb), 1 << (bits - 1), np.int32) if sym else unpack(zp, bits, kb)
    blk = np.arange(k) // block
    return (q - z[:, blk]).astype(np.float32) * scales.astype(np.float32)[:, blk]


def checkpoint_weights(hf_dir):
    out = {}
    for f in sorted(hf_dir.glob("*.safetensors")):
        out.update(load_file(str(f)))
    return out


SCHEMES = [pytest.param(bits, block, scheme, id=f"int{bits}-b{block}-{scheme}")
           for bits in (4, 8) for block in (32, 64, 128) for scheme in ("sym", "asym")]


@pytest.fixture(scope="module")
def tiny_llama(tmp_path_factory):
    """hidden 80, MLP 144: K = 80 and 144 leave a short last block for every block size."""
    hf = tmp_path_factory.mktemp("quant-llama") / "hf"
    H.write_checkpoint("llama", dict(hidden_size=80, intermediate_size=144, head_dim=20), hf)
    return hf


def check_equal_to_ort(path, hf_dir, bits, block, scheme, dtype=np.float32):
    model, inits = load_package(path)
    weights = checkpoint_weights(hf_dir)
    sym = scheme == "sym"
    nodes = [n for n in model.graph.node if n.op_type == "MatMulNBits"]
    assert nodes, "no MatMulNBits"
    checked = 0
    for node in nodes:
        attrs = {a.name: a.i for a in node.attribute}
        assert (attrs["bits"], attrs["block_size"]) == (bits, block)
        k, n = attrs["K"], attrs["N"]
        b, s = inits[node.input[1]], inits[node.input[2]]
        z = inits[node.input[3]] if len(node.input) > 3 and node.input[3] else None
        assert (z is None) == sym, f"{node.name}: zero points {'present' if z is not None else 'absent'}"
        assert s.dtype == dtype, f"{node.name}: scales {s.dtype}"
        key = node.input[1][: node.input[1].rindex("_Q")]  # <weight>_Q4 → the HF key
        w = weights[key].astype(dtype)  # [N, K] (torch Linear): the float build's weight
        assert w.shape == (n, k), f"{key}: {w.shape} vs N={n}, K={k}"
        rb, rs, rz = ort_quantize(np.ascontiguousarray(w.T), bits, block, sym)
        mine = dequantize(b, s, z, k, bits, block, sym)
        ref = dequantize(rb, rs, rz, k, bits, block, sym)
        assert np.array_equal(mine, ref), \
            f"{key}: dequantized blocks differ at {np.argwhere(mine != ref)[:3].tolist()}, max|Δ| {np.abs(mine - ref).max()}"
        assert np.array_equal(s, rs), f"{key}: scales differ"
        assert np.array_equal(unpack(b, bits, k), unpack(rb, bits, k)), f"{key}: codes differ"
        if not sym:
            assert np.array_equal(z, rz), f"{key}: zero points differ"
        checked += 1
    return checked


def embedding_data(model, inits, name):
    """GatherBlockQuantized's data input: an initializer of its own, or (a tied embedding sharing
    the LM head's quantization) Reshape(the head's MatMulNBits B). Returns (initializer name, array
    as GatherBlockQuantized sees it)."""
    if name in inits:
        return name, inits[name]
    reshape = next(n for n in model.graph.node if name in n.output)
    assert reshape.op_type == "Reshape" and reshape.input[0] in inits, f"{name}: neither an initializer nor reshaped one"
    b = inits[reshape.input[0]]
    return reshape.input[0], b.reshape(b.shape[0], -1)


def check_embeddings_equal_to_ort(path, hf_dir, bits, block, scheme):
    """GatherBlockQuantized: its data [vocab, dim * bits / 8] is the quantized embedding matrix
    [vocab, dim] (N = vocab, K = dim), rows of blocks as onnxruntime's quantizer packs them."""
    model, inits = load_package(path)
    weights = checkpoint_weights(hf_dir)
    sym = scheme == "sym"
    nodes = [n for n in model.graph.node if n.op_type == "GatherBlockQuantized"]
    for node in nodes:
        attrs = {a.name: a.i for a in node.attribute}
        assert (attrs["bits"], attrs["block_size"], attrs["gather_axis"], attrs["quantize_axis"]) == (bits, block, 0, 1)
        name, d = embedding_data(model, inits, node.input[0])
        key = name[: name.rindex("_gather_Q" if "_gather_Q" in name else "_Q")]
        e = weights[key]
        vocab, dim = e.shape
        s = inits[node.input[2]]
        z = inits[node.input[3]] if len(node.input) > 3 and node.input[3] else None
        assert d.shape == (vocab, dim * bits // 8) and s.shape == (vocab, dim // block)
        rb, rs, rz = ort_quantize(np.ascontiguousarray(e.T), bits, block, sym)
        assert np.array_equal(d, rb.reshape(vocab, -1)), f"{key}: data differs"
        assert np.array_equal(s, rs), f"{key}: scales differ"
        if not sym:
            assert np.array_equal(z, rz), f"{key}: zero points differ"
        assert np.array_equal(dequantize(d, s, z, dim, bits, block, sym), dequantize(rb, rs, rz, dim, bits, block, sym))
    return len(nodes)


@pytest.mark.parametrize("bits,block,scheme", [(4, 32, "sym"), (4, 64, "asym"), (8, 32, "asym"), (8, 64, "sym")])
def test_embeddings_equal_onnxruntime_quantizer(bits, block, scheme, tmp_path):
    """--quantize-embeddings with a tied LM head (gemma): the Gather becomes GatherBlockQuantized,
    the head a MatMulNBits, both quantized as onnxruntime's quantizer does."""
    hf = tmp_path / "hf"
    H.write_checkpoint("gemma", H.variant("gemma", "default"), hf)
    path = H.build(hf, tmp_path / "onnx", "--runtime", "none", "--precision", f"int{bits}", "--block-size", str(block),
                   "--quant-scheme", scheme, "--quantize-embeddings", "--quantize-lm-head")
    assert check_embeddings_equal_to_ort(path, hf, bits, block, scheme) == 1
    assert check_equal_to_ort(path, hf, bits, block, scheme) == 15
    model = onnx.load(str(path), load_external_data=False)
    assert not [i.name for i in model.graph.initializer if i.name == "model.embed_tokens.weight"], "float embeddings left"
    # one quantized matrix for both, as the ORT GenAI builder stores it: the Gather reads the head's
    # B (through a Reshape), scales and zero points
    head = next(n for n in model.graph.node if n.op_type == "MatMulNBits" and "embed_tokens" in n.input[1])
    gather = next(n for n in model.graph.node if n.op_type == "GatherBlockQuantized")
    reshape = next(n for n in model.graph.node if gather.input[0] in n.output)
    assert reshape.input[0] == head.input[1] and gather.input[2:] == head.input[2:4], "the matrix is stored twice"


@pytest.mark.parametrize("bits,block,scheme", SCHEMES)
def test_initializers_equal_onnxruntime_quantizer(bits, block, scheme, tiny_llama, tmp_path):
    path = H.build(tiny_llama, tmp_path / "onnx", "--runtime", "none", "--precision", f"int{bits}",
                   "--block-size", str(block), "--quant-scheme", scheme, "--quantize-lm-head")
    # 2 layers × 7 projections + the LM head
    assert check_equal_to_ort(path, tiny_llama, bits, block, scheme) == 15


def test_float16_scales_equal_onnxruntime_quantizer(tiny_llama, tmp_path):
    """--dtype f16: the weight rounded to float16 first, float16 scales, as the quantizer does on
    a float16 model."""
    path = H.build(tiny_llama, tmp_path / "onnx", "--runtime", "none", "--precision", "int4",
                   "--dtype", "f16", "--quant-scheme", "asym", "--no-quantize-lm-head")
    assert check_equal_to_ort(path, tiny_llama, 4, 32, "asym", np.float16) == 14


# ---------------------------------------------------------------------------------------------
# (b) top-1 agreement with transformers float32
# ---------------------------------------------------------------------------------------------
def weight_matmuls(model) -> tuple[int, int, list]:
    """(MatMulNBits nodes, float MatMul/Gemm by a 2-D weight initializer, their names)."""
    inits = {i.name: i for i in model.graph.initializer}
    nbits = sum(1 for n in model.graph.node if n.op_type == "MatMulNBits")
    left = [n.name for n in model.graph.node if n.op_type in ("MatMul", "Gemm") and len(n.input) > 1
            and n.input[1] in inits and len(inits[n.input[1]].dims) == 2]
    return nbits, len(left), left


def option(args, name, default):
    return args[args.index(name) + 1] if name in args else default


def dequantize_moe_experts(model, bits: int, block: int, sym: bool) -> None:
    """In a float --ep cpu build: every com.microsoft MoE node's per-expert initializers (expert
    x's gate | up [I, 2H], the interleaved fc1 rows [2I, H], and down [H, I], stacked by the graph:
    passes/mixture_of_experts.cpp) replaced by their dequantization by onnxruntime's quantizer
    (rows of blocks along the input features), what QMoE computes with."""
    inits = {i.name: i for i in model.graph.initializer}
    producer = {o: n for n in model.graph.node for o in n.output}
    moes = [n for n in model.graph.node if (n.domain, n.op_type) == ("com.microsoft", "MoE")]
    for moe in moes:
        for fc in (moe.input[2], moe.input[4]):
            for part in producer[fc].input:  # Concat of Reshape / Unsqueeze(initializer)
                init = inits[producer[part].input[0]]
                w = numpy_helper.to_array(init)
                rows = w.reshape(-1, w.shape[1] // 2) if init.name.endswith(".gate_up") else w  # [N, K]
                k = rows.shape[1]
                deq = dequantize(*ort_quantize(np.ascontiguousarray(rows.T), bits, block, sym), k, bits, block, sym)
                init.CopyFrom(numpy_helper.from_array(deq.reshape(w.shape).astype(w.dtype), init.name))


def ort_quantized_reference(hf, work, args, runtime, quantized_model, dtype):
    """The float build of the same checkpoint (same --ep and --dtype), quantized by onnxruntime's
    MatMulNBitsQuantizer with the same bits / block size / scheme / accuracy level, on the nodes
    whose weight mobius quantized (the checkpoint-weight MatMuls but those mobius left float), and
    when mobius wrote com.microsoft QMoE, its MoE experts dequantized (dequantize_moe_experts).
    Returns (path, MatMuls quantized, MoE nodes of the float build)."""
    from onnxruntime.quantization.matmul_nbits_quantizer import MatMulNBitsQuantizer

    float_args = [a for a in ("--ep", "--dtype") if a in args]
    float_args = [x for a in float_args for x in (a, option(args, a, None))]
    path = H.build(hf, work / "float", *float_args, *runtime)
    # the 2-D checkpoint weights (stacked 3-D MoE experts stay float in both)
    external = {i.name for i in onnx.load(str(path), load_external_data=False).graph.initializer
                if i.data_location == onnx.TensorProto.EXTERNAL and len(i.dims) == 2}
    model = onnx.load(str(path))
    _, _, left = weight_matmuls(quantized_model)
    include = [n.name for n in model.graph.node if n.op_type == "MatMul" and n.input[1] in external
               and n.name not in left]
    bits = int(option(args, "--precision", "int4")[3:])
    block, sym = int(option(args, "--block-size", 32)), option(args, "--quant-scheme", "sym") == "sym"
    moes = sum(1 for n in model.graph.node if (n.domain, n.op_type) == ("com.microsoft", "MoE"))
    if any(n.op_type == "QMoE" for n in quantized_model.graph.node):
        dequantize_moe_experts(model, bits, block, sym)
    q = MatMulNBitsQuantizer(model, bits=bits, block_size=block, is_symmetric=sym,
                             accuracy_level=int(option(args, "--accuracy-level", 0)) or None,
                             nodes_to_exclude=[n.name for n in model.graph.node if n.name not in include])
    q.process()
    out = work / "ort-quantized.onnx"
    onnx.save(q.model.model, str(out))
    return out, len(include), moes


def pinned(args) -> tuple:
    """`args` with the flags of the defaults before the builder's per-EP ones: accuracy level 0, the
    LM head and the embeddings in float, unless `args` asks otherwise."""
    extra = [] if "--accuracy-level" in args else ["--accuracy-level", "0"]
    extra += [] if "--quantize-lm-head" in args else ["--no-quantize-lm-head"]
    extra += [] if "--quantize-embeddings" in args else ["--no-quantize-embeddings"]
    return (*args, *extra)


def top1_row(model_type, overrides, work, build_args, lm_head_quantized=False, dtype=np.float32):
    """Builds the row quantized; checks that every weight product (but the float LM head) is a
    MatMulNBits, that int4 made every MoE node of the float build a QMoE with no float expert left,
    that the logits equal those of onnxruntime's quantizer applied to the float build, its MoE
    experts dequantized (max|Δ| <= H.TOL; without a quantized tied LM head, which its quantizer
    leaves as a Gemm), and
    for int8 the top-1 agreement with transformers float32 (>= TOP1). Returns (agreement,
    problems)."""
    build_args = pinned(build_args)
    hf = work / "hf"
    H.write_checkpoint(model_type, overrides, hf)
    ref = H.load_reference(hf, overrides=overrides)
    runtime = [] if overrides.get("_runtime", "ort-genai") == "ort-genai" else ["--runtime", "none"]
    path = H.build(hf, work / "onnx", *build_args, *runtime)
    model = onnx.load(str(path), load_external_data=False)
    nbits, left, names = weight_matmuls(model)
    problems = []
    # everything quantized but the LM head (unless asked): one float weight product left at most
    if left > (0 if lm_head_quantized else 1) or nbits == 0:
        problems.append(f"{nbits} MatMulNBits, {left} float weight products left: {names[:4]}")
    ids, mask, pos = H.prefill_batch(ref.config.vocab_size)
    H.reset_rotary(ref)
    hf_logits, _ = H.hf_forward(ref, ids, mask, pos)
    optional_pos = "--ep" in build_args
    ox_logits, _ = H.OnnxLM(path, ref.config, dtype=dtype, position_ids_optional=optional_pos)(ids, mask, pos)
    valid = mask.astype(bool)
    agree = float(np.mean(ox_logits[valid].argmax(-1) == hf_logits[valid].argmax(-1)))
    # int4 --ep cpu: MoE experts 4-bit in QMoE (passes/mixture_of_experts.cpp), none left in float
    qmoe = sum(1 for n in model.graph.node if n.op_type == "QMoE")
    float_experts = [i.name for i in model.graph.initializer if ".experts." in i.name and not i.name.endswith("_scales")
                     and i.data_type in (onnx.TensorProto.FLOAT, onnx.TensorProto.FLOAT16)]
    if qmoe and float_experts:
        problems.append(f"{qmoe} QMoE, float expert initializers left: {float_experts[:4]}")
    if not lm_head_quantized and "--quantize-embeddings" not in build_args:
        ort_path, n, moes = ort_quantized_reference(hf, work, build_args, runtime, model, dtype)
        if n != nbits:
            problems.append(f"onnxruntime's quantizer quantized {n} MatMuls, mobius {nbits}")
        if option(build_args, "--precision", "") == "int4" and qmoe != moes:
            problems.append(f"{qmoe} QMoE nodes, the float build has {moes} MoE")
        ort_logits, _ = H.OnnxLM(ort_path, ref.config, dtype=dtype, position_ids_optional=optional_pos)(ids, mask, pos)
        delta = H.max_abs(ox_logits[valid], ort_logits[valid])
        if not delta <= H.TOL:
            problems.append(f"logits vs onnxruntime's quantizer: max|Δ| {delta:.3g} > {H.TOL}")
    if option(build_args, "--precision", "") == "int8" and agree < TOP1:
        problems.append(f"top-1 agreement {agree:.3f} < {TOP1}")
    return agree, problems


def record(name, agree):
    H.RESULTS_DIR.mkdir(parents=True, exist_ok=True)
    with open(H.RESULTS_DIR / "quantized-top1.jsonl", "a") as f:
        f.write(json.dumps({"row": name, "top1": agree}) + "\n")


DEFAULT_ROWS = [pytest.param(mt, ov, id=mt) for mt, name, ov in H.rows() if name == "default"]


@pytest.mark.parametrize("model_type,overrides", DEFAULT_ROWS)
def test_int4_ep_cpu_top1(model_type, overrides, tmp_path):
    agree, problems = top1_row(model_type, overrides, tmp_path, ("--precision", "int4", "--ep", "cpu"))
    record(f"{model_type}@int4-ep-cpu", agree)
    assert not problems, "; ".join(problems)


VARIANTS = [
    ("llama", ("--precision", "int4"), False, np.float32),
    ("qwen2", ("--precision", "int8", "--ep", "default"), False, np.float32),
    ("mistral", ("--precision", "int4", "--quant-scheme", "asym", "--ep", "cpu"), False, np.float32),
    ("qwen3_moe", ("--precision", "int4", "--quant-scheme", "asym", "--ep", "cpu"), False, np.float32),  # QMoE zero points
    ("phi3", ("--precision", "int4", "--block-size", "64", "--ep", "cpu"), False, np.float32),
    ("gpt2", ("--precision", "int4", "--block-size", "128", "--quant-scheme", "asym"), False, np.float32),
    ("gemma", ("--precision", "int8", "--quantize-lm-head", "--ep", "cpu"), True, np.float32),  # tied LM head
    ("qwen3", ("--precision", "int8", "--quantize-lm-head", "--accuracy-level", "4"), True, np.float32),
    ("llama", ("--precision", "int8", "--dtype", "f16", "--ep", "cpu"), False, np.float16),
    ("gemma2", ("--precision", "int8", "--quantize-embeddings", "--quantize-lm-head", "--ep", "cpu"), True, np.float32),
    ("gpt2", ("--precision", "int8", "--quantize-embeddings", "--quant-scheme", "asym"), False, np.float32),
    ("qwen2", ("--precision", "int8", "--quantize-embeddings", "--dtype", "f16"), False, np.float16),
]


@pytest.mark.parametrize("model_type,args,lm_head,dtype",
                         [pytest.param(*v, id=f"{v[0]}{'_'.join(v[1])}") for v in VARIANTS])
def test_quantized_variants_top1(model_type, args, lm_head, dtype, tmp_path):
    overrides = H.variant(model_type, "default")
    agree, problems = top1_row(model_type, overrides, tmp_path, args, lm_head, dtype)
    record(f"{model_type}@{' '.join(args)}", agree)
    assert not problems, "; ".join(problems)
