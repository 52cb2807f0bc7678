"""Probes from Paul & Chen (AAAI 2022) and Park & Kim (ICLR 2022), for any `Classifier`."""

from .base import ProbeInputs, ProbeResult, prepare_inputs

__all__ = ["ProbeInputs", "ProbeResult", "prepare_inputs"]
