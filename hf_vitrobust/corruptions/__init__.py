"""Image corruptions: ImageNet-C (Hendrycks & Dietterich, ICLR 2019), batched on tensors, CPU and CUDA alike.

Corruptions are image operations: this package imports no model code.
"""

from . import blur, color, digital  # noqa: F401  (each module registers its corruptions)
from .base import PROFILES, SEVERITIES, corrupt, get_corruption, register_corruption, registered_corruptions

__all__ = [
    "PROFILES",
    "SEVERITIES",
    "corrupt",
    "get_corruption",
    "register_corruption",
    "registered_corruptions",
]
