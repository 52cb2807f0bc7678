# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""hf_vitrobust robustness demo: perturb a photo, compare a model's top-5 predictions, see where it looks.

A Gradio app (Hugging Face Space). Pick a model (the builtin EfficientNet-Lite0, which works offline, or any Hub
image-classification id), upload a photo or pick an example, and apply an ImageNet-C corruption (Hendrycks &
Dietterich 2019), a Cutout occlusion (Paul & Chen 2022) or a Fourier-basis perturbation (Yin et al. 2019). The app
shows the clean and perturbed images the model sees on a slider, both top-5 predictions, and an attention-rollout
(models with self-attention) or Grad-CAM (CNNs) overlay. A second tab takes an occlusion painted over the photo
(gr.ImageEditor) and shows the model's answer on the masked image. A results panel turns the results.json files
shipped in `results/`, and those pushed to the model repos named in VITROBUST_RESULTS_REPOS, into a small
robustness leaderboard.

`build_demo()` builds the UI; `python app.py` launches it (what a Space runs) with its MCP server
(`launch(mcp_server=True)`, at /gradio_api/mcp/): agents see the documented events (analyze,
predict_painted_occlusion, the leaderboard's table) as tools; UI-only events are private. Tests launch
`build_demo()` the same way. The model events take `@gpu` (ZeroGPU's `spaces.GPU` where the `spaces` package is
installed, a no-op elsewhere).
"""

from __future__ import annotations

import os
import re
import sys
import threading
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import gradio as gr
import pandas as pd
import torch
from PIL import Image

from hf_vitrobust.corruptions import CORRUPTIONS
from hf_vitrobust.hub.leaderboard import LEADERBOARD_COLUMNS, Leaderboard, read_leaderboard, sources_from_text
from hf_vitrobust.models import Classifier, load_classifier

APP_DIR = Path(__file__).resolve().parent
# The sibling modules app_*.py import from this folder, also when this file is loaded by its path (tests).
if str(APP_DIR) not in sys.path:
    sys.path.insert(0, str(APP_DIR))

from app_analysis import (  # noqa: E402
    DEFAULT_FOURIER_EPS,
    MAX_FREQUENCY,
    PERTURBATIONS,
    TOP_K,
    explain,
    overlay,
    perturb,
    to_pil,
    top_k,
)
from app_gpu import gpu  # noqa: E402
from app_inputs import (  # noqa: E402
    MAX_FILE_MB,
    MAX_MEGAPIXELS,
    UserError,
    check_megapixels,
    first_line,
    load_upload,
)
from app_painting import mask_for_model, occlude, painted_mask  # noqa: E402

DEFAULT_MODEL = "builtin:efficientnet_lite0"
EXAMPLES_DIR = APP_DIR / "examples"
RESULTS_DIR = APP_DIR / "results"
# Model repos whose pushed results (`results/<run>/results.json`) the leaderboard reads, comma-separated.
RESULTS_REPOS_ENV = "VITROBUST_RESULTS_REPOS"
# More model choices (comma-separated specs: Hub ids, timm specs, local folders), and whether typed local folders load.
MODELS_ENV = "VITROBUST_MODELS"
LOCAL_MODELS_ENV = "VITROBUST_LOCAL_MODELS"
TIMM_LOCAL_DIR = "timm/local-dir:"

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
MAX_CACHED_MODELS = 3
_HUB_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*/[A-Za-z0-9][A-Za-z0-9._-]*$")


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
            reason = first_line(err)
        raise UserError(f"Could not load model {spec!r}: {reason}") from err


# ---------------------------------------------------------------------- leaderboard


def read_board(
    results_dir: str | os.PathLike | None = RESULTS_DIR, repos: Sequence[str] | None = None
) -> Leaderboard:
    """The numbers of the results shipped under `results_dir` and of each of `repos` (Hub model ids, read through
    the Hub API's `.eval_results` and their pushed `results/<run>/results.json`, or local folders; default: the
    VITROBUST_RESULTS_REPOS variable), with the sources that could not be read and why."""
    sources = sources_from_text(os.environ.get(RESULTS_REPOS_ENV)) if repos is None else repos
    return read_leaderboard(sources, results_dir=results_dir)


def leaderboard(
    results_dir: str | os.PathLike | None = RESULTS_DIR, repos: Sequence[str] | None = None
) -> pd.DataFrame:
    """The leaderboard table (`hf_vitrobust.hub.leaderboard.Leaderboard.table`): one row per number, with its
    protocol, ranked only among numbers of the same dataset, task and protocol (`read_board`'s sources)."""
    return read_board(results_dir, repos).table()


def skipped_note(board: Leaderboard) -> str:
    """The sources the leaderboard could not read, and why (empty when all were read)."""
    if not board.skipped:
        return ""
    return f"**Not read ({len(board.skipped)}):**\n" + board.skipped_text()


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

    @gpu
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
        """Perturb a photo and compare an image classifier's top-5 ImageNet predictions on the clean and the perturbed image, with where the model looks (Grad-CAM for CNNs, attention rollout for models with self-attention).

        Args:
            model_spec: the model: "builtin:efficientnet_lite0" (ImageNet-1k, works offline) or a Hub image-classification model id "org/name" (also "timm/<name>", "timm/hf-hub:org/name").
            upload: the photo (JPEG, PNG, WebP, GIF, BMP or TIFF; at most 20 MB and 50 megapixels).
            kind: the perturbation: "corruption" (ImageNet-C), "cutout" (a black square hole) or "fourier" (Fourier-basis noise).
            corruption: with kind "corruption", one of the 19 ImageNet-C names, e.g. "gaussian_noise", "motion_blur", "fog", "brightness", "jpeg_compression"; ignored otherwise.
            severity: with kind "corruption", the severity, an integer 1 (mild) to 5 (strong).
            ratio: with kind "cutout", the fraction of the image area the hole covers, 0.0 to 0.9.
            freq_i: with kind "fourier", the row frequency, an integer from -111 to 111 (at most (side - 1) // 2 of the model's input).
            freq_j: with kind "fourier", the column frequency, an integer from -111 to 111.
            eps: with kind "fourier", the L2 norm of the noise on [0, 1] pixels (15.7 is Yin et al.'s ImageNet value).
            seed: an integer that fixes the random parts (noise, hole position, Fourier signs); the same seed gives the same image.

        Returns:
            the clean and perturbed images as the model sees them (a pair, for an image slider), the top-5 {class: probability} of the clean image, the top-5 of the perturbed image, the clean and perturbed heat-map overlays, and a one-line summary (or "Cannot analyse this: <reason>").
        """
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
                raise UserError(first_line(err)) from err
        except UserError as err:
            gr.Warning(str(err))
            return None, None, None, None, None, f"**Cannot analyse this:** {err}"
        try:
            heat, method = explain(classifier, both)
            overlays = overlay(pixels[0], heat[0]), overlay(perturbed[0], heat[1])
        except (ValueError, RuntimeError, ImportError) as err:  # the predictions stand without the overlay
            overlays, method = (None, None), f"unavailable for this model ({first_line(err)})"
        clean_best, perturbed_best = next(iter(clean_top)), next(iter(perturbed_top))
        status = (
            f"**{classifier.name}** · {what} · top-1 clean: *{clean_best}* ({clean_top[clean_best]:.1%}), "
            f"perturbed: *{perturbed_best}* ({perturbed_top[perturbed_best]:.1%}) · overlay: {method}"
        )
        return (to_pil(pixels[0]), to_pil(perturbed[0])), clean_top, perturbed_top, *overlays, status

    @gpu
    def predict_painted_occlusion(
        model_spec: str | None, editor: dict[str, Image.Image | list[Image.Image] | None] | None
    ) -> tuple[Any, ...]:
        """Occlude the parts of a photo that were painted over, as Cutout does (painted pixels turn black), and compare an image classifier's top-5 ImageNet predictions on the clean and the occluded photo.

        Args:
            model_spec: the model: "builtin:efficientnet_lite0" (ImageNet-1k, works offline) or a Hub image-classification model id "org/name" (also "timm/<name>", "timm/hf-hub:org/name").
            editor: the painted photo, a dict {"background": the photo, "layers": [RGBA images of the photo's size whose non-transparent pixels are the paint], "composite": the photo with the paint on it (not read)}; images at most 20 MB and 50 megapixels.

        Returns:
            the occluded image as the model sees it (black where painted), the fraction of the model's input that is occluded (0 to 1), the top-5 {class: probability} of the clean photo, the top-5 of the occluded photo, and a one-line summary (or "Cannot analyse this: <reason>").
        """
        try:
            editor = editor or {}
            image, layers = editor.get("background"), editor.get("layers") or []
            if image is None:
                raise UserError("Upload a photo first, then paint over what the model should not see.")
            for picture in (image, *layers):
                check_megapixels(picture)
            spec = check_model_spec(model_spec, choices, allow_local=allow_local)
            classifier = cache.get(spec)
            pixels = classifier.preprocess(image)
            try:
                mask = mask_for_model(classifier.preprocessing, painted_mask(layers, image.size))
                if not mask.any():
                    raise UserError("Paint over part of the photo with the brush first.")
                masked = occlude(pixels, mask)
                clean_top, masked_top = top_k(classifier, torch.cat([pixels, masked]))
            except (
                ValueError,
                RuntimeError,
            ) as err:  # a layer of another size, a model that fails on the image
                raise UserError(first_line(err)) from err
        except UserError as err:
            gr.Warning(str(err))
            return None, None, None, None, f"**Cannot analyse this:** {err}"
        fraction = round(float(mask.float().mean()), 4)
        clean_best, masked_best = next(iter(clean_top)), next(iter(masked_top))
        status = (
            f"**{classifier.name}** · painted occlusion of {fraction:.1%} of the input · top-1 clean: "
            f"*{clean_best}* ({clean_top[clean_best]:.1%}), occluded: *{masked_best}* ({masked_top[masked_best]:.1%})"
        )
        return to_pil(masked[0]), fraction, clean_top, masked_top, status

    def show_controls(kind: str) -> tuple[Any, Any, Any]:
        return (
            gr.update(visible=kind == "corruption"),
            gr.update(visible=kind == "cutout"),
            gr.update(visible=kind == "fourier"),
        )

    def robustness_leaderboard() -> tuple[pd.DataFrame, str]:
        """List the robustness numbers this Space knows, each with the protocol it was computed under.

        Reads, again on every call, the `.eval_results` entries and pushed results.json files of the model repos the
        Space lists, and the results shipped with it. Takes no arguments.

        Returns:
            A table with one row per number: model, source (where it was read), dataset id, task, metric, value,
            protocol (the evaluation protocol's parts, e.g. "preprocessing=model-native, class_mask=hendrycks-200";
            "not stated" for entries of other tools), rank (1 is best, computed only among numbers of the same
            dataset, task and protocol; empty where the metric's direction is unknown), run and commit. Compare two
            models only on rows with the same dataset, task and protocol. Also a Markdown note naming the sources
            that could not be read and why (empty when all were read).
        """
        board = read_board(results_dir, results_repos)
        return board.table(), skipped_note(board)

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
                slider = gr.ImageSlider(
                    label="Clean | perturbed, as the model sees them (drag the handle)",
                    type="pil",
                    format="png",
                    elem_id="slider",
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
        with gr.Tab("Paint an occlusion"), gr.Row():
            with gr.Column(scale=1):
                paint_model = gr.Dropdown(
                    choices=choices,
                    value=choices[0],
                    allow_custom_value=True,
                    label="Model",
                    elem_id="paint-model",
                )
                editor = gr.ImageEditor(
                    label="Upload a photo, then paint over what the model should not see",
                    type="pil",
                    format="png",  # lossless layers: every painted pixel stays painted
                    sources=("upload", "clipboard"),
                    layers=False,
                    transforms=(),
                    brush=gr.Brush(default_size=40, colors=["#ff00ff"], color_mode="fixed"),
                    elem_id="editor",
                )
                if examples:
                    gr.Examples(
                        examples=[[str(path)] for path in examples],
                        inputs=[editor],
                        label="Examples",
                        api_name="load_paint_example",
                    )
                paint_run = gr.Button("Occlude and predict", variant="primary", elem_id="paint-apply")
            with gr.Column(scale=1):
                paint_status = gr.Markdown(elem_id="paint-status")
                masked_image = gr.Image(
                    label="Occluded, as the model sees it", type="pil", format="png", elem_id="masked-image"
                )
                masked_fraction = gr.Number(label="Occluded fraction of the input", elem_id="masked-fraction")
                with gr.Row():
                    paint_clean_label = gr.Label(
                        num_top_classes=TOP_K, label="Top-5, clean", elem_id="paint-clean-label"
                    )
                    paint_masked_label = gr.Label(
                        num_top_classes=TOP_K, label="Top-5, occluded", elem_id="paint-masked-label"
                    )
        with gr.Tab("Leaderboard"):
            gr.Markdown(
                "Robustness of evaluated models: the `.eval_results` entries of the model repos named in the Space "
                "variable `VITROBUST_RESULTS_REPOS` (read through the Hub API), the results.json files pushed "
                "there (`results/<run>/results.json`) and those shipped with this Space. One row per number, "
                "with the **protocol** it was computed under (docs/protocols.md's names; *not stated* for "
                "entries of other tools). **rank** compares a number only with numbers of the same dataset, task "
                "and protocol (1 is the best; for errors such as the mCE, the smallest); a number whose metric's "
                "direction is unknown has no rank."
            )
            board = read_board(results_dir, results_repos)
            table = gr.Dataframe(
                value=board.table(),
                headers=list(LEADERBOARD_COLUMNS),
                label="Leaderboard",
                interactive=False,
                elem_id="leaderboard",
            )
            skipped = gr.Markdown(skipped_note(board), elem_id="leaderboard-skipped")
            refresh_button = gr.Button("Refresh", elem_id="refresh")

        kind.change(
            show_controls,
            inputs=[kind],
            outputs=[corruption_controls, cutout_controls, fourier_controls],
            api_name="show_controls",
            api_visibility="private",  # UI only: no tool for agents
        )
        run.click(
            analyze,
            inputs=[model, upload, kind, corruption, severity, ratio, freq_i, freq_j, eps, seed],
            outputs=[
                slider,
                clean_label,
                perturbed_label,
                clean_overlay,
                perturbed_overlay,
                status,
            ],
            api_name="analyze",
        )
        paint_run.click(
            predict_painted_occlusion,
            inputs=[paint_model, editor],
            outputs=[masked_image, masked_fraction, paint_clean_label, paint_masked_label, paint_status],
            api_name="predict_painted_occlusion",
        )
        refresh_button.click(robustness_leaderboard, outputs=[table, skipped], api_name="leaderboard")
    return demo


if __name__ == "__main__":
    build_demo().launch(max_file_size="100mb", mcp_server=True)
