#!/usr/bin/env bash
# The wheel as a user gets it: `pip install .` into a fresh virtual environment (build/wheel-venv),
# then tests/python against the installed module and its `mobius` command (MOBIUS_WHEEL=1).
# The wheel's CMake build reuses build/ (scikit-build-core's build-dir, the same options as
# scripts/build.sh), so the C++ core that scripts/build.sh compiled is not compiled again: only
# nanobind and the links. The venv reaches .venv's test packages (torch, transformers, onnxruntime,
# pytest) through a .pth file that comes after its own site-packages; the wheel itself brings none.
set -euo pipefail
cd "$(dirname "$0")/.."
venv=build/wheel-venv
rm -rf "$venv"
"$(.venv/bin/python -c 'import sys; print(sys.base_prefix)')/bin/python3" -m venv "$venv"
site=$("$venv/bin/python" -c 'import sysconfig; print(sysconfig.get_path("purelib"))')
.venv/bin/python -c 'import sysconfig; print(sysconfig.get_path("purelib"))' > "$site/zz-test-stack.pth"
start=$SECONDS
"$venv/bin/pip" install -q . -C build-dir=build -C cmake.define.MOBIUS_BUILD_TESTS=ON \
  -C cmake.define.Python_EXECUTABLE="$PWD/$venv/bin/python"
echo "test_wheel: pip install . took $((SECONDS - start)) s"
MOBIUS_WHEEL=1 "$venv/bin/python" -m pytest tests/python -q -p no:cacheprovider "$@"
