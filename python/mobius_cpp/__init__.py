"""mobius_cpp: build ONNX models for Hugging Face architectures from Python.

The same C++ core as the ``mobius`` command (one implementation: ``build`` takes the CLI's options
and makes the CLI's checks, src/driver/build.h). Sources of truth and examples: docs/python.md.

    >>> import mobius_cpp
    >>> pkg = mobius_cpp.build("Qwen/Qwen2.5-0.5B", "qwen-onnx", ep="cpu", precision="int4")
    >>> pkg.inputs[0].name
    'input_ids'
"""

from __future__ import annotations

import os
import re
import resource
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping, Optional, Sequence, Union

from . import _core

__version__: str = _core.__version__

__all__ = [
    "build", "apply_weights", "inspect", "list_models", "list_components", "register", "register_file", "Package", "IOValue",
    "Info", "ModelType", "ComponentClass",
    "MobiusError", "MobiusFileNotFoundError", "MobiusFileExistsError", "MobiusValueError",
]

PathLike = Union[str, "os.PathLike[str]"]
# progress(label, bytes_done, bytes_total), called between two written chunks of weights.
ProgressCallback = Callable[[str, int, int], None]


class MobiusError(Exception):
    """A build, inspect or list error: ``str(e)`` is the CLI's one-line message (without the
    ``mobius: error:`` prefix). Subclasses also derive from the builtin the error resembles, so
    ``except FileNotFoundError`` catches a missing checkpoint.

    Attributes, parsed from the message (None when it names none):
      file: the file or directory the message is about: its first word when a colon ends it, as
        the CLI prints it (a message about an option, "--block-size 48: ...", names none);
      field: the config.json field (``field 'rope_scaling.type'``);
      tensor: the checkpoint tensor (``tensor 'model.norm.weight'``).
    Raised by ``inspect`` for a build that would fail, ``info`` is its report (else None).
    """

    file: Optional[str]
    field: Optional[str]
    tensor: Optional[str]
    info: Optional["Info"] = None

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message
        first = re.match(r"(?:while [^:]*: )*([^\s:']+):", message)
        self.file = first.group(1) if first and not first.group(1).startswith("-") else None
        f = re.search(r"field '([^']*)'", message)
        self.field = f.group(1) if f else None
        t = re.search(r"tensor '([^']*)'", message)
        self.tensor = t.group(1) if t else None

    def __str__(self) -> str:
        return self.message


class MobiusFileNotFoundError(MobiusError, FileNotFoundError):
    """A checkpoint, config.json, GGUF file or Hugging Face id that is not there."""


class MobiusFileExistsError(MobiusError, FileExistsError):
    """An output directory that exists and is not empty (pass ``force=True`` to replace it)."""


class MobiusValueError(MobiusError, ValueError):
    """Everything else: a bad option, config field, tensor or unsupported model type."""


_NOT_FOUND = ("not a directory", "cannot open", "no such file", "not in the Hugging Face cache",
              "no *.safetensors files")
_EXISTS = ("exists and is not empty", "exists and is not a directory")


def _error(e: _core.Error) -> MobiusError:
    message = str(e)
    if any(s in message for s in _EXISTS):
        return MobiusFileExistsError(message)
    if any(s in message for s in _NOT_FOUND):
        return MobiusFileNotFoundError(message)
    return MobiusValueError(message)


@dataclass(frozen=True)
class IOValue:
    """A graph input or output: ``dtype`` is the ONNX TensorProto name ("FLOAT", "INT64", ...);
    ``shape`` holds an int per fixed dimension, the symbol's name per symbolic one ("batch_size")."""

    name: str
    dtype: str
    shape: tuple[Union[int, str, None], ...]


