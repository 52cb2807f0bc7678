"""The code base stays ruff-clean (configuration in pyproject.toml)."""

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("command", [["check"], ["format", "--check"]], ids=["check", "format"])
def test_ruff(command):
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "ruff",
            *command,
            "hf_vitrobust",
            "tests",
            "benchmarks",
            "examples",
            "metrics",
            "spaces_app",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stdout + result.stderr
