# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""`@gpu`: ZeroGPU's `spaces.GPU` where the `spaces` package is installed (Hugging Face ZeroGPU Spaces ship it),
a no-op elsewhere, so the same app runs on a CPU, a dedicated GPU and ZeroGPU."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

try:
    import spaces  # imported before anything touches CUDA, as ZeroGPU asks (app.py imports this module before it asks torch about CUDA)
except ImportError:
    spaces = None

F = TypeVar("F", bound=Callable)


def gpu(fn: F) -> F:
    """`fn` given a GPU for each call on ZeroGPU (`spaces.GPU(fn)`); `fn` itself where `spaces` is missing."""
    return fn if spaces is None else spaces.GPU(fn)