@dataclass
class Package:
    """A written package: what ``build`` returns (``Package.open`` reads one from disk).

    path: the output directory; files: its files' paths relative to it, sorted ("onnx/model.onnx"
    in the hf layout); graphs: its ONNX graphs by role ("model"; "encoder", "decoder" or
    "embedding", "decoder", "vision" for a multi-graph task; src/package/layout.h), sorted;
    layout: "hf" or "flat"; graph_files: each graph's file relative to path;
    graph_io: each graph's {"inputs": [...], "outputs": [...]}; inputs/outputs/metadata: the I/O
    contract read back from the written model.onnx, or for a multi-graph package from its
    decoder.onnx (the graph a generation loop runs); the build's report (model_type, task, num_nodes, num_weights bound from the
    checkpoint, unused_tensors: checkpoint tensors the model does not read, passes: the --ep
    lowering's (pass, rewrites), quantize: the resolved --precision options, warnings); timings
    (seconds: "build" is the whole call) and peak_memory_bytes (this process's peak resident set
    after the build, getrusage).
    """

    path: Path
    files: list[str]
    graphs: list[str]
    graph_io: dict[str, dict[str, list[IOValue]]]
    inputs: list[IOValue]
    outputs: list[IOValue]
    metadata: dict[str, str]
    layout: str = "hf"
    graph_files: dict[str, str] = field(default_factory=dict)
    model_type: str = ""
    task: str = ""
    num_nodes: int = 0
    num_weights: int = 0
    unused_tensors: list[str] = field(default_factory=list)
    passes: list[tuple[str, int]] = field(default_factory=list)
    quantize: Optional[dict[str, Any]] = None
    warnings: list[str] = field(default_factory=list)
    self_check: Optional[str] = None
    timings: dict[str, float] = field(default_factory=dict)
    peak_memory_bytes: int = 0

    @classmethod
    def open(cls, path: PathLike) -> "Package":
        """Reads the files and the I/O contract of the package in ``path``, of either layout: a
        directory holding model.onnx, or the graphs of a multi-graph task with decoder.onnx (flat),
        or onnx/model.onnx or onnx/decoder_model_merged.onnx (hf), with their --variant files
        (onnx/model_q4.onnx: graph "model_q4"). Raises MobiusFileNotFoundError when there is none."""
        path = Path(path)
        layout, graph_files = _graph_files(path)
        main = next((g for g in ("model", "decoder", "unet", "transformer") if g in graph_files), None) or next(
            (g for g in sorted(graph_files) if g.startswith(("model_", "decoder_"))), None) or next(
            iter(sorted(graph_files)), None)
        if main is None:
            raise MobiusFileNotFoundError(f"{path}: no model.onnx, decoder.onnx, onnx/model.onnx or "
                                          "onnx/decoder_model_merged.onnx (not a mobius package directory)")
        files = sorted(p.relative_to(path).as_posix() for p in path.rglob("*") if p.is_file())
        graphs = sorted(graph_files)
        values = lambda vs: [IOValue(v["name"], v["dtype"], tuple(v["shape"])) for v in vs]  # noqa: E731
        contracts = {}
        for g, f in graph_files.items():
            try:
                contracts[g] = _core.io_contract(str(path / f))
            except _core.Error as e:
                raise _error(e) from None
        graph_io = {g: {"inputs": values(c["inputs"]), "outputs": values(c["outputs"])} for g, c in contracts.items()}
        metadata = dict(contracts[main]["metadata"])
        return cls(path=path, files=files, graphs=graphs, graph_io=graph_io, inputs=graph_io[main]["inputs"],
                   outputs=graph_io[main]["outputs"], metadata=metadata, layout=layout, graph_files=graph_files,
                   model_type=metadata.get("model_type", ""), task=metadata.get("task", ""))

    def session(self, providers: Optional[list[str]] = None, *, graph: Optional[str] = None, **kwargs: Any) -> Any:
        """An ``onnxruntime.InferenceSession`` over the graph named ``graph`` (default: the one
        graph of a single-graph package, model.onnx), CPU unless ``providers`` says otherwise.
        Raises ValueError naming the graphs when ``graph`` is not one of them or is needed (a
        multi-graph package), ModuleNotFoundError when onnxruntime is not installed
        (``pip install mobius-cpp[runtime]``)."""
        import onnxruntime  # an optional dependency

        if graph is None and self.graphs != ["model"]:
            raise ValueError(f"{self.path}: a package of graphs {self.graphs}: pass graph= one of them")
        graph = graph or "model"
        if graph not in self.graphs:
            raise ValueError(f"{self.path}: no graph '{graph}' (graphs: {self.graphs})")
        return onnxruntime.InferenceSession(str(self.path / self.graph_files[graph]),
                                            providers=providers or ["CPUExecutionProvider"], **kwargs)


