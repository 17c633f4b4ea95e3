"""The linter (ruff, configured in pyproject.toml's [tool.ruff]) finds nothing in the package,
the tests and the experiment scripts."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _ruff() -> list[str]:
    beside = Path(sys.executable).with_name("ruff")  # installed with the test extra, next to this Python
    if beside.exists():
        return [str(beside)]
    found = shutil.which("ruff")
    if found is None:
        pytest.fail("ruff is not installed: pip install -e '.[test]'")
    return [found]


def test_ruff_finds_nothing():
    proc = subprocess.run([*_ruff(), "check", "--no-cache", "c4jax", "tests", "experiments"], cwd=ROOT,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]


def test_ruff_reports_a_bug_it_is_configured_for(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text("def f():\n    return undefined_name\n")
    proc = subprocess.run([*_ruff(), "check", "--no-cache", "--config", str(ROOT / "pyproject.toml"), str(bad)],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 1 and "F821" in proc.stdout
