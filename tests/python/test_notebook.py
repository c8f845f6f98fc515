"""docs/notebook.ipynb, executed as a reader runs it (nbclient, a fresh ipykernel, every cell in
order, in an empty directory): it builds a tiny Llama with mobius_cpp, runs it in onnxruntime and
asserts max |Δ| < 1e-4 against transformers; any cell that raises fails this test."""

import os

import nbformat
from nbclient import NotebookClient

from conftest import REPO


def test_notebook_runs(tmp_path, monkeypatch):
    if os.environ.get("MOBIUS_WHEEL") != "1":  # the kernel imports the build tree's module, as the tests do
        monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [str(REPO / "build" / "python"),
                                                                         os.environ.get("PYTHONPATH")])))
    nb = nbformat.read(REPO / "docs" / "notebook.ipynb", as_version=4)
    NotebookClient(nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}).execute()
    outputs = "".join(o.get("text", "") for c in nb.cells if c.cell_type == "code" for o in c.outputs)
    assert "max |delta| = " in outputs and (tmp_path / "tiny-llama-onnx").is_dir()