def _graph_files(path: Path) -> tuple[str, dict[str, str]]:
    """The layout of the package in ``path`` and its graphs' files by role: flat, the .onnx files at
    the top (role: the file's stem); hf, those under onnx/ with the Hugging Face names of one
    model's graphs (src/package/layout.h model_graph_paths), a --variant's suffix kept on the role
    (onnx/decoder_model_merged_q4.onnx: "decoder_q4"), and a pipeline's component folders
    (unet/model.onnx: "unet"). ``path`` not a directory: ("hf", {})."""
    if not path.is_dir():
        return "hf", {}
    top = {p.stem: p.name for p in path.glob("*.onnx") if p.is_file()}
    if top:
        return "flat", top
    stems = sorted(((Path(f).stem, role) for role, f in _core.graph_files("hf").items()),
                   key=lambda sr: -len(sr[0]))  # decoder_model_merged before model
    files = {}
    for p in sorted((path / "onnx").glob("*.onnx")) if (path / "onnx").is_dir() else []:
        for stem, role in stems:
            if p.stem == stem or p.stem.startswith(stem + "_"):
                files[role + p.stem[len(stem):]] = p.relative_to(path).as_posix()
                break
    # a diffusers pipeline's components, one folder each (src/driver/pipeline.h): unet/model.onnx
    for p in sorted(path.glob("*/model*.onnx")):
        if p.parent.name != "onnx" and (p.stem == "model" or p.stem.startswith("model_")):
            files[p.parent.name + p.stem[len("model"):]] = p.relative_to(path).as_posix()
    return "hf", files


def _options(source: PathLike, output_dir: PathLike = "", **kw: Any) -> _core.BuildOptions:
    o = _core.BuildOptions()
    # any kind of source: the C++ core tells a GGUF (by its magic), a directory and a HF id apart,
    # as for `mobius build SOURCE` (src/driver/source_path.h classify_source)
    o.config_dir = os.fspath(source)
    o.output_dir = os.fspath(output_dir)
    for name, value in kw.items():
        setattr(o, name, value)
    return o


def _tqdm_progress() -> Optional[ProgressCallback]:
    try:
        from tqdm.auto import tqdm
    except ImportError:
        return None
    bars: dict[str, Any] = {}

    def update(label: str, done: int, total: int) -> None:
        if label not in bars:
            bars[label] = tqdm(total=total, desc=label, unit="B", unit_scale=True)
        bar = bars[label]
        bar.update(done - bar.n)
        if done >= total:
            bar.close()

    return update


def build(source: PathLike, output_dir: PathLike, *, task: Optional[str] = None, dtype: str = "f32", ep: str = "default",
          precision: Optional[str] = None, block_size: int = 32, quant_scheme: str = "sym",
          accuracy_level: Optional[int] = None, quantize_lm_head: Optional[bool] = None,
          quantize_embeddings: Optional[bool] = None, runtime: str = "ort-genai", layout: str = "hf",
          weights: bool = True,
          force: bool = False, variant: bool = False, try_generic: bool = False, lora: Optional[PathLike] = None,
          lora_runtime: Sequence[PathLike] = (), progress: Union[bool, ProgressCallback, None] = None) -> Package:
    """Builds the ONNX package of ``source`` into ``output_dir``: ``mobius build`` as a function.

    source: a checkpoint directory (config.json, *.safetensors), a .gguf file, or a Hugging Face
    id (ORG/NAME) resolved from the local hub cache (no network access).
    The keyword options are the CLI's, with the CLI's defaults and spellings (the ORT GenAI model
    builder's too, any case: "fp16", "CPU", "CPUExecutionProvider"): task None (from config.json's
    architectures) | "feature-extraction" | "fill-mask" | "text-classification" |
    "token-classification" | "question-answering" | "multiple-choice" (a text encoder's head) |
    "sentence-embedding"; dtype "f32" | "f16" | "bf16";
    ep "default" | "onnx-standard" | "cpu" | "cuda" | "dml" | "webgpu"; precision None | "int4" |
    "int8" | "keep" (a float type there is the builder's precision: the dtype) with block_size,
    quant_scheme, accuracy_level, quantize_lm_head, quantize_embeddings; runtime "ort-genai" |
    "optimum" | "none"; layout "hf" | "flat" is --layout (where the graphs go, README "Run it with"); weights=False is --no-weights; force replaces a non-empty
    output_dir; variant is --variant (the graph files named by dtype, onnx/model_q4.onnx, added into
    output_dir's previous package); try_generic is --try-generic (README.md); lora is --lora: a PEFT LoRA adapter
    directory merged into the weights as they stream; lora_runtime is --lora-runtime: adapter
    directories written into the package as <name>.onnx_adapter files for og.Adapters, the graph
    taking the LoRA weights as inputs (docs/lora.md).
    progress: a callable(label, bytes_done, bytes_total) called between written chunks; True: a
    tqdm bar when tqdm is installed, else the CLI's bar on stderr; None: silent.

    The GIL is released while the graph is built and the weights stream; Ctrl-C (KeyboardInterrupt)
    stops the build between two chunks and leaves nothing in output_dir. Raises a MobiusError
    subclass with the CLI's one-line message on any error (nothing is written then).
    """
    callback = _progress_callback(progress)

    def run() -> dict[str, Any]:  # an option value the core refuses raises inside _written, as a MobiusError
        options = _options(source, output_dir, task=task or "", dtype=dtype, ep=ep, precision=precision or "", block_size=block_size,
                           quant_scheme=quant_scheme, accuracy_level=accuracy_level,
                           quantize_lm_head=quantize_lm_head, quantize_embeddings=quantize_embeddings,
                           runtime=runtime, layout=layout, weights=weights, force=force, variant=variant,
                           try_generic=try_generic, lora_dir=os.fspath(lora) if lora is not None else "",
                           lora_runtime=[os.fspath(d) for d in lora_runtime],
                           progress=progress is True and callback is None)
        return _core.build(options, callback)

    return _written(output_dir, run)


