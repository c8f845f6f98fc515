# Types of the native module (python/mobius_cpp/_core.cpp); the public API is mobius_cpp/__init__.py.
from typing import Any, Callable, Optional

__version__: str

class Error(Exception): ...

class BuildOptions:
    config_dir: str
    gguf_file: str
    output_dir: str
    dtype: str
    layout: str
    weights: bool
    force: bool
    variant: bool
    progress: bool
    runtime: str
    ep: str
    task: str
    precision: str
    block_size: int
    quant_scheme: str
    accuracy_level: Optional[int]
    quantize_lm_head: Optional[bool]
    quantize_embeddings: Optional[bool]
    try_generic: bool
    lora_dir: str
    lora_runtime: list[str]
    def __init__(self) -> None: ...

class CustomType:
    model_type: str
    base: str
    config_renames: list[tuple[str, str]]
    key_renames: list[tuple[str, str]]
    fused_qkv: str
    fused_gate_up: str
    def __init__(self) -> None: ...

def register_custom_type(custom_type: CustomType) -> None: ...
def register_custom_types_file(path: str) -> None: ...
def build(options: BuildOptions, progress: Optional[Callable[[str, int, int], None]]) -> dict[str, Any]: ...
def apply_weights(package_dir: str, source: str, output_dir: str, force: bool,
                  progress: Optional[Callable[[str, int, int], None]]) -> dict[str, Any]: ...
def inspect(options: BuildOptions) -> dict[str, Any]: ...
def list_models() -> list[dict[str, Any]]: ...
def list_components() -> list[dict[str, Any]]: ...
def io_contract(model_path: str) -> dict[str, Any]: ...
def graph_files(layout: str) -> dict[str, str]: ...
