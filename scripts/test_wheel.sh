#!/usr/bin/env bash
# The wheel as a user gets it: `pip wheel .` into build/dist, repaired by auditwheel (which copies
# the protobuf shared library the Python module links into the wheel and gives the platform tag),
# checked to need nothing outside the wheel but glibc, libstdc++, libgcc and zlib, then installed
# into a fresh virtual environment (build/wheel-venv) from the file alone, without compiling (the
# install time is printed: seconds), `mobius --version` and a tiny build with the installed
# command and module, then tests/python against them (MOBIUS_WHEEL=1).
# The wheel's CMake build reuses build/ (scikit-build-core's build-dir, the same options and Python
# as scripts/build.sh), so the C++ core that scripts/build.sh compiled is not compiled again: only
# the links. The venv reaches .venv's test packages (torch, transformers, onnxruntime, pytest)
# through a .pth file that comes after its own site-packages; the wheel itself brings none.
set -euo pipefail
cd "$(dirname "$0")/.."
rm -rf build/dist
start=$SECONDS
# --no-build-isolation: the build backend of .venv (requirements.txt pins it as pyproject.toml
# does), so nothing is fetched and build/ is kept: scikit-build-core clears a build directory last
# configured from another (each time new) isolated environment, compiling everything again.
.venv/bin/pip wheel -q . -w build/dist/raw --no-deps --no-build-isolation -C build-dir=build \
  -C cmake.define.MOBIUS_BUILD_TESTS=ON \
  -C cmake.define.Python_EXECUTABLE="$PWD/.venv/bin/python"
echo "test_wheel: pip wheel . took $((SECONDS - start)) s"
PATH="$PWD/.venv/bin:$PATH" auditwheel repair -w build/dist build/dist/raw/mobius_cpp-*.whl
wheel=$(echo build/dist/mobius_cpp-*.whl)
.venv/bin/auditwheel show "$wheel"

# Each ELF file's DT_NEEDED entries: a library the wheel carries, or the C and C++ runtimes and
# zlib that every such machine has (zlib1g is a required Debian package).
unpacked=build/dist/unpacked
.venv/bin/python -m zipfile -e "$wheel" "$unpacked"
carried=$(cd "$unpacked" && ls mobius_cpp.libs 2>/dev/null | tr '\n' ' ')
while IFS= read -r -d '' elf; do
  name=${elf#"$unpacked"/}
  needed=$(readelf -d "$elf" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | tr '\n' ' ')
  echo "test_wheel: $name needs: $needed"
  for lib in $needed; do
    [[ $lib =~ ^(libc|libm|libstdc\+\+|libgcc_s|libz|ld-linux-x86-64)\.so\.[0-9]+$ || " $carried " == *" $lib "* ]] && continue
    echo "test_wheel: FAILED: $name needs $lib, which is neither in the wheel nor on a bare machine" >&2
    exit 1
  done
done < <(find "$unpacked" -type f \( -name '*.so*' -o -path '*/scripts/mobius' \) -print0)

venv=build/wheel-venv
rm -rf "$venv"
"$(.venv/bin/python -c 'import sys; print(sys.base_prefix)')/bin/python3" -m venv "$venv"
start=$SECONDS
# --no-index: from the file alone (no registry, no build backend); --only-binary: never compiles
"$venv/bin/pip" install -q --no-index --only-binary :all: "$wheel"
echo "test_wheel: pip install $(basename "$wheel") took $((SECONDS - start)) s"
"$venv/bin/mobius" --version
tiny=build/dist/tiny
mkdir -p "$tiny"
cat > "$tiny/config.json" <<'EOF'
{"model_type": "llama", "hidden_size": 64, "intermediate_size": 128, "num_hidden_layers": 2,
 "num_attention_heads": 4, "num_key_value_heads": 2, "vocab_size": 256, "max_position_embeddings": 128}
EOF
"$venv/bin/mobius" build "$tiny" build/dist/tiny-cli --no-weights
"$venv/bin/python" -c 'import sys, mobius_cpp
pkg = mobius_cpp.build(sys.argv[1], sys.argv[2], weights=False)
print("test_wheel: mobius_cpp.build:", pkg.model_type, pkg.files)' "$tiny" build/dist/tiny-module

site=$("$venv/bin/python" -c 'import sysconfig; print(sysconfig.get_path("purelib"))')
.venv/bin/python -c 'import sysconfig; print(sysconfig.get_path("purelib"))' > "$site/zz-test-stack.pth"
MOBIUS_WHEEL=1 "$venv/bin/python" -m pytest tests/python -q -p no:cacheprovider "$@"