def _progress_callback(progress: Union[bool, ProgressCallback, None]) -> Optional[ProgressCallback]:
    return _tqdm_progress() if progress is True else progress if callable(progress) else None


def _written(output_dir: PathLike, run: Callable[[], dict[str, Any]]) -> Package:
    """Runs a build and reads back the package it wrote, with its report, timings and peak memory."""
    start = time.perf_counter()
    try:
        report = run()
    except _core.Error as e:
        raise _error(e) from None
    seconds = time.perf_counter() - start
    package = Package.open(output_dir)
    for name in ("model_type", "task", "num_nodes", "num_weights", "unused_tensors", "quantize", "warnings",
                 "self_check"):
        setattr(package, name, report[name])
    package.passes = [tuple(p) for p in report["passes"]]
    package.timings = {"build": seconds}
    package.peak_memory_bytes = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    return package


def apply_weights(package: PathLike, checkpoint: PathLike, output_dir: PathLike, *, force: bool = False,
                  progress: Union[bool, ProgressCallback, None] = None) -> Package:
    """``mobius apply-weights PACKAGE CHECKPOINT OUTPUT_DIR``: binds ``checkpoint`` (a directory, a
    Hugging Face id or a .gguf file) into ``package``, a package built with ``weights=False``
    (--no-weights), streaming as ``build`` does (progress, GIL, Ctrl-C likewise; progress=True
    without tqdm is silent). The build
    options are the package's (recorded in its model.onnx metadata "mobius.build_options"), and
    the graph the checkpoint's config gives must be the package's byte for byte: the result
    equals ``build(checkpoint, output_dir, <the package's options>)``. Raises MobiusError when the
    package is not a mobius package, when the graphs differ, and as ``build`` does.
    """
    callback = _progress_callback(progress)
    return _written(output_dir, lambda: _core.apply_weights(os.fspath(package), os.fspath(checkpoint),
                                                           os.fspath(output_dir), force, callback))


@dataclass(frozen=True)
class Info:
    """What ``mobius info`` prints, as data (src/driver/info.h CheckpointInfo): source, format
    ("safetensors" | "GGUF"), model_type, task ("" when not registered: not_registered says why,
    llama_like whether try_generic can build it), no_weights (why the tensors could not be listed,
    or ""), parameters, stored ({stored dtype: {tensors, elements, bytes}}), data_files
    ({"model.onnx.data": bytes}, or one entry per graph of a multi-graph task, in the task's order:
    the external data files of the build with the given options), peak_bytes (its predicted peak
    resident set, checked against measured builds within 25 %; a GGUF's synthesized tokenizer aside),
    disk_bytes (the disk its package takes: graphs, external data and copied files; a build refuses
    to start when the output's file system has less free), eps ([{ep, passes, refused}] for every --ep)."""

    source: str
    format: str
    model_type: str
    task: str
    not_registered: str
    llama_like: bool
    no_weights: str
    parameters: int
    stored: dict[str, dict[str, int]]
    data_files: dict[str, int]
    peak_bytes: int
    disk_bytes: int
    eps: list[dict[str, Any]]


