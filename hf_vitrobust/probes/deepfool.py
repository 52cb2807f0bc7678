# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""L2 DeepFool and the DCT energy spectrum of its perturbations (Paul & Chen, AAAI 2022).

DeepFool (Moosavi-Dezfooli, Fawzi & Frossard, CVPR 2016, Algorithm 2) looks for the smallest L2 perturbation that
changes a classifier's decision by linearising it: at the current point x, for each candidate class k it takes
f_k = z_k(x) - z_0(x) (z the logits, 0 the clean top class) and w_k = grad f_k, steps to the nearest linearised
boundary, r = (|f_l| / ||w_l||^2) w_l with l = argmin_k |f_k| / ||w_k||, and repeats until the label changes. The
accumulated perturbation is scaled by (1 + overshoot) so that the last step crosses the boundary.

Paul & Chen ("Vision Transformers are Robust Learners", AAAI 2022, the DeepFool energy-spectrum figure; notebook
`analysis/spectral_decomposition/Disc_Regions.ipynb` of github.com/sayakpaul/robustness-vit) ran foolbox's
`L2DeepFoolAttack(steps=50)` (10 candidate classes, overshoot 0.02) and drew the average energy of the
perturbations in the 2D DCT basis, `10 log10` of the squared coefficients summed over channels and averaged over
images (following Ortiz-Jimenez et al., NeurIPS 2020): they report that a ViT's perturbations spread over a wider
band of frequencies than a CNN's. `deepfool_spectrum(spectrum=...)` chooses how that spectrum is computed:
"orthonormal" (the default) takes the orthonormal DCT of the [0, 1]-pixel perturbations of the correctly classified
images; "paul-chen-notebook" follows the notebook's `compute_avg_energy`: torch_dct's unnormalised `dct_2d` of the
perturbations in their [-1, 1] input space (mean = std = 0.5, so 2 x the pixel perturbations), averaged over every
attacked image (foolbox leaves an image its model already misclassifies unperturbed, and the notebook keeps its
zero perturbation in the mean). The two are not a constant apart: on the same images the notebook spectrum is the
orthonormal one plus 10 log10(16 HW) dB, plus 3.01 dB more on row 0 and on column 0 and 6.02 dB more at the DC
coefficient (the orthonormal DCT-II scales its k = 0 basis vector by sqrt(1 / N) and the others by sqrt(2 / N);
see `spectra`).

The figure has no number to compare. The probe keeps one per attacked image: the share of its perturbation's energy
in the lowest quarter of the DCT frequencies along each axis (`spectra.low_frequency_share`; this band is ours, not
the paper's). The "fig-11-deepfool-spectrum" finding compares that share for a ViT and a BiT.

This implementation follows foolbox 3.3.4's semantics (candidates from the clean logits, the 1e-4 and 1e-8
stabilisers, clipping to the (0, 1) pixel bounds at each step), with two differences that only save time: an image
leaves the batch as soon as it is fooled (foolbox keeps computing every image until all are fooled), and the k - 1
candidate gradients come from one forward pass and k - 1 backward passes (foolbox does a forward and a backward per
candidate). Perturbations live in the Classifier's [0, 1] pixel space (it normalises inside).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
import torch

from ..metrics.intervals import NON_NEGATIVE
from ..models.classifier import Classifier
from .base import (
    DEFAULT_BATCH_SIZE,
    ProbeInputs,
    ProbeResult,
    batch_slices,
    check_batch_size,
    check_eval_classifier,
    check_seed,
    new_axes,
    predict_logits,
    prepare_inputs,
)
from .display import (
    SeriesData,
    as_float_array,
    bounds_at,
    curve_bounds,
    fmt_number_interval,
    fmt_percent_interval,
    map_panels,
)
from .intervals import interval_entry, mean_curve, proportion_curve
from .param_checks import int_at_least, non_negative_number, positive_int
from .per_image import PER_IMAGE, merged_per_image, per_image_of, per_image_record
from .spec import (
    ProbeFigure,
    ProbeFinding,
    ProbeNotApplicable,
    ProbeSpec,
    ProtocolPart,
    register_probe,
    same_setting,
)
from .spectra import SPECTRA, Spectrum, check_spectrum, dct_energy_db, dct_energy_sum, low_frequency_share

if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence

    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

GradientMode = Literal["loop", "vmap"]
_GRADIENT_MODES = ("loop", "vmap")


