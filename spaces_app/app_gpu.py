# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""`@gpu`: ZeroGPU's `spaces.GPU` where the `spaces` package is installed (Hugging Face ZeroGPU Spaces ship it),
a no-op elsewhere, so the same app runs on a CPU, a dedicated GPU and ZeroGPU."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

try:
    # Imported before anything touches CUDA, as ZeroGPU asks (app.py imports this module before it asks torch about
    # CUDA). A `spaces` without GPU (e.g. some folder named spaces on the path) counts as absent.
    from spaces import GPU as spaces_gpu
except ImportError:
    spaces_gpu = None

F = TypeVar("F", bound=Callable)


def gpu(fn: F) -> F:
    """`fn` given a GPU for each call on ZeroGPU (`spaces.GPU(fn)`); `fn` itself where `spaces` is missing."""
    return fn if spaces_gpu is None else spaces_gpu(fn)
