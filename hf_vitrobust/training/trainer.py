# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""Train a classifier with accelerate and write a transformers checkpoint folder with its model card.

`train(TrainingConfig(...))` runs the same code on one CPU process, under `accelerate launch` on several
processes or GPUs, and in mixed precision. Every epoch ends with an evaluation on the held-out split and a
resumable state in `output_dir/checkpoints/epoch_<k>` (accelerate's `save_state`: model, optimizer, schedule,
scaler). Shuffling and augmentation are reseeded from `(seed, epoch)` at the start of each epoch, so a run
resumed after a kill ends with the same weights as an uninterrupted one.
"""

import contextlib
import json
import math
import shutil
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch
from torch import nn
from torch.utils.data import BatchSampler, DataLoader, Sampler

from ..atomic_files import write_text_atomic
from ..constants import IMAGENET_DEFAULT_MEAN, IMAGENET_DEFAULT_STD
from ..models.preprocessing import Preprocessing
from ..registry import did_you_mean
from .config import DIGITS, TrainingConfig
from .data import TrainingData, inspect_dataset, load_training_data
from .recipe import SAM, MixCriterion, warmup_cosine_schedule

SUMMARY_FILE = "training_summary.json"
CHECKPOINTS_DIR = "checkpoints"
STATE_FILE = "trainer_state.json"
_MIXED_PRECISION = {"fp32": "no", "bf16": "bf16", "fp16": "fp16"}


@dataclass
class TrainingResult:
    """What `train` returns: the checkpoint folder, its summary, and the trained model (eval mode)."""

    output_dir: Path
    summary: dict[str, Any]
    model: nn.Module | None = field(default=None, repr=False)


@dataclass
class BuiltModel:
    """A freshly built model with the preprocessing it trains at and how to save it."""

    model: nn.Module
    preprocessing: Preprocessing
    kind: str  # "alternet", "transformers" or "timm"
    image_processor: Any = None


class EpochSampler(Sampler[int]):
    """A permutation drawn from `seed + epoch` alone, so any epoch's order is known without replaying RNGs.

    The method is `start_epoch`, not `set_epoch`: accelerate calls `set_epoch` with its own count of
    iterations, which restarts at 0 after a resume.
    """

    def __init__(self, num_samples: int, seed: int) -> None:
        self.num_samples = num_samples
        self.seed = seed
        self.epoch = 0

    def start_epoch(self, epoch: int) -> None:
        self.epoch = epoch

    def __len__(self) -> int:
        return self.num_samples

    def __iter__(self) -> Iterator[int]:
        generator = torch.Generator().manual_seed(self.seed * 100_003 + self.epoch)
        return iter(torch.randperm(self.num_samples, generator=generator).tolist())


# --------------------------------------------------------------------------------------------- model building
def build_model(config: TrainingConfig, id2label: Mapping[int, str]) -> BuiltModel:
    """Build the model of `config.model` with a head for `id2label`; raise a ValueError for a bad spec."""
    id2label = {int(k): str(v) for k, v in id2label.items()}
    labels = {
        "num_labels": len(id2label),
        "id2label": id2label,
        "label2id": {v: k for k, v in id2label.items()},
    }
    if len(set(id2label.values())) != len(id2label):
        del labels["label2id"]
    if config.is_alternet_preset:
        return _build_alternet(config, labels)
    if config.model.startswith("timm/"):
        return _build_timm(config, labels)
    return _build_transformers(config, labels)


def _build_alternet(config: TrainingConfig, labels: dict[str, Any]) -> BuiltModel:
    from huggingface_hub.errors import StrictDataclassError

    from ..models import AlterNetConfig, AlterNetForImageClassification
    from ..models.alternet.image_processing_alternet import alternet_image_processor

    overrides = dict(config.model_overrides)
    size = config.resolved_image_size()
    if size is not None:
        overrides["image_size"] = size
    if config.drop_path_rate is not None:
        overrides["drop_path_rate"] = config.drop_path_rate
    try:
        model_config = AlterNetConfig.from_preset(config.model, **overrides, **labels)
    except (TypeError, StrictDataclassError) as err:  # an unknown field; a value of the wrong type (@strict)
        raise ValueError(f"Bad model_overrides for {config.model!r}: {err}") from err
    if "window_sizes" not in config.model_overrides:
        model_config.window_sizes = fit_window_sizes(model_config)
    model = AlterNetForImageClassification(model_config)
    processor = alternet_image_processor(model_config)
    size = model_config.image_size
    preprocessing = Preprocessing(
        input_size=size,
        crop_pct=processor.crop_pct,
        interpolation="bilinear",
        mean=IMAGENET_DEFAULT_MEAN,
        std=IMAGENET_DEFAULT_STD,
    )
    return BuiltModel(model, preprocessing, "alternet", processor)


def fit_window_sizes(model_config: Any) -> list[int]:
    """Attention windows that tile each stage's feature map at `model_config.image_size`.

    A stage whose map is not a multiple of its window gets the largest divisor of the map that is not above
    the window (at 16x16 inputs, alternet-tiny's 2x2 last stage attends over one 2x2 window instead of 4x4).
    """
    side = model_config.image_size
    if model_config.stem_pool:  # 7x7/2 conv, then 3x3/2 max-pool, both padded
        side = math.ceil(math.ceil(side / 2) / 2)
    windows = []
    for stride, window in zip(model_config.strides, model_config.window_sizes, strict=True):
        side = math.ceil(side / stride)
        windows.append(
            window if side % window == 0 else max(d for d in range(1, window + 1) if side % d == 0)
        )
    return windows


def _build_transformers(config: TrainingConfig, labels: dict[str, Any]) -> BuiltModel:
    from transformers import AutoConfig, AutoImageProcessor, AutoModelForImageClassification

    from ..models import AlterNetPreTrainedModel

    if config.image_size is not None:
        raise ValueError(
            "image_size applies to AlterNet presets and timm models; a transformers model trains at its "
            "image processor's size."
        )
    try:
        model_config = AutoConfig.from_pretrained(config.model)
    except (OSError, ValueError) as err:
        raise ValueError(
            f"Cannot load model {config.model!r} as a transformers checkpoint ({err}). Use an AlterNet preset, a "
            "transformers folder or Hub id, or 'timm/<name>'."
        ) from err
    extra: dict[str, Any] = {}
    if config.drop_path_rate is not None:
        if not hasattr(model_config, "drop_path_rate"):
            raise ValueError(
                f"{type(model_config).__name__} has no drop_path_rate (stochastic depth) setting."
            )
        extra["drop_path_rate"] = config.drop_path_rate
    model = AutoModelForImageClassification.from_pretrained(
        config.model, ignore_mismatched_sizes=True, **labels, **extra
    )
    try:
        processor = AutoImageProcessor.from_pretrained(config.model)
    except (OSError, ValueError) as err:
        raise ValueError(f"{config.model!r} has no image processor to train and save with: {err}") from err
    preprocessing = Preprocessing.from_image_processor(processor)
    kind = "alternet" if isinstance(model, AlterNetPreTrainedModel) else "transformers"
    return BuiltModel(model, preprocessing, kind, processor)


def _build_timm(config: TrainingConfig, labels: dict[str, Any]) -> BuiltModel:
    """A timm architecture inside transformers' TimmWrapper, so that it saves as a transformers folder."""
    import timm
    from timm.data import resolve_data_config
    from transformers import TimmWrapperConfig, TimmWrapperForImageClassification

    name = config.model.removeprefix("timm/")
    architecture = name.split(".", 1)[0]
    if not timm.is_model(architecture):
        hint = did_you_mean(
            architecture, timm.list_models(), n=3, display=lambda match: repr(f"timm/{match}")
        )
        raise ValueError(f"Unknown timm model {config.model!r}.{hint}")
    model_args = {} if config.drop_path_rate is None else {"drop_path_rate": config.drop_path_rate}
    if config.pretrained:
        model = TimmWrapperForImageClassification.from_pretrained(
            config.model, ignore_mismatched_sizes=True, model_args=model_args, **labels
        )
    else:
        model = TimmWrapperForImageClassification(
            TimmWrapperConfig(architecture=name, model_args=model_args or None, **labels)
        )
    data_config = resolve_data_config({}, model=model.timm_model)
    size = config.resolved_image_size()
    preprocessing = Preprocessing.from_timm(data_config, input_size=(size, size) if size else None)
    height, width = preprocessing.input_size
    crop_pct = preprocessing.crop_pct if preprocessing.crop_pct is not None else 1.0
    # The saved folder's TimmWrapperImageProcessor reads this from config.json.
    model.config.pretrained_cfg = {
        **dict(getattr(model.timm_model, "pretrained_cfg", {}) or {}),
        "input_size": [3, height, width],
        "crop_pct": crop_pct,
        "crop_mode": "center",
        "interpolation": preprocessing.interpolation,
        "mean": list(preprocessing.mean),
        "std": list(preprocessing.std),
        "num_classes": labels["num_labels"],
    }
    return BuiltModel(model, preprocessing, "timm")


def _check_forward(built: BuiltModel, spec: str) -> None:
    """One eval-mode forward pass at the input size: a layout that cannot take it fails here, not mid-run."""
    height, width = built.preprocessing.input_size
    model = built.model
    training = model.training
    model.eval()
    try:
        with torch.no_grad():
            logits = model(pixel_values=torch.zeros(2, 3, height, width)).logits
    except (RuntimeError, ValueError) as err:
        raise ValueError(f"Model {spec!r} cannot take {height}x{width} inputs: {err}") from err
    finally:
        model.train(training)
    if logits.shape != (2, model.config.num_labels):
        raise ValueError(f"Model {spec!r} returned logits of shape {tuple(logits.shape)}.")


# --------------------------------------------------------------------------------------------- checkpoints
def _checkpoints(output_dir: Path) -> list[tuple[int, Path]]:
    """Completed resumable states, oldest first (a state is complete once its trainer_state.json exists)."""
    root = output_dir / CHECKPOINTS_DIR
    found = []
    if root.is_dir():
        for path in root.iterdir():
            if path.name.startswith("epoch_") and (path / STATE_FILE).is_file():
                with contextlib.suppress(ValueError):
                    found.append((int(path.name.removeprefix("epoch_")), path))
    return sorted(found)


def _atomic_write_json(path: Path, payload: Any) -> None:
    write_text_atomic(path, json.dumps(payload, indent=2, sort_keys=True) + "\n")


def _model_card(summary: Mapping[str, Any]) -> str:
    from ..hub.cards import render_model_card

    return render_model_card(checkpoint=summary)


@contextlib.contextmanager
def _frozen_batchnorm_statistics(model: nn.Module) -> Iterator[None]:
    """Keep BatchNorm running statistics fixed (momentum 0) for SAM's second forward pass at `w + e`."""
    norms = [m for m in model.modules() if isinstance(m, nn.modules.batchnorm._BatchNorm)]
    momenta = [m.momentum for m in norms]
    for module in norms:
        module.momentum = 0.0
    try:
        yield
    finally:
        for module, momentum in zip(norms, momenta, strict=True):
            module.momentum = momentum


# --------------------------------------------------------------------------------------------- training
def train(
    config: TrainingConfig,
    *,
    callback: Callable[[dict[str, Any]], None] | None = None,
    log: Callable[[str], None] | None = print,
) -> TrainingResult:
    """Train `config.model` on `config.dataset` and write the checkpoint folder `config.output_dir`.

    Args:
        config: the run; see `TrainingConfig`.
        callback: called on every process after each epoch's evaluation and checkpoint with that epoch's
            record (`{"epoch", "train_loss", "eval_accuracy", "seconds", "lr"}`); an exception raised there
            stops the run, which `resume=True` can continue.
        log: one-line progress messages (main process only); None silences them.

    Returns:
        the output folder, the summary written to `training_summary.json`, and the trained model.
    """
    from accelerate import Accelerator
    from accelerate.state import AcceleratorState

    started = time.perf_counter()
    config.validate()
    output_dir = Path(config.output_dir)
    if config.resume and not _checkpoints(output_dir):
        raise ValueError(f"resume=True but {output_dir / CHECKPOINTS_DIR} holds no completed epoch state.")

    accelerator = Accelerator(mixed_precision=_MIXED_PRECISION[config.precision])
    threads = torch.get_num_threads()
    try:
        if config.num_threads is not None:
            torch.set_num_threads(config.num_threads)
        return _run(config, accelerator, output_dir, started, callback, log)
    finally:
        torch.set_num_threads(threads)
        accelerator.free_memory()
        # The precision lives in accelerate's process-wide state: drop it (not the process group), so that a
        # later train() in the same process may use another precision.
        AcceleratorState._reset_state(reset_partial_state=False)


def _run(
    config: TrainingConfig,
    accelerator: Any,
    output_dir: Path,
    started: float,
    callback: Callable[[dict[str, Any]], None] | None,
    log: Callable[[str], None] | None,
) -> TrainingResult:
    from accelerate.utils import set_seed

    say = log if (log is not None and accelerator.is_main_process) else (lambda _message: None)

    # Everything that can be wrong with the config fails here, before the first step.
    inspected = None
    if config.dataset != DIGITS:
        with accelerator.main_process_first():
            inspected = inspect_dataset(config)
    id2label = {i: str(i) for i in range(10)} if inspected is None else inspected[2]
    set_seed(config.seed)
    built = build_model(config, id2label)
    _check_forward(built, config.model)
    data = load_training_data(config, built.preprocessing, inspected)
    mix = MixCriterion(
        data.num_labels,
        mixup_alpha=config.mixup_alpha,
        cutmix_alpha=config.cutmix_alpha,
        prob=config.mixup_prob,
        switch_prob=config.mixup_switch_prob,
        label_smoothing=config.label_smoothing,
    )
    drop_last = mix.mixes and len(data.train) > config.batch_size
    if mix.mixes and config.batch_size % 2:
        raise ValueError(f"mixup/cutmix need an even batch_size, got {config.batch_size}.")
    sampler = EpochSampler(len(data.train), config.seed)
    train_loader = DataLoader(
        data.train,
        batch_sampler=BatchSampler(sampler, config.batch_size, drop_last=drop_last),
        num_workers=config.num_workers,
    )
    eval_loader = DataLoader(
        data.eval, batch_size=config.eval_batch_size or 2 * config.batch_size, num_workers=config.num_workers
    )
    steps_per_epoch = len(train_loader)
    if steps_per_epoch == 0:
        raise ValueError(f"The train split has {len(data.train)} samples, fewer than one batch.")
    total_steps = steps_per_epoch * config.epochs
    warmup = (
        config.warmup_steps
        if config.warmup_steps is not None
        else round(config.warmup_epochs * steps_per_epoch)
    )
    warmup = min(warmup, total_steps - 1)

    model = built.model
    optimizer = torch.optim.AdamW(model.parameters(), lr=config.lr, weight_decay=config.weight_decay)
    scheduler = warmup_cosine_schedule(optimizer, warmup, total_steps, config.min_lr / config.lr)
    model, optimizer, train_loader, eval_loader, scheduler = accelerator.prepare(
        model, optimizer, train_loader, eval_loader, scheduler
    )
    sam = SAM(optimizer, rho=config.sam_rho) if config.sam else None

    start_epoch, history = 0, []
    if not config.resume and accelerator.is_main_process:
        # States of an earlier run in this folder must not be mistaken for this run's by a later resume.
        shutil.rmtree(output_dir / CHECKPOINTS_DIR, ignore_errors=True)
    if config.resume:
        epoch, path = _checkpoints(output_dir)[-1]
        accelerator.load_state(str(path))
        state = json.loads((path / STATE_FILE).read_text())
        changed = sorted(
            key
            for key, value in _resumable_settings(config).items()
            if key in state.get("config", {}) and state["config"][key] != value
        )
        if changed:
            before = ", ".join(f"{key}={state['config'][key]!r}" for key in changed)
            raise ValueError(
                f"Cannot resume from {path}: {', '.join(changed)} differ from the interrupted run ({before})."
            )
        start_epoch, history = int(state["epoch"]), list(state["history"])
        if start_epoch > config.epochs:
            raise ValueError(f"The state in {path} is past epoch {start_epoch}; epochs is {config.epochs}.")
        say(f"resumed from {path} (epoch {epoch})")
    say(
        f"training {config.model} on {data.name}: {len(data.train)} train / {len(data.eval)} eval images, "
        f"{config.epochs} epochs of {steps_per_epoch} steps, {accelerator.num_processes} process(es), "
        f"{config.precision}"
    )

    def forward_loss(pixels: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        return mix(model(pixel_values=pixels).logits, targets)

    for epoch in range(start_epoch, config.epochs):
        epoch_started = time.perf_counter()
        sampler.start_epoch(epoch)
        # Augmentation, mixup and stochastic depth draw from the global RNGs: reseed them per epoch and process.
        set_seed(config.seed * 100_003 + epoch, device_specific=True)
        model.train()
        loss_sum = torch.zeros((), device=accelerator.device)
        batches = 0
        for pixels, labels in train_loader:
            pixels, targets = mix.mix(pixels, labels)
            loss = forward_loss(pixels, targets)
            accelerator.backward(loss)
            if sam is not None:
                sam.first_step(zero_grad=True)
                with _frozen_batchnorm_statistics(model):
                    accelerator.backward(forward_loss(pixels, targets))
                sam.restore()
            if config.grad_clip and accelerator.sync_gradients:
                accelerator.clip_grad_norm_(model.parameters(), config.grad_clip)
            optimizer.step()
            scheduler.step()
            optimizer.zero_grad(set_to_none=True)
            loss_sum += loss.detach().float()
            batches += 1
        train_loss = float(accelerator.reduce(loss_sum / max(batches, 1), reduction="mean"))
        if not math.isfinite(train_loss):
            raise FloatingPointError(f"The training loss became {train_loss} in epoch {epoch + 1}; lower lr.")
        accuracy = evaluate_accuracy(model, eval_loader, accelerator)
        record = {
            "epoch": epoch + 1,
            "train_loss": round(train_loss, 6),
            "eval_accuracy": round(accuracy, 6),
            "seconds": round(time.perf_counter() - epoch_started, 3),
            "lr": optimizer.param_groups[0]["lr"],
        }
        history.append(record)
        _save_epoch_state(accelerator, output_dir, epoch + 1, history, _resumable_settings(config))
        say(
            f"epoch {epoch + 1}/{config.epochs}: train loss {train_loss:.4f}, eval accuracy {accuracy:.4f} "
            f"({record['seconds']:.1f} s)"
        )
        if callback is not None:
            callback(dict(record))

    accelerator.wait_for_everyone()
    model = accelerator.unwrap_model(model, keep_fp32_wrapper=False).eval()
    summary = _summary(config, built, data, history, time.perf_counter() - started)
    if accelerator.is_main_process:
        _write_checkpoint(output_dir, model, built, summary)
        if not config.keep_checkpoints:
            shutil.rmtree(output_dir / CHECKPOINTS_DIR, ignore_errors=True)
        say(
            f"wrote {output_dir} (eval accuracy {summary['eval_accuracy']:.4f}, {summary['wall_seconds']:.1f} s)"
        )
    accelerator.wait_for_everyone()
    return TrainingResult(output_dir=output_dir, summary=summary, model=model)


@torch.no_grad()
def evaluate_accuracy(model: nn.Module, loader: DataLoader, accelerator: Any) -> float:
    """Top-1 accuracy over the whole (possibly sharded) eval loader, each sample counted once."""
    model.eval()
    correct = total = 0
    for pixels, labels in loader:
        predictions = model(pixel_values=pixels).logits.argmax(dim=-1)
        predictions, labels = accelerator.gather_for_metrics((predictions, labels))
        correct += int((predictions == labels).sum())
        total += int(labels.numel())
    model.train()
    return correct / max(total, 1)


def _resumable_settings(config: TrainingConfig) -> dict[str, Any]:
    """The settings a resumed run must share with the interrupted one (epochs may grow, paths may move)."""
    free = {"epochs", "output_dir", "resume", "keep_checkpoints", "num_workers", "num_threads"}
    return {key: value for key, value in config.to_dict().items() if key not in free}


def _save_epoch_state(
    accelerator: Any, output_dir: Path, epoch: int, history: list[dict[str, Any]], settings: dict[str, Any]
) -> None:
    """accelerate's save_state into epoch_<k>, made complete by trainer_state.json; older states removed."""
    root = output_dir / CHECKPOINTS_DIR
    path = root / f"epoch_{epoch}"
    if accelerator.is_main_process:
        root.mkdir(parents=True, exist_ok=True)
        if path.exists():
            shutil.rmtree(path)
    accelerator.wait_for_everyone()
    accelerator.save_state(str(path))
    accelerator.wait_for_everyone()
    if accelerator.is_main_process:
        _atomic_write_json(path / STATE_FILE, {"epoch": epoch, "history": history, "config": settings})
        for older, older_path in _checkpoints(output_dir):
            if older != epoch:
                shutil.rmtree(older_path, ignore_errors=True)
    accelerator.wait_for_everyone()


def _summary(
    config: TrainingConfig,
    built: BuiltModel,
    data: TrainingData,
    history: list[dict[str, Any]],
    seconds: float,
) -> dict[str, Any]:
    from .. import __version__

    model_config = built.model.config
    architectures = getattr(model_config, "architectures", None) or [type(built.model).__name__]
    recipe = config.recipe()
    if recipe["drop_path_rate"] is None:  # record the rate the model actually trained with
        args = getattr(model_config, "model_args", None) or {}
        recipe["drop_path_rate"] = getattr(model_config, "drop_path_rate", args.get("drop_path_rate"))
    return {
        "architecture": architectures[0],
        "model_type": model_config.model_type,
        "model": config.model,
        "preset": config.model if config.is_alternet_preset else None,
        "num_labels": data.num_labels,
        "id2label": {str(k): v for k, v in data.id2label.items()},
        "dataset": data.name,
        "eval_split": data.eval_split,
        "num_train_samples": len(data.train),
        "num_eval_samples": len(data.eval),
        "image_size": list(built.preprocessing.input_size),
        # The evaluation preprocessing, so that a push can add the image processor from this record alone.
        "preprocessing": {
            "input_size": list(built.preprocessing.input_size),
            "crop_pct": built.preprocessing.crop_pct,
            "interpolation": built.preprocessing.interpolation,
            "mean": list(built.preprocessing.mean),
            "std": list(built.preprocessing.std),
        },
        "num_parameters": sum(p.numel() for p in built.model.parameters()),
        "recipe": recipe,
        "epochs": config.epochs,
        "history": history,
        "eval_accuracy": history[-1]["eval_accuracy"] if history else None,
        "wall_seconds": round(seconds, 3),
        "hf_vitrobust_version": __version__,
    }


def _write_checkpoint(output_dir: Path, model: nn.Module, built: BuiltModel, summary: dict[str, Any]) -> None:
    output_dir.mkdir(parents=True, exist_ok=True)
    if built.kind == "alternet":
        from ..models.alternet.saving import save_alternet

        save_alternet(model, output_dir, built.image_processor, remote_code=True)
    else:
        model.save_pretrained(output_dir, safe_serialization=True)
        if built.image_processor is not None:
            built.image_processor.save_pretrained(output_dir)
    _atomic_write_json(output_dir / SUMMARY_FILE, summary)
    (output_dir / "README.md").write_text(_model_card(summary))


__all__ = ["BuiltModel", "EpochSampler", "TrainingResult", "build_model", "evaluate_accuracy", "train"]