def _check_attack_params(steps: int, candidates: int, overshoot: float, num_classes: int) -> None:
    if isinstance(steps, bool) or not isinstance(steps, int) or steps < 1:
        raise ValueError(f"steps must be a positive int, got {steps!r}.")
    if isinstance(candidates, bool) or not isinstance(candidates, int) or candidates < 2:
        raise ValueError(
            f"candidates must be an int >= 2 (the clean class and at least one other), got {candidates!r}."
        )
    if num_classes < 2:
        raise ValueError(f"DeepFool needs a classifier with at least 2 classes, got {num_classes}.")
    if not isinstance(overshoot, int | float) or isinstance(overshoot, bool) or not 0 <= overshoot < math.inf:
        raise ValueError(f"overshoot must be a non-negative float, got {overshoot!r}.")


def _candidate_gradients(differences: torch.Tensor, inputs: torch.Tensor, mode: GradientMode) -> torch.Tensor:
    """Gradients (n, k-1, *image) of each column of `differences` (n, k-1) with respect to `inputs` (n, *image).

    Each image's row depends on that image only (the model is in eval mode), so the gradient of a column's sum
    is every image's own gradient. "loop": one backward pass per column, reusing the forward graph; "vmap": the
    k-1 backward passes batched into one with `torch.autograd.grad(..., is_grads_batched=True)`.
    """
    columns = differences.shape[1]
    if mode == "vmap":
        seeds = torch.eye(columns, dtype=differences.dtype, device=differences.device)
        seeds = seeds.unsqueeze(1).expand(columns, *differences.shape).contiguous()
        (grads,) = torch.autograd.grad(differences, inputs, grad_outputs=seeds, is_grads_batched=True)
        return grads.transpose(0, 1)
    grads = [
        torch.autograd.grad(differences[:, j].sum(), inputs, retain_graph=j < columns - 1)[0]
        for j in range(columns)
    ]
    return torch.stack(grads, dim=1)


