#!/usr/bin/env bash
# Creates the benchmark peers' own virtual environments (idempotent, pinned):
#   bench/.venv-genai        ONNX Runtime GenAI model builder   (bench/requirements-genai.txt)
#   bench/.venv-mobius-onnx  mobius-onnx, the Python mobius     (bench/requirements-mobius-onnx.txt)
#   bench/.venv-optimum      Optimum's ORT classes, for bench/test_optimum.py (bench/requirements-optimum.txt)
#   bench/.venv-exporters    transformers.exporters' ONNX backend, a bench_build.py peer (bench/requirements-exporters.txt)
# torch is installed first, alone, from the pin so that pip takes the CPU wheel; the script then
# checks that no CUDA build came in. Arguments name the environments to make (default: genai and mobius-onnx),
# e.g. `bench/setup_bench.sh genai` for the decode benchmark, which needs only the builder.
set -euo pipefail
cd "$(dirname "$0")"
PYTHON=${PYTHON:-python3}

names=("$@")
[[ ${#names[@]} -gt 0 ]] || names=(genai mobius-onnx)
for name in "${names[@]}"; do
  venv=.venv-$name
  req=requirements-$name.txt
  stamp=$venv/.requirements.sha256
  want=$(sha256sum "$req" | cut -d' ' -f1)
  if [[ -f $stamp && $(cat "$stamp") == "$want" ]]; then
    echo "setup_bench: $venv up to date"
    continue
  fi
  echo "setup_bench: $venv from $req"
  "$PYTHON" -m venv "$venv"
  torch_pin=$(grep -E '^torch==' "$req")
  "$venv/bin/pip" install -q "$torch_pin"
  "$venv/bin/pip" install -q -r "$req"
  "$venv/bin/python" - <<'PY'
import torch, sys
if torch.version.cuda is not None:
    sys.exit(f"setup_bench: a CUDA build of torch came in ({torch.__version__})")
print(f"setup_bench: torch {torch.__version__} (CPU)")
PY
  echo "$want" > "$stamp"
done
echo "setup_bench: ok"
