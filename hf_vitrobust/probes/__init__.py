"""Probes from Paul & Chen (AAAI 2022) and Park & Kim (ICLR 2022), for any `Classifier`.

Every probe takes a `Classifier`, images (float pixels in [0, 1] or a dataset), labels and an explicit seed, and
returns a result dataclass with `.to_dict()` and `.plot(ax=None)`. See `base.py` for the shared contract.
"""

from .attention import AttentionMapsResult, attention_maps, attention_rollout
from .base import ProbeInputs, ProbeResult, prepare_inputs
from .deepfool import DeepFoolResult, deepfool, deepfool_spectrum
from .features import FeatureFourierResult, FeatureVarianceResult, feature_fourier, feature_variance
from .fourier_heatmap import FourierHeatmapResult, fourier_heatmap
from .frequency_noise import FrequencyNoiseResult, frequency_noise
from .gradcam import GradCAMResult, TokenReshape, gradcam
from .hessian import HessianSpectrumResult, hessian_spectrum, hessian_vector_product
from .lesion import LesionResult, lesion_study
from .loss_landscape import LossLandscapeResult, loss_landscape
from .occlusion import OcclusionResult, occlusion_sweep
from .pgd import PGDLossResult, pgd_attack, pgd_loss_progression
from .similarity import FeatureSimilarityResult, MinibatchCKA, feature_similarity, linear_cka
from .spectra import dct2, dct_energy_db

__all__ = [
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
    "ProbeInputs",
    "ProbeResult",
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
]
