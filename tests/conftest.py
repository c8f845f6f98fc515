"""Suite-wide rules: the mobius binary must exist (no skipping), and nothing may skip or xfail."""

import os
from pathlib import Path

import pytest

# No test may reach a model hub: references load from local directories only (set before any
# test module imports transformers or huggingface_hub, which read it at import).
os.environ["HF_HUB_OFFLINE"] = "1"

REPO = Path(__file__).resolve().parents[1]

pytest_plugins = ["parity_report"]  # tests/parity/parity_report.py: the coverage table


# Modules whose tests share costly module fixtures (real weights, multi-GB packages, whole
# pipelines): each runs on a single xdist worker, so its fixtures are built once, not once per
# worker. (xdist's own `xdist_group` marker does not group under pytest 9: it renames item._nodeid,
# which pytest 9's Node.nodeid no longer reads.)
ONE_WORKER_MODULES = frozenset({
    "tests/real/test_gemma3_270m.py",
    "tests/real/test_gemma3_270m_int4.py",
    "tests/real/test_smollm2_gguf.py",
    "tests/real/test_minilm.py",
    "tests/real/test_whisper_tiny_en.py",
    "tests/cli/test_large_package.py",
    "tests/parity/test_diffusion_pipeline.py",
    "tests/parity/test_flux_pipeline.py",
})


def pytest_xdist_make_scheduler(config, log):
    """Every other test is its own work unit, as under --dist load; the largest units go first."""
    from xdist.scheduler import LoadScopeScheduling  # noqa: PLC0415 - only under pytest-xdist

    class OneWorkerModules(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            module = nodeid.split("::", 1)[0]
            return module if module in ONE_WORKER_MODULES else nodeid

    return OneWorkerModules(config, log)


@pytest.fixture(scope="session", autouse=True)
def mobius_binary() -> Path:
    path = Path(os.environ.get("MOBIUS_BIN", REPO / "build" / "mobius"))
    if not (path.is_file() and os.access(path, os.X_OK)):
        pytest.fail(f"mobius binary not found at {path}: build it (cmake --build build) or set MOBIUS_BIN",
                    pytrace=False)
    return path


@pytest.fixture(scope="session")
def tiny(tmp_path_factory) -> Path:
    """A tiny random Llama checkpoint (harness.write_checkpoint), shared read-only by the CLI and
    Python API tests."""
    import harness  # noqa: PLC0415 - torch and transformers only for the tests that use it

    d = tmp_path_factory.mktemp("tiny") / "hf"
    harness.write_checkpoint("llama", {}, d)
    return d


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """A skipped (or xfailed) check is a defect: report it as a failure."""
    rep = (yield).get_result()
    if hasattr(rep, "wasxfail"):  # xfailed or xpassed
        rep.outcome, rep.longrepr = "failed", f"marked xfail ({rep.wasxfail or 'no reason'}): no check may be xfail"
    elif rep.skipped:
        reason = rep.longrepr[2] if isinstance(rep.longrepr, tuple) else rep.longrepr
        rep.outcome, rep.longrepr = "failed", f"skipped ({reason}): no check may skip"