def inspect(source: PathLike, *, dtype: str = "f32", ep: str = "default", precision: Optional[str] = None,
            layout: str = "hf", runtime: str = "ort-genai", task: Optional[str] = None) -> Info:
    """``mobius info SOURCE``: what a build of ``source`` (as for ``build``) with these options
    would be (data_files named where ``layout`` puts them; disk_bytes with the files ``runtime``
    adds), from headers only (no weight is read). Raises MobiusError as ``build`` does for a
    source or config it cannot read, and wherever ``mobius info`` exits 1 (the build it describes
    would fail: an unregistered model_type, tensors that cannot be listed, the build refused for
    ``ep``): the message is the build's error, and the exception's ``info`` attribute holds the
    report (not_registered, no_weights, eps[...]["refused"] say the same)."""
    try:
        report = _core.inspect(_options(source, dtype=dtype, ep=ep, precision=precision or "", layout=layout,
                                        runtime=runtime, task=task or ""))
    except _core.Error as e:
        raise _error(e) from None
    failure = report.pop("failure")
    info = Info(**report)
    if failure:
        error = _error(_core.Error(failure))
        error.info = info
        raise error
    return info


@dataclass(frozen=True)
class ModelType:
    """A registered model_type (``mobius list models``): its family (architecture file), task and
    onnxruntime-genai's model.type for its package ("" when the runtime has none for the task).
    Which types are verified against transformers is docs/models.md, written by the parity run."""

    model_type: str
    family: str
    task: str
    genai_type: str


def list_models() -> list[ModelType]:
    """Every registered model_type, sorted (``mobius list models``)."""
    return [ModelType(**m) for m in _core.list_models()]


@dataclass(frozen=True)
class ComponentClass:
    """A diffusers component class mobius builds (``mobius list components``): its config.json
    ``_class_name``, family (architecture file) and task ("diffusion-vae", "diffusion-denoiser", ...).
    Which are verified against diffusers is docs/models.md's diffusers table."""

    class_name: str
    family: str
    task: str


def list_components() -> list[ComponentClass]:
    """Every diffusers component class mobius builds, in ``mobius list components``' order."""
    return [ComponentClass(**c) for c in _core.list_components()]


def register(model_type: str, *, base: str, config_renames: Optional[Mapping[str, str]] = None,
             key_renames: Union[Mapping[str, str], Sequence[tuple[str, str]], None] = None,
             fused_qkv: Optional[str] = None, fused_gate_up: Optional[str] = None) -> None:
    r"""Registers a custom model_type for this process: checkpoints whose config.json says
    ``model_type`` are built as the registered ``base`` (src/registry/custom.h).

    config_renames: {their config field: the base's field}, e.g. {"d_model": "hidden_size"}.
    key_renames: [(regex, replacement)] (or a dict, in its order) applied in order to every
    checkpoint tensor name, each replacing every match (src/util/linear_regex.h: the common part
    of ECMAScript and Python re, matched in linear time; no backreferences or lookaround; the
    replacement says ``$1`` where Python's re.sub says ``\1``), e.g. a prefix
    [(r"^transformer\.h\.", "model.layers.")] or an expert rename
    [(r"\.moe\.expert_(\d+)\.gate\.", r".block_sparse_moe.experts.$1.w1.")].
    fused_qkv: the module name of a fused [q | k | v] projection (e.g. "qkv_proj"), split after the
    renames into q_proj, k_proj, v_proj by the base config's head counts and head_dim;
    fused_gate_up: that of a fused [gate | up] one (e.g. "gate_up_proj"), split in halves into
    gate_proj, up_proj.
    Raises MobiusValueError for a model_type that is built in, a base that is not registered, a
    pattern outside that syntax or over its limits (1,024 bytes), or a replacement taking a group
    the pattern does not have. ``mobius build --register FILE`` takes the
    same as JSON.
    """
    t = _core.CustomType()
    t.model_type, t.base = model_type, base
    t.config_renames = list((config_renames or {}).items())
    renames = key_renames.items() if isinstance(key_renames, Mapping) else (key_renames or [])
    t.key_renames = [(str(p), str(r)) for p, r in renames]
    t.fused_qkv, t.fused_gate_up = fused_qkv or "", fused_gate_up or ""
    try:
        _core.register_custom_type(t)
    except _core.Error as e:
        raise _error(e) from None


def register_file(path: PathLike) -> None:
    """Registers the custom model types of a JSON file, as ``mobius build --register FILE``."""
    try:
        _core.register_custom_types_file(os.fspath(path))
    except _core.Error as e:
        raise _error(e) from None
