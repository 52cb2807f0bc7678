"""Image corruptions: ImageNet-C and ImageNet-P (Hendrycks & Dietterich, ICLR 2019), batched on tensors, and the
probes' image perturbations (Cutout holes, Fourier basis noise, band-passed noise).

Corruptions are image operations: this package imports no model code.
"""

# Each module registers its corruptions on import.
from ..constants import EXTRA_CORRUPTIONS, STANDARD_CORRUPTIONS
from . import blur, color, digital, geometric, motion_glass, noise, snow, spatter, weather  # noqa: F401
from .base import PROFILES, SEVERITIES, corrupt, get_corruption, register_corruption, registered_corruptions
from .export import corrupt_image_folder
from .fourier_basis import add_fourier_noise, fourier_basis, fourier_noise
from .frequency_noise import add_band_noise, band_pass_noise
from .occlusion import cutout
from .perturbations import (
    FRAME_COUNTS,
    NOISE_LEVELS,
    PERTURBATIONS,
    TEST_PERTURBATIONS,
    VALIDATION_PERTURBATIONS,
    frame_parameters,
    perturbation_sequence,
)

# The reference's names and order (imagecorruptions `corruption_tuple`): the 15 of ImageNet-C, then the 4 extras
# that Hendrycks & Dietterich hold out for validation (`hf_vitrobust.constants`).
# The corruptions available in this version, in the reference's order.
CORRUPTIONS = tuple(
    name for name in STANDARD_CORRUPTIONS + EXTRA_CORRUPTIONS if name in registered_corruptions()
)

__all__ = [
    "CORRUPTIONS",
    "EXTRA_CORRUPTIONS",
    "FRAME_COUNTS",
    "NOISE_LEVELS",
    "PERTURBATIONS",
    "PROFILES",
    "SEVERITIES",
    "STANDARD_CORRUPTIONS",
    "TEST_PERTURBATIONS",
    "VALIDATION_PERTURBATIONS",
    "add_band_noise",
    "add_fourier_noise",
    "band_pass_noise",
    "corrupt",
    "corrupt_image_folder",
    "cutout",
    "fourier_basis",
    "fourier_noise",
    "frame_parameters",
    "get_corruption",
    "perturbation_sequence",
    "register_corruption",
    "registered_corruptions",
]
