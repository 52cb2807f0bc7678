"""Probes from Paul & Chen (AAAI 2022) and Park & Kim (ICLR 2022), for any `Classifier`.

Every probe takes a `Classifier`, images (float pixels in [0, 1] or a dataset), labels and an explicit seed, and
returns a result dataclass with `.to_dict()` and `.plot(ax=None)`. See `base.py` for the shared contract.

Each probe module also registers its `ProbeSpec` (`spec.py`: how the evaluation runner cuts it into chunks and
merges them, its report rows and its figures) in `PROBES`; importing this package fills the registry, in the order
below.
"""

# isort: off
# The probe modules in registration order: the order of `PROBES`.
from .occlusion import OcclusionResult, occlusion_sweep
from .fourier_heatmap import FourierHeatmapResult, fourier_heatmap
from .deepfool import DeepFoolResult, deepfool, deepfool_spectrum
from .pgd import PGDLossResult, pgd_attack, pgd_loss_progression
from .attention import AttentionMapsResult, attention_maps, attention_rollout
from .gradcam import GradCAMResult, TokenReshape, gradcam
from .hessian import hessian_spectrum, hessian_vector_product
from .features import FeatureFourierResult, FeatureVarianceResult, feature_fourier, feature_variance
from .similarity import FeatureSimilarityResult, MinibatchCKA, feature_similarity, linear_cka
from .frequency_noise import FrequencyNoiseResult, frequency_noise
from .lesion import LesionResult, lesion_study
from .loss_landscape import LossLandscapeResult, loss_landscape

# isort: on
from .base import ProbeInputs, ProbeResult, prepare_inputs
from .hessian_result import HessianSpectrumResult
from .spec import PROBES, ProbeFigure, ProbeNotApplicable, ProbeSpec, get_probe, register_probe
from .spectra import dct2, dct_energy_db

__all__ = [
    "PROBES",
    "AttentionMapsResult",
    "DeepFoolResult",
    "FeatureFourierResult",
    "FeatureSimilarityResult",
    "FeatureVarianceResult",
    "FourierHeatmapResult",
    "FrequencyNoiseResult",
    "GradCAMResult",
    "HessianSpectrumResult",
    "LesionResult",
    "LossLandscapeResult",
    "MinibatchCKA",
    "OcclusionResult",
    "PGDLossResult",
    "ProbeFigure",
    "ProbeInputs",
    "ProbeNotApplicable",
    "ProbeResult",
    "ProbeSpec",
    "TokenReshape",
    "attention_maps",
    "attention_rollout",
    "dct2",
    "dct_energy_db",
    "deepfool",
    "deepfool_spectrum",
    "feature_fourier",
    "feature_similarity",
    "feature_variance",
    "fourier_heatmap",
    "frequency_noise",
    "get_probe",
    "gradcam",
    "hessian_spectrum",
    "hessian_vector_product",
    "lesion_study",
    "linear_cka",
    "loss_landscape",
    "occlusion_sweep",
    "pgd_attack",
    "pgd_loss_progression",
    "prepare_inputs",
    "register_probe",
]
