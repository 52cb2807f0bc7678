# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""hf_vitrobust robustness demo: perturb a photo, compare a model's top-5 predictions, see where it looks.

A Gradio app (Hugging Face Space). Pick a model (the builtin EfficientNet-Lite0, which works offline, or any Hub
image-classification id), upload a photo or pick an example, and apply an ImageNet-C corruption (Hendrycks &
Dietterich 2019), a Cutout occlusion (Paul & Chen 2022) or a Fourier-basis perturbation (Yin et al. 2019). The app
shows the clean and perturbed images the model sees, both top-5 predictions, and an attention-rollout (models with
self-attention) or Grad-CAM (CNNs) overlay. A results panel turns the results.json files shipped in `results/`,
and those pushed to the model repos named in VITROBUST_RESULTS_REPOS, into a small robustness leaderboard.

`build_demo()` builds the UI; `python app.py` launches it (what a Space runs).
"""

from __future__ import annotations

import json
import os
import re
import threading
import warnings
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import gradio as gr
import numpy as np
import pandas as pd
import torch
from PIL import Image, ImageOps, UnidentifiedImageError

from hf_vitrobust.corruptions import CORRUPTIONS, corrupt, cutout, fourier_noise
from hf_vitrobust.models import Classifier, load_classifier

APP_DIR = Path(__file__).resolve().parent
DEFAULT_MODEL = "builtin:efficientnet_lite0"
EXAMPLES_DIR = APP_DIR / "examples"
RESULTS_DIR = APP_DIR / "results"
# Model repos whose pushed results (`results/<run>/results.json`) the leaderboard reads, comma-separated.
RESULTS_REPOS_ENV = "VITROBUST_RESULTS_REPOS"
# More model choices (comma-separated specs: Hub ids, timm specs, local folders), and whether typed local folders load.
MODELS_ENV = "VITROBUST_MODELS"
LOCAL_MODELS_ENV = "VITROBUST_LOCAL_MODELS"
TIMM_LOCAL_DIR = "timm/local-dir:"
LEADERBOARD_COLUMNS = ("model", "run", "source", "suite", "commit")

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
MAX_FILE_MB = 20
MAX_MEGAPIXELS = 50
TOP_K = 5
MAX_CACHED_MODELS = 3
# Yin et al. (2019)'s L2 norm of a Fourier-basis perturbation of a 224x224 ImageNet image.
DEFAULT_FOURIER_EPS = 15.7
# Frequencies |i|, |j| <= 111 are distinct at 224x224; larger inputs reach further, smaller ones are checked.
MAX_FREQUENCY = 111

PERTURBATIONS = (
    ("ImageNet-C corruption", "corruption"),
    ("Cutout occlusion", "cutout"),
    ("Fourier-basis noise", "fourier"),
)
_HUB_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*/[A-Za-z0-9][A-Za-z0-9._-]*$")


class UserError(ValueError):
    """A problem with what the user gave (file, model id, settings): shown in the UI, never a crash."""


# ---------------------------------------------------------------------- input validation
def load_upload(path: str | os.PathLike | None) -> Image.Image:
    """The uploaded file as an RGB PIL image, after checking its size, its format and its pixel count.

    Raises UserError with a message for the UI: no file, a file over MAX_FILE_MB, a file PIL cannot read as an
    image, or an image over MAX_MEGAPIXELS (checked from the header, before any pixel is decoded).
    """
    if path is None or str(path) == "":
        raise UserError("Upload an image or pick an example first.")
    path = Path(path)
    if not path.is_file():
        raise UserError("The uploaded file could not be found on the server; please upload it again.")
    size_mb = path.stat().st_size / 1e6
    if size_mb > MAX_FILE_MB:
        raise UserError(f"That file is {size_mb:.1f} MB; this demo takes images up to {MAX_FILE_MB} MB.")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", Image.DecompressionBombWarning)
            image = Image.open(path)
    except Image.DecompressionBombError:
        raise UserError(
            f"That image has far more than {MAX_MEGAPIXELS} megapixels, the limit of this demo."
        ) from None
    except (UnidentifiedImageError, OSError, ValueError):
        raise UserError(
            f"{_display_name(path)} is not an image this demo can read. Upload a photo (JPEG, PNG, WebP, GIF, BMP "
            "or TIFF)."
        ) from None
    with image:  # closes the file, whatever happens
        megapixels = image.width * image.height / 1e6
        if megapixels > MAX_MEGAPIXELS:
            raise UserError(
                f"That image is {image.width}x{image.height} ({megapixels:.0f} megapixels); this demo takes images "
                f"up to {MAX_MEGAPIXELS} megapixels."
            )
        try:
            return ImageOps.exif_transpose(image).convert("RGB")  # phones store the rotation in EXIF
        except (OSError, ValueError, SyntaxError):
            raise UserError(
                f"{_display_name(path)} looks like an image but could not be decoded (truncated or damaged?)."
            ) from None


def _first_line(err: BaseException, limit: int = 300) -> str:
    text = str(err).strip()
    return text.splitlines()[0][:limit] if text else type(err).__name__


def _display_name(path: Path) -> str:
    return f"'{path.name}'" if len(path.name) <= 60 else "That file"


# ---------------------------------------------------------------------- models
class ModelCache:
    """Loaded classifiers by spec, least recently used evicted first; `preloaded` ones are never evicted."""

    def __init__(
        self, preloaded: Mapping[str, Classifier] | None = None, capacity: int = MAX_CACHED_MODELS
    ) -> None:
        self.preloaded = dict(preloaded or {})
        self.capacity = capacity
        self._cache: OrderedDict[str, Classifier] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, spec: str) -> Classifier:
        if spec in self.preloaded:
            return self.preloaded[spec]
        with self._lock:
            if spec in self._cache:
                self._cache.move_to_end(spec)
                return self._cache[spec]
            classifier = _load_model(spec)
            self._cache[spec] = classifier
            while len(self._cache) > self.capacity:
                self._cache.popitem(last=False)
            return classifier


def _local_model_path(spec: str) -> str | None:
    """The folder a spec names on this machine: a path, or timm/local-dir:<path>; None for anything else."""
    path = spec.removeprefix(TIMM_LOCAL_DIR)
    if (
        spec.startswith(TIMM_LOCAL_DIR)
        or os.path.isabs(path)
        or os.path.exists(path)
        or path.startswith((".", "~"))
    ):
        return path
    return None


def check_model_spec(spec: str | None, allowed: Sequence[str], *, allow_local: bool = False) -> str:
    """A model the app offers (`allowed`, local folders included), a builtin model, a Hub id "org/name" (also as
    "timm/<name>" or "timm/hf-hub:org/name"), or, with `allow_local` (VITROBUST_LOCAL_MODELS=1, for an app run on
    one's own machine), a local model folder typed as a path or timm/local-dir:<path>. A public Space leaves
    `allow_local` off: a typed path would read the server's disk."""
    spec = (spec or "").strip()
    if not spec:
        raise UserError("Choose a model, or type a Hub model id such as 'facebook/deit-tiny-patch16-224'.")
    if spec in allowed or spec.startswith("builtin:"):
        return spec
    local = _local_model_path(spec)
    if local is not None:
        if not allow_local:
            raise UserError(
                f"{spec!r} is not a model id but a local path: this app loads local model folders only when started with "
                f"{LOCAL_MODELS_ENV}=1 (on your own machine), or when they are listed in {MODELS_ENV}."
            )
        if not os.path.isdir(os.path.expanduser(local)):
            raise UserError(f"{spec!r}: no such model folder on this machine.")
        return spec
    hub_id = spec.removeprefix("timm/hf-hub:")
    if not _HUB_ID.match(hub_id) or ".." in hub_id:
        raise UserError(
            f"{spec!r} is not a model id. Type a Hub id 'org/name' of an image-classification model, or pick "
            f"{DEFAULT_MODEL}."
        )
    return spec


def models_from_env() -> list[str]:
    """The app's model choices: DEFAULT_MODEL, then the specs listed in VITROBUST_MODELS (comma-separated; Hub
    ids, timm specs, local folders)."""
    listed = [item for item in re.split(r"[\s,]+", os.environ.get(MODELS_ENV, "")) if item]
    return list(dict.fromkeys([DEFAULT_MODEL, *listed]))


def local_models_from_env() -> bool:
    """Whether typed local folders are allowed: VITROBUST_LOCAL_MODELS set to 1 (or true/yes)."""
    return os.environ.get(LOCAL_MODELS_ENV, "").strip().lower() in ("1", "true", "yes")


def _load_model(spec: str) -> Classifier:
    try:
        return load_classifier(spec, device=DEVICE)
    except Exception as err:  # any failure to load becomes a message: offline, unknown id, wrong task, ...
        from huggingface_hub import constants

        if constants.HF_HUB_OFFLINE and not spec.startswith("builtin:") and _local_model_path(spec) is None:
            reason = (
                "this app runs offline (HF_HUB_OFFLINE is set) and the model is not in its cache. "
                f"Use {DEFAULT_MODEL}, which works offline."
            )
        else:
            reason = _first_line(err)
        raise UserError(f"Could not load model {spec!r}: {reason}") from err


# ---------------------------------------------------------------------- perturbations and explanations
def perturb(
    pixels: torch.Tensor,
    kind: str,
    *,
    corruption: str,
    severity: int,
    ratio: float,
    frequency: tuple[int, int],
    eps: float,
    seed: int,
) -> tuple[torch.Tensor, str]:
    """The perturbed pixels (1, 3, H, W) in [0, 1] and a short description of the perturbation."""
    if kind == "corruption":
        if corruption not in CORRUPTIONS:
            raise UserError(f"Unknown corruption {corruption!r}; choose one of {', '.join(CORRUPTIONS)}.")
        description = f"{corruption}, severity {int(severity)}"
        return corrupt(pixels, corruption, int(severity), seed=seed), description
    if kind == "cutout":
        return cutout(pixels, float(ratio), seed=seed), f"Cutout of {float(ratio):.0%} of the image"
    if kind == "fourier":
        limit = (min(pixels.shape[-2:]) - 1) // 2
        if max(abs(frequency[0]), abs(frequency[1])) > limit:
            raise UserError(
                f"Frequencies of a {pixels.shape[-2]}x{pixels.shape[-1]} input go up to {limit} in each direction."
            )
        return fourier_noise(pixels, frequency, float(eps), seed=seed), (
            f"Fourier basis at frequency ({frequency[0]}, {frequency[1]}), L2 norm {float(eps):g}"
        )
    raise UserError(f"Unknown perturbation {kind!r}; choose one of {[value for _, value in PERTURBATIONS]}.")


def explain(classifier: Classifier, pixels: torch.Tensor) -> tuple[torch.Tensor, str]:
    """Maps (N, H, W) in [0, 1]: attention rollout (Abnar & Zuidema 2020) for models with self-attention (AlterNet:
    its MSA maps), else Grad-CAM (Selvaraju et al. 2017) of each image's predicted class."""
    from hf_vitrobust.probes import attention_maps, gradcam

    if classifier.has_attention:
        result = attention_maps(classifier, pixels)
        name = "attention rollout" if result.method == "rollout" else f"attention ({result.method})"
        return result.maps, name
    result = gradcam(classifier, pixels)
    return result.cams, f"Grad-CAM (layer {result.layer})"


def overlay(pixels: torch.Tensor, heat: torch.Tensor, alpha: float = 0.5) -> Image.Image:
    """An image (3, H, W) in [0, 1] blended with a heat map (H, W) in [0, 1] drawn in the jet colour map."""
    from matplotlib import colormaps

    image = pixels.detach().float().cpu().permute(1, 2, 0).clamp(0, 1).numpy()
    colours = colormaps["jet"](heat.detach().float().cpu().clamp(0, 1).numpy())[..., :3]
    blended = (1 - alpha) * image + alpha * colours
    return Image.fromarray((blended * 255).round().astype(np.uint8))


def to_pil(pixels: torch.Tensor) -> Image.Image:
    array = (pixels.detach().float().cpu().clamp(0, 1) * 255).round().to(torch.uint8)
    return Image.fromarray(array.permute(1, 2, 0).numpy())


def top_k(classifier: Classifier, pixels: torch.Tensor, k: int = TOP_K) -> list[dict[str, float]]:
    """Per image, {class name: probability} of the k most likely classes (names made unique for gr.Label)."""
    top = classifier.predict_topk(pixels, k=min(k, classifier.num_classes))
    tables = []
    for names, indices, probabilities in zip(
        top.labels, top.indices.tolist(), top.probabilities.tolist(), strict=True
    ):
        table: dict[str, float] = {}
        for name, index, probability in zip(names, indices, probabilities, strict=True):
            table[name if name not in table else f"{name} ({index})"] = float(probability)
        tables.append(table)
    return tables


# ---------------------------------------------------------------------- leaderboard
# Leaderboard columns in this order when present; other headline numbers follow alphabetically.
_COLUMN_ORDER = (
    re.compile(r"(val|clean).*top-1"),
    re.compile(r"imagenet-c\b.*mCE"),
    re.compile(r"imagenet-c\b.*top-1"),
    re.compile(r"imagenet-a\b"),
    re.compile(r"imagenet-r\b"),
    re.compile(r"imagenet-o\b"),
)


def _column_rank(column: str) -> tuple[int, str]:
    for rank, pattern in enumerate(_COLUMN_ORDER):
        if pattern.search(column):
            return rank, column
    return len(_COLUMN_ORDER), column


def _pushed_repo(repo: str) -> Path | None:
    """A pushed model repo as a folder: a local folder (a staged or downloaded repo) as is, a Hub id downloaded
    (its `results/*/results.json` only); None where it cannot be read (offline, unknown, private)."""
    path = Path(repo).expanduser()
    if path.is_dir():
        return path
    if not _HUB_ID.match(repo):
        return None
    from huggingface_hub import snapshot_download

    try:
        return Path(snapshot_download(repo, allow_patterns=["results/*/results.json"]))
    except (OSError, ValueError):  # the Hub's errors (HTTP, offline, not found) are OSErrors
        return None


def _repos_from_env() -> list[str]:
    return [item for item in re.split(r"[\s,]+", os.environ.get(RESULTS_REPOS_ENV, "")) if item]


def _result_files(results_dir: str | os.PathLike | None, repos: Sequence[str]) -> list[tuple[Path, str, str]]:
    """(results.json, run, source) of the Space's own results and of each pushed model repo."""
    found = []
    root = Path(results_dir) if results_dir is not None else None
    if root is not None and root.is_dir():
        for path in sorted(root.glob("**/results.json")):
            found.append((path, path.parent.name if path.parent != root else "results", "space"))
    for repo in repos:
        folder = _pushed_repo(repo)
        if folder is not None:
            found += [
                (path, path.parent.name, repo) for path in sorted(folder.glob("results/*/results.json"))
            ]
    return found


def leaderboard(
    results_dir: str | os.PathLike | None = RESULTS_DIR, repos: Sequence[str] | None = None
) -> pd.DataFrame:
    """One row per model of every results.json: those shipped with the Space under `results_dir`, and the pushed
    results (`results/<run>/results.json`, as `vitrobust push` stages a model repo) of each of `repos` (model
    repo ids or local folders; default: the ids in the VITROBUST_RESULTS_REPOS variable, comma-separated).

    Columns (LEADERBOARD_COLUMNS, then the headlines): model (its name in results.json), run (the run's folder),
    source ("space", or the repo the results were pushed to), suite, commit (the git commit the run was computed
    with, "unknown" where not recorded), then the run's headline numbers (clean top-1, ImageNet-C mCE,
    ImageNet-A/R top-1, ImageNet-O AUPR, ...: the `summary` the evaluation runner writes). Files that are not
    hf_vitrobust results (or of a newer schema), and repos that cannot be read, are skipped.
    """
    from hf_vitrobust.analysis.results import check_schema

    rows: list[dict[str, Any]] = []
    for path, run, source in _result_files(results_dir, _repos_from_env() if repos is None else repos):
        try:
            results = json.loads(path.read_text(encoding="utf-8"))
            check_schema(results, str(path))
        except (OSError, ValueError, AttributeError):
            continue
        summary = results.get("summary") or {}
        suite = results.get("suite") or {}
        commit = (results.get("provenance") or {}).get("git_commit")
        for model in results.get("models", []):
            row: dict[str, Any] = {
                "model": model.get("name") or model.get("spec") or model.get("key"),
                "run": run,
                "source": source,
                "suite": suite.get("name") if isinstance(suite, Mapping) else None,
                "commit": commit[:12] if isinstance(commit, str) and commit else "unknown",
            }
            for metric, value in (summary.get(model.get("key")) or {}).items():
                row[metric] = float(f"{value:.4g}") if isinstance(value, int | float) else None
            rows.append(row)
    columns = list(LEADERBOARD_COLUMNS)
    metrics = sorted({column for row in rows for column in row} - set(columns), key=_column_rank)
    return pd.DataFrame(rows, columns=columns + metrics)


# ---------------------------------------------------------------------- the app
def build_demo(
    *,
    models: Sequence[str] | None = None,
    classifiers: Mapping[str, Classifier] | None = None,
    examples: Sequence[str | os.PathLike] | None = None,
    results_dir: str | os.PathLike | None = RESULTS_DIR,
    results_repos: Sequence[str] | None = None,
    allow_local: bool | None = None,
) -> gr.Blocks:
    """The demo's UI.

    models: the choices of the model box (the first is the default; default: `models_from_env()`, the builtin
    model and VITROBUST_MODELS); users may also type any Hub id.
    allow_local: whether a typed local model folder (a path, or timm/local-dir:<path>) loads (default:
    VITROBUST_LOCAL_MODELS=1); listed choices load either way.
    classifiers: already loaded classifiers by spec (added to the choices; tests use tiny ones).
    examples: example image paths (default: the JPEGs in `examples/` beside this file).
    results_dir: where the leaderboard finds results.json files (`<run>/results.json`).
    results_repos: pushed model repos (ids or folders) whose `results/<run>/results.json` the leaderboard reads
    (default: the VITROBUST_RESULTS_REPOS variable).
    """
    cache = ModelCache(classifiers)
    models = models_from_env() if models is None else models
    allow_local = local_models_from_env() if allow_local is None else allow_local
    choices = list(dict.fromkeys([*models, *(classifiers or {})]))
    if not choices:
        raise ValueError("build_demo needs at least one model choice.")
    if examples is None:
        examples = sorted(str(p) for p in EXAMPLES_DIR.glob("*.jpg"))

    def analyze(
        model_spec: str | None,
        upload: str | None,
        kind: str,
        corruption: str,
        severity: float,
        ratio: float,
        freq_i: float,
        freq_j: float,
        eps: float,
        seed: float,
    ) -> tuple[Any, ...]:
        try:
            image = load_upload(upload)
            spec = check_model_spec(model_spec, choices, allow_local=allow_local)
            classifier = cache.get(spec)
            pixels = classifier.preprocess(image)
            try:
                perturbed, what = perturb(
                    pixels,
                    kind,
                    corruption=corruption,
                    severity=int(severity),
                    ratio=float(ratio),
                    frequency=(int(freq_i), int(freq_j)),
                    eps=float(eps),
                    seed=int(seed or 0),
                )
                both = torch.cat([pixels, perturbed])
                clean_top, perturbed_top = top_k(classifier, both)
            except (
                ValueError,
                RuntimeError,
            ) as err:  # settings out of range, a model that fails on the image
                raise UserError(_first_line(err)) from err
        except UserError as err:
            gr.Warning(str(err))
            return None, None, None, None, None, None, f"**Cannot analyse this:** {err}"
        try:
            heat, method = explain(classifier, both)
            overlays = overlay(pixels[0], heat[0]), overlay(perturbed[0], heat[1])
        except (ValueError, RuntimeError, ImportError) as err:  # the predictions stand without the overlay
            overlays, method = (None, None), f"unavailable for this model ({_first_line(err)})"
        clean_best, perturbed_best = next(iter(clean_top)), next(iter(perturbed_top))
        status = (
            f"**{classifier.name}** · {what} · top-1 clean: *{clean_best}* ({clean_top[clean_best]:.1%}), "
            f"perturbed: *{perturbed_best}* ({perturbed_top[perturbed_best]:.1%}) · overlay: {method}"
        )
        return (
            to_pil(pixels[0]),
            to_pil(perturbed[0]),
            clean_top,
            perturbed_top,
            *overlays,
            status,
        )

    def show_controls(kind: str) -> tuple[Any, Any, Any]:
        return (
            gr.update(visible=kind == "corruption"),
            gr.update(visible=kind == "cutout"),
            gr.update(visible=kind == "fourier"),
        )

    def refresh() -> pd.DataFrame:
        return leaderboard(results_dir, results_repos)

    with gr.Blocks(title="hf_vitrobust: robustness of vision models") as demo:
        gr.Markdown(
            "# How robust is an image classifier?\n"
            "Perturb a photo with an ImageNet-C corruption, a Cutout hole or Fourier-basis noise, and compare the "
            "model's top-5 predictions and where it looks (attention rollout for ViTs, Grad-CAM for CNNs). "
            "Built with hf_vitrobust, after Paul & Chen (AAAI 2022) and Park & Kim (ICLR 2022)."
        )
        with gr.Tab("Perturb an image"), gr.Row():
            with gr.Column(scale=1):
                model = gr.Dropdown(
                    choices=choices,
                    value=choices[0],
                    allow_custom_value=True,
                    label="Model",
                    info=f"{DEFAULT_MODEL} works offline; or type a Hub id 'org/name' (needs internet)"
                    + (", or a local model folder." if allow_local else "."),
                    elem_id="model",
                )
                upload = gr.File(
                    label=f"Image (JPEG, PNG, WebP, ...; up to {MAX_FILE_MB} MB and {MAX_MEGAPIXELS} megapixels)",
                    file_count="single",
                    type="filepath",
                    elem_id="upload",
                )
                if examples:
                    gr.Examples(
                        examples=[[str(path)] for path in examples],
                        inputs=[upload],
                        label="Examples",
                        api_name="load_example",
                    )
                kind = gr.Radio(
                    choices=list(PERTURBATIONS), value="corruption", label="Perturbation", elem_id="kind"
                )
                with gr.Group(visible=True) as corruption_controls:
                    corruption = gr.Dropdown(
                        choices=list(CORRUPTIONS),
                        value="gaussian_noise",
                        label="Corruption",
                        elem_id="corruption",
                    )
                    severity = gr.Slider(1, 5, value=3, step=1, label="Severity", elem_id="severity")
                with gr.Group(visible=False) as cutout_controls:
                    ratio = gr.Slider(0.0, 0.9, value=0.2, step=0.05, label="Masked fraction of the image")
                with gr.Group(visible=False) as fourier_controls:
                    freq_i = gr.Slider(
                        -MAX_FREQUENCY, MAX_FREQUENCY, value=0, step=1, label="Frequency i (rows)"
                    )
                    freq_j = gr.Slider(
                        -MAX_FREQUENCY, MAX_FREQUENCY, value=20, step=1, label="Frequency j (columns)"
                    )
                    eps = gr.Slider(0.0, 60.0, value=DEFAULT_FOURIER_EPS, step=0.1, label="L2 norm eps")
                seed = gr.Number(value=0, precision=0, label="Seed (noise, hole position, Fourier signs)")
                run = gr.Button("Apply and predict", variant="primary", elem_id="apply")
            with gr.Column(scale=2):
                status = gr.Markdown(elem_id="status")
                with gr.Row():
                    clean_image = gr.Image(
                        label="Clean (as the model sees it)",
                        type="pil",
                        format="png",
                        elem_id="clean-image",
                    )
                    perturbed_image = gr.Image(
                        label="Perturbed", type="pil", format="png", elem_id="perturbed-image"
                    )
                with gr.Row():
                    clean_label = gr.Label(num_top_classes=TOP_K, label="Top-5, clean", elem_id="clean-label")
                    perturbed_label = gr.Label(
                        num_top_classes=TOP_K, label="Top-5, perturbed", elem_id="perturbed-label"
                    )
                with gr.Row():
                    clean_overlay = gr.Image(
                        label="Where it looks, clean", type="pil", format="png", elem_id="overlay-clean"
                    )
                    perturbed_overlay = gr.Image(
                        label="Where it looks, perturbed",
                        type="pil",
                        format="png",
                        elem_id="overlay-perturbed",
                    )
        with gr.Tab("Leaderboard"):
            gr.Markdown(
                "Robustness of evaluated models, from the results.json files of `vitrobust evaluate` runs "
                "shipped with this Space (`results/<run>/results.json`) and pushed to the model repos named in "
                "the Space variable `VITROBUST_RESULTS_REPOS`. Columns: model, run, source (where the results "
                "were pushed), suite, commit (of hf_vitrobust), then the headline numbers."
            )
            table = gr.Dataframe(
                value=leaderboard(results_dir, results_repos),
                label="Leaderboard",
                interactive=False,
                elem_id="leaderboard",
            )
            refresh_button = gr.Button("Refresh", elem_id="refresh")

        kind.change(
            show_controls,
            inputs=[kind],
            outputs=[corruption_controls, cutout_controls, fourier_controls],
            api_name="show_controls",
        )
        run.click(
            analyze,
            inputs=[model, upload, kind, corruption, severity, ratio, freq_i, freq_j, eps, seed],
            outputs=[
                clean_image,
                perturbed_image,
                clean_label,
                perturbed_label,
                clean_overlay,
                perturbed_overlay,
                status,
            ],
            api_name="analyze",
        )
        refresh_button.click(refresh, outputs=[table], api_name="leaderboard")
    return demo


if __name__ == "__main__":
    build_demo().launch(max_file_size="100mb")
