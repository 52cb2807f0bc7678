# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""The name of a headline number: one function for results.json "summary" and "intervals", the figures' error bars,
the model card's intervals, the published numbers and the findings.

A headline is a quantity of a benchmark, "<benchmark> <quantity>", with the protocol choice it was scored under
where there is one: "<benchmark> <quantity> (<choice>)", e.g. "imagenet-a top-1 % (hendrycks-200)",
"imagenet-c mCE % (alexnet-15)", "imagenet-o AUPR %".
"""

from __future__ import annotations

TOP1 = "top-1 %"
ECE = "ECE %"
MEAN_TOP1 = "mean top-1 %"
MEAN_ERROR = "mean error %"
MCE = "mCE %"
CORRUPTIONS_ACCURACY = "corruptions accuracy %"
RELATIVE_MCE = "relative mCE %"
SEVERITY5_TOP1 = "severity-5 mean top-1 %"
MFR = "mFR unnormalised %"
AUPR = "AUPR %"
BG_GAP = "BG-gap (points)"


def headline_name(benchmark: str, quantity: str, choice: str | None = None) -> str:
    """The headline of `quantity` on `benchmark`, named by the protocol `choice` it was scored under (if any)."""
    name = f"{benchmark} {quantity}"
    return f"{name} ({choice})" if choice else name


__all__ = [
    "AUPR",
    "BG_GAP",
    "CORRUPTIONS_ACCURACY",
    "ECE",
    "MCE",
    "MEAN_ERROR",
    "MEAN_TOP1",
    "MFR",
    "RELATIVE_MCE",
    "SEVERITY5_TOP1",
    "TOP1",
    "headline_name",
]
