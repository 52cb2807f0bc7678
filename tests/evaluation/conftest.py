"""Fixtures shared by the evaluation tests."""

import pytest

from hf_vitrobust.evaluation.runner import Runner


@pytest.fixture
def count_classified(monkeypatch) -> list[int]:
    """The sizes of the batches the runner classifies in this process, one entry per model call."""
    calls: list[int] = []
    original = Runner._classify

    def counted(self, model, pixels):
        calls.append(len(pixels))
        return original(self, model, pixels)

    monkeypatch.setattr(Runner, "_classify", counted)
    return calls
