"""Shared test set-up: every test runs offline (pyproject's [tool.pytest.ini_options] env sets HF_HUB_OFFLINE=1)."""

import os

import pytest

if os.environ.get("HF_HUB_OFFLINE") != "1":
    raise pytest.UsageError("Tests must run with HF_HUB_OFFLINE=1; install the dev extras (pytest-env).")