def _deepfool_batch(
    classifier: Classifier,
    clean: torch.Tensor,
    labels: torch.Tensor,
    classes: torch.Tensor,
    steps: int,
    overshoot: float,
    gradients: GradientMode,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """DeepFool on one batch: (adversarial pixels, success (n,), number of updates (n,))."""
    n = clean.shape[0]
    device = clean.device
    x = clean.clone()
    total = torch.zeros_like(clean)
    success = torch.zeros(n, dtype=torch.bool, device=device)
    iterations = torch.zeros(n, dtype=torch.int64, device=device)
    active = torch.arange(n, device=device)
    rows_shape = (-1,) + (1,) * (clean.ndim - 1)
    for _ in range(steps):
        inputs = x[active].requires_grad_(True)
        with torch.enable_grad():
            logits = classifier(inputs).float()
            fooled = logits.argmax(dim=1) != labels[active]
            success[active[fooled]] = True
            keep = ~fooled
            if not bool(keep.any()):
                active = active[keep]
                break
            # f_k = z_k - z_0 for the candidates k = 1..K-1 (z_0: the clean top class), as foolbox's "logits" loss.
            picked = logits.gather(1, classes[active])
            differences = picked[:, 1:] - picked[:, :1]
            grads = _candidate_gradients(differences, inputs, gradients)
        grads = grads[keep]
        differences = differences.detach()[keep]
        norms = grads.flatten(2).norm(dim=-1)
        distances = differences.abs() / (norms + 1e-8)
        best = distances.argmin(dim=1, keepdim=True)
        distance = distances.gather(1, best).squeeze(1) + 1e-4
        direction = grads[torch.arange(grads.shape[0], device=device), best.squeeze(1)]
        step = (distance / (norms.gather(1, best).squeeze(1) + 1e-8)).view(rows_shape) * direction
        active = active[keep]
        total[active] += step
        x[active] = (clean[active] + (1.0 + overshoot) * total[active]).clamp(0.0, 1.0)
        iterations[active] += 1
    if active.numel():
        with torch.no_grad():
            final = classifier(x[active]).float().argmax(dim=1)
        success[active] = final != labels[active]
    return x, success, iterations


def deepfool(
    classifier: Classifier,
    pixels: torch.Tensor,
    labels: torch.Tensor | None = None,
    *,
    steps: int = 50,
    candidates: int = 10,
    overshoot: float = 0.02,
    batch_size: int = DEFAULT_BATCH_SIZE,
    gradients: GradientMode = "loop",
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Untargeted L2 DeepFool on pixels (N, 3, H, W) in [0, 1]; returns (adversarial pixels, success (N,) bool,
    number of updates (N,)).

    labels: an image counts as fooled when the prediction differs from its label; None means the clean
        prediction (the model's own decision). An image already misclassified is returned unchanged as a success,
        as in foolbox.
    steps: at most this many updates; candidates: the number of top classes of the clean logits considered (the
        clean top class included); overshoot: the accumulated perturbation is scaled by 1 + overshoot.
    gradients: "loop" (one backward pass per candidate on the still-active images; fastest on CPU) or "vmap"
        (the candidates' backward passes batched with `is_grads_batched`).
    """
    check_eval_classifier(classifier)
    check_batch_size(batch_size)
    _check_attack_params(steps, candidates, overshoot, classifier.num_classes)
    if gradients not in _GRADIENT_MODES:
        raise ValueError(f"gradients must be one of {_GRADIENT_MODES}, got {gradients!r}.")
    if not isinstance(pixels, torch.Tensor) or pixels.ndim != 4 or not pixels.is_floating_point():
        raise ValueError("pixels must be a float (N, 3, H, W) tensor in [0, 1].")
    logits = predict_logits(classifier, pixels, batch_size)
    if labels is None:
        labels = logits.argmax(dim=1)
    labels = torch.as_tensor(labels, device=pixels.device, dtype=torch.int64)
    if labels.shape != (pixels.shape[0],):
        raise ValueError(f"labels must have shape ({pixels.shape[0]},), got {tuple(labels.shape)}.")
    k = min(candidates, logits.shape[1])
    # Candidates from the clean logits, best first (foolbox: argsort, then flip).
    classes = logits.argsort(dim=1, descending=True)[:, :k]
    adversarial = torch.empty_like(pixels)
    success = torch.empty(pixels.shape[0], dtype=torch.bool, device=pixels.device)
    iterations = torch.empty(pixels.shape[0], dtype=torch.int64, device=pixels.device)
    for part in batch_slices(pixels.shape[0], batch_size):
        adversarial[part], success[part], iterations[part] = _deepfool_batch(
            classifier, pixels[part], labels[part], classes[part], steps, float(overshoot), gradients
        )
    return adversarial, success, iterations


@dataclass
class DeepFoolResult(ProbeResult):
    """DeepFool perturbations and their DCT energy spectrum.

    perturbations: adversarial minus clean pixels (N, 3, H, W) for every image (zero for images misclassified
        before the attack, the last iterate for images never fooled).
    success: (N,) the adversarial image is misclassified; l2_norms: (N,) L2 norm of each perturbation;
        iterations: (N,) DeepFool updates taken; clean_correct: (N,) the clean image was classified correctly.
    success_rate: fooled fraction of the correctly classified images; mean_l2: mean L2 norm over the correctly
        classified images that were fooled (NaN when none); energy_db: (H, W) 10 log10 of the squared 2D DCT of
        the perturbations, summed over channels and averaged over images (Paul & Chen's spectrum figure), as
        `spectrum` says: "orthonormal", the orthonormal DCT of the pixel perturbations of the correctly
        classified images (NaN when none); "paul-chen-notebook", the unnormalised DCT of 2 x the pixel
        perturbations of every image (see `deepfool_energy_sum`).
    """

    perturbations: torch.Tensor
    success: torch.Tensor
    l2_norms: torch.Tensor
    iterations: torch.Tensor
    clean_correct: torch.Tensor
    labels: torch.Tensor
    success_rate: float
    mean_l2: float
    energy_db: torch.Tensor
    steps: int
    candidates: int
    overshoot: float
    spectrum: str = "orthonormal"

    @classmethod
    def probe_name(cls) -> str:
        return "deepfool_spectrum"

    def plot(self, ax: Axes | None = None) -> Axes:
        """The energy spectrum as a heat map (`draw_deepfool`, the report's panel), DC coefficient at the top left
        (Paul & Chen's DeepFool figure)."""
        ax = new_axes(ax)
        draw_deepfool({"": {"energy_db": self.energy_db.detach().cpu().double()}}, ax=ax)
        ax.set_title(f"DeepFool L2: fooled {self.success_rate:.0%}, mean L2 {self.mean_l2:.3g}")
        return ax


def _spectrum_images(perturbations: torch.Tensor, clean_correct: torch.Tensor, spectrum: str) -> torch.Tensor:
    """The perturbations a spectrum averages: the correctly classified images' ("orthonormal") or all of them."""
    check_spectrum(spectrum)
    return perturbations if spectrum == "paul-chen-notebook" else perturbations[clean_correct]


def deepfool_energy_sum(
    perturbations: torch.Tensor, clean_correct: torch.Tensor, spectrum: Spectrum = "orthonormal"
) -> tuple[torch.Tensor, int]:
    """The DCT energy of a `DeepFoolResult`'s perturbations as a sum, for merging chunks of images.

    Returns (energy (H, W) float64, images): the squared DCT coefficients (`dct_energy_sum` under `spectrum`)
    summed over channels and over the images that `energy_db` averages, and the number of those images:
    "orthonormal", the correctly classified ones; "paul-chen-notebook", all of them. The merged `energy_db` is
    10 log10(sum of energies / sum of images) (NaN when no image).
    """
    chosen = _spectrum_images(perturbations, clean_correct, spectrum)
    return dct_energy_sum(chosen, spectrum=spectrum), int(chosen.shape[0])


def deepfool_spectrum(
    classifier: Classifier,
    images: torch.Tensor | Iterable[Any],
    labels: torch.Tensor | Sequence[int] | None = None,
    *,
    seed: int = 0,
    batch_size: int = DEFAULT_BATCH_SIZE,
    steps: int = 50,
    candidates: int = 10,
    overshoot: float = 0.02,
    limit: int | None = None,
    gradients: GradientMode = "loop",
    spectrum: Spectrum = "orthonormal",
) -> DeepFoolResult:
    """Run L2 DeepFool on every image and measure its success, perturbation norms and DCT energy spectrum.

    images, labels: as `prepare_inputs` (pixels in [0, 1] or a dataset; at most `limit` images). Without labels
        the attack must change the model's clean prediction; with labels, images the model already gets wrong
        count as fooled with a zero perturbation (foolbox's convention) and are left out of `success_rate`,
        `mean_l2` and `energy_db`.
    seed: unused (DeepFool is deterministic), kept for the common probe signature.
    steps, candidates, overshoot: Paul & Chen's (foolbox's defaults) 50, 10 and 0.02.
    gradients: how the candidates' gradients are computed, see `deepfool`.
    spectrum: how `energy_db` is computed, one of ("orthonormal", "paul-chen-notebook"): "orthonormal" (the default) or
        "paul-chen-notebook" (Paul & Chen's notebook: unnormalised DCT, [-1, 1] input space, every image); see the
        module docstring.
    """
    check_seed(seed)
    check_batch_size(batch_size)
    check_eval_classifier(classifier)
    _check_attack_params(steps, candidates, overshoot, classifier.num_classes)
    if gradients not in _GRADIENT_MODES:
        raise ValueError(f"gradients must be one of {_GRADIENT_MODES}, got {gradients!r}.")
    check_spectrum(spectrum)
    inputs = prepare_inputs(classifier, images, labels, limit=limit, require_labels=False)
    clean_predictions = predict_logits(classifier, inputs.pixels, batch_size).argmax(dim=1)
    target = clean_predictions if inputs.labels is None else inputs.labels
    adversarial, success, iterations = deepfool(
        classifier,
        inputs.pixels,
        target,
        steps=steps,
        candidates=candidates,
        overshoot=overshoot,
        batch_size=batch_size,
        gradients=gradients,
    )
    perturbations = adversarial - inputs.pixels
    norms = perturbations.flatten(1).norm(dim=1)
    clean_correct = clean_predictions == target
    fooled = success & clean_correct
    attacked = int(clean_correct.sum())
    success_rate = float(fooled.sum()) / attacked if attacked else math.nan
    averaged = _spectrum_images(perturbations, clean_correct, spectrum)
    if averaged.shape[0]:
        energy_db = dct_energy_db(averaged, spectrum=spectrum).float()
    else:
        energy_db = torch.full(classifier.input_size, math.nan)
    mean_l2 = float(norms[fooled].mean()) if bool(fooled.any()) else math.nan
    return DeepFoolResult(
        perturbations=perturbations.cpu(),
        success=success.cpu(),
        l2_norms=norms.cpu(),
        iterations=iterations.cpu(),
        clean_correct=clean_correct.cpu(),
        labels=target.cpu(),
        success_rate=success_rate,
        mean_l2=mean_l2,
        energy_db=energy_db.cpu(),
        steps=steps,
        candidates=min(candidates, classifier.num_classes),
        overshoot=float(overshoot),
        spectrum=spectrum,
    )


# ------------------------------------------------------------------------------------------------ the probe's spec
# Merge: per-image success, L2 norm, iterations, clean correctness and target are concatenated; the DCT energy
# spectrum is 10 log10 of (the summed squared DCT coefficients) / (the number of images they sum: the correctly
# classified ones for the orthonormal spectrum, all of them for the notebook's), i.e. the same average as the
# one-call probe (`deepfool_energy_sum`). The perturbations themselves (N x 3 x H x W) are not kept. The kept
# per-image records give the intervals over images of the success rate and the mean L2 (none for the spectrum), and
# "per_image" keeps each attacked (clean-correct) image's low-frequency share of its perturbation's energy
# (`spectra.low_frequency_share`), keyed by sample id, in chunk order: what the Fig. 11 finding compares.
def _partial(classifier: Classifier, inputs: ProbeInputs, seed: int, params: dict) -> dict:
    result: DeepFoolResult = deepfool_spectrum(classifier, inputs.pixels, inputs.labels, seed=seed, **params)
    # What the spectrum averages, as a sum over this chunk's images, and how many images it sums.
    energy_sum, energy_images = deepfool_energy_sum(
        result.perturbations, result.clean_correct, result.spectrum
    )
    return {
        "success": result.success.cpu(),
        "l2_norms": result.l2_norms.cpu(),
        "iterations": result.iterations.cpu(),
        "clean_correct": result.clean_correct.cpu(),
        "labels": result.labels.cpu(),
        "energy_sum": energy_sum.cpu(),
        "energy_images": int(energy_images),
        PER_IMAGE: per_image_record(
            inputs.sample_ids[result.clean_correct],
            low_frequency_share=low_frequency_share(result.perturbations[result.clean_correct]),
        ),
        "spectrum": result.spectrum,
        "steps": result.steps,
        "candidates": result.candidates,
        "overshoot": result.overshoot,
    }


def _merge(partials: list) -> dict:
    success = torch.cat([p["success"] for p in partials])
    norms = torch.cat([p["l2_norms"] for p in partials])
    clean_correct = torch.cat([p["clean_correct"] for p in partials])
    fooled = success & clean_correct
    attacked = int(clean_correct.sum())
    energy_sum = sum(p["energy_sum"] for p in partials)
    energy_images = sum(int(p["energy_images"]) for p in partials)
    energy_db = (
        10.0 * torch.log10(energy_sum / energy_images)
        if energy_images
        else torch.full_like(energy_sum, math.nan)
    )
    success_rate = int(fooled.sum()) / attacked if attacked else math.nan
    return {
        "success": success,
        "l2_norms": norms,
        "iterations": torch.cat([p["iterations"] for p in partials]),
        "clean_correct": clean_correct,
        "labels": torch.cat([p["labels"] for p in partials]),
        "success_rate": success_rate,
        "mean_l2": float(norms[fooled].double().mean()) if bool(fooled.any()) else math.nan,
        "energy_db": energy_db,
        "steps": same_setting(partials, "steps"),
        "candidates": same_setting(partials, "candidates"),
        "overshoot": same_setting(partials, "overshoot"),
        "spectrum": same_setting(partials, "spectrum"),
        PER_IMAGE: merged_per_image(partials),
    }


def _applicable(classifier: Classifier, params: dict) -> None:
    if classifier.num_classes < 2:
        raise ProbeNotApplicable("deepfool needs a classifier with at least 2 classes.")


def _intervals(probe: Mapping[str, Any], confidence_level: float) -> dict[str, Any]:
    """From the per-image records the dict keeps: the Wilson interval of the success rate (fooled among the
    attacked, i.e. clean-correct, images) and the Student-t interval of the mean L2 over the fooled images."""
    success = as_float_array(probe.get("success"))
    clean_correct = as_float_array(probe.get("clean_correct"))
    norms = as_float_array(probe.get("l2_norms"))
    if not success.size or success.shape != clean_correct.shape or norms.shape != success.shape:
        return {}
    fooled = (success > 0) & (clean_correct > 0)
    attacked = int((clean_correct > 0).sum())
    chosen = norms[fooled]
    l2_curve = None
    if probe.get("mean_l2") is not None and chosen.size:
        std = float(chosen.std(ddof=1)) if chosen.size > 1 else np.nan
        l2_curve = mean_curve(probe["mean_l2"], std, int(chosen.size), confidence_level, NON_NEGATIVE)
    return interval_entry(
        confidence_level,
        {
            "success_rate": proportion_curve(int(fooled.sum()), attacked, confidence_level),
            "mean_l2": l2_curve,
        },
    )


def _headline(probe: Mapping[str, Any]) -> dict[str, str]:
    success = bounds_at(curve_bounds(probe, "success_rate"))
    l2 = bounds_at(curve_bounds(probe, "mean_l2"))
    return {
        "success rate (%)": fmt_percent_interval(probe.get("success_rate"), *success, 100),
        "mean L2 of the perturbation": fmt_number_interval(probe.get("mean_l2"), *l2),
    }


def _image_count(probe: Mapping[str, Any]) -> int | None:
    # One "success" entry per image.
    return None if probe.get("success") is None else len(probe["success"])


def low_frequency_share_per_image(probe: Mapping[str, Any]) -> tuple[list, np.ndarray]:
    """Each attacked image's share of its perturbation's DCT energy in the lowest quarter of the frequencies along
    each axis (`spectra.low_frequency_share`), from the per-image record; images left unperturbed are dropped. The
    quantity of Paul & Chen's Fig. 11 claim (BiT's perturbations concentrate in low frequencies, ViT's spread)."""
    record = per_image_of(probe)
    if "low_frequency_share" not in record:
        raise LookupError(
            "the deepfool record keeps no low-frequency share (a run made before it was recorded)"
        )
    shares = np.asarray(record["low_frequency_share"], dtype=np.float64)  # None (a zero perturbation): NaN
    kept = np.isfinite(shares)
    return [key for key, keep in zip(record["keys"], kept, strict=True) if keep], shares[kept]


def draw_deepfool(data: SeriesData, ax: Axes | None = None) -> Figure | None:
    """The DCT energy spectrum (dB) of each model's perturbations, one shared colour scale (on `ax`: one model)."""
    return map_panels(
        {key: as_float_array(p.get("energy_db")) for key, p in data.items()},
        "DeepFool perturbation energy spectrum",
        "energy (dB)",
        labels=("horizontal DCT frequency", "vertical DCT frequency"),
        ax=ax,
    )


SPEC = register_probe(
    ProbeSpec(
        name="deepfool",
        value_checks={"steps": positive_int, "candidates": int_at_least(2), "overshoot": non_negative_number},
        probe=deepfool_spectrum,
        result_type=DeepFoolResult,
        selection="random",
        chunk_size=16,
        needs_labels=False,
        partial_fn=_partial,
        merge_fn=_merge,
        applicable_fn=_applicable,
        choices={"spectrum": SPECTRA, "gradients": _GRADIENT_MODES},
        headline=_headline,
        intervals_fn=_intervals,
        image_count=_image_count,
        summary_row="mean L2 of the perturbation",
        findings=(
            ProbeFinding(
                "fig-11-deepfool-spectrum",
                "paul-chen",
                "ViT's DeepFool perturbations spread over the spectrum, BiT's concentrate in low frequencies",
                "Paul & Chen, Fig. 11 (DeepFool DCT spectra; the band is ours; their notebook's ResNet50 panel is the ViT "
                "again, so ViT against BiT)",
                "share (%) of each perturbation's DCT energy in the lowest quarter of the frequencies along each axis",
                -1,
                low_frequency_share_per_image,
                scale=100.0,
                # Disc_Regions.ipynb squashes both models to 224 (transforms.Resize((224, 224))).
                protocol=(
                    ProtocolPart("preprocessing", vit="native-resize", cnn="squash-224"),
                    ProtocolPart("steps"),
                    ProtocolPart("overshoot"),
                    ProtocolPart("candidates"),
                ),
            ),
        ),
        figures={
            "deepfool_spectrum": ProbeFigure(
                draw_deepfool,
                "Energy spectrum (dB) of DeepFool perturbations, 2D DCT, low frequencies at the top left "
                "(same colour scale; Paul & Chen).",
            )
        },
    )
)


__all__ = [
    "SPEC",
    "SPECTRA",
    "DeepFoolResult",
    "deepfool",
    "deepfool_energy_sum",
    "deepfool_spectrum",
    "draw_deepfool",
    "low_frequency_share_per_image",
]
