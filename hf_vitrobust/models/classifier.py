# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""One interface for every image classifier: transformers models, timm models, builtin models, any nn.Module.

A `Classifier` takes float pixels in [0, 1] at its input size and returns logits. Mean/std normalisation
happens inside `forward` (as buffers), so every probe perturbs images in the same pixel space whatever
the model, and the perturbation budgets (an L-inf epsilon of 4/255, a blur sigma) mean the same thing for
a ViT and a CNN. `Preprocessing` turns PIL images of any mode into those pixels exactly as timm's
evaluation transform (and transformers' image processors) would, minus the normalisation.

`load_classifier(spec)` builds one from a transformers folder or Hub id, `timm/<name>`,
`builtin:<name>`, or an in-memory module.
"""

import contextlib
import difflib
import itertools
import math
import os
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any, NamedTuple

import torch
from PIL import Image
from torch import nn
from torchvision.transforms.v2 import functional as TF
from torchvision.transforms.v2.functional import InterpolationMode
from transformers import PreTrainedModel

from .imagenet import IMAGENET_WNIDS, is_imagenet_1k

if TYPE_CHECKING:
    from .residual_units import ResidualSum, ResidualUnit

IMAGENET_DEFAULT_MEAN = (0.485, 0.456, 0.406)
IMAGENET_DEFAULT_STD = (0.229, 0.224, 0.225)

# PIL's integer resampling filters (PIL.Image.Resampling, transformers' PILImageResampling).
_PIL_RESAMPLE_TO_INTERPOLATION = {
    0: "nearest",
    1: "lanczos",
    2: "bilinear",
    3: "bicubic",
    4: "box",
    5: "hamming",
}
_INTERPOLATIONS = {mode.value: mode for mode in InterpolationMode}
# Integer modes are read as 16-bit intensities (PIL opens 16-bit PNG/TIFF as "I;16" or "I").
_SIXTEEN_BIT_MODES = frozenset({"I", "I;16", "I;16L", "I;16B", "I;16N"})
_SIXTEEN_BIT_MAX = 65535.0
_ALPHA_MODES = frozenset({"RGBA", "RGBa", "LA", "La", "PA"})


def _pair(value: int | Sequence[int], what: str) -> tuple[int, int]:
    if isinstance(value, int) and not isinstance(value, bool):
        pair = (value, value)
    elif isinstance(value, Sequence) and len(value) == 2 and all(isinstance(v, int) for v in value):
        pair = (int(value[0]), int(value[1]))
    else:
        raise ValueError(f"{what} must be an int or a (height, width) pair of ints, got {value!r}.")
    if min(pair) <= 0:
        raise ValueError(f"{what} must be positive, got {value!r}.")
    return pair


def _interpolation_name(value: str | InterpolationMode | int) -> str:
    if isinstance(value, InterpolationMode):
        return value.value
    if isinstance(value, int) and not isinstance(value, bool):  # PIL / transformers resample enum
        if value not in _PIL_RESAMPLE_TO_INTERPOLATION:
            raise ValueError(f"Unknown PIL resample filter {value!r}.")
        return _PIL_RESAMPLE_TO_INTERPOLATION[value]
    if isinstance(value, str):
        name = value.lower().replace("_", "-")
        if name in _INTERPOLATIONS:
            return name
    raise ValueError(f"interpolation must be one of {sorted(_INTERPOLATIONS)}, got {value!r}.")


def _to_rgb_or_float(image: Image.Image) -> tuple[Image.Image, float | None]:
    """Bring a PIL image to mode "RGB" (8 bit, scale None) or "F" (one channel, divide by the returned scale)."""
    mode = image.mode
    if mode in _SIXTEEN_BIT_MODES:
        return image.convert("F"), _SIXTEEN_BIT_MAX
    if mode == "F":
        return image, 1.0
    if mode == "La":
        image = image.convert("LA")
    if image.mode in _ALPHA_MODES or "transparency" in image.info:
        rgba = image.convert("RGBA")
        white = Image.new("RGBA", rgba.size, (255, 255, 255, 255))
        return Image.alpha_composite(white, rgba).convert("RGB"), None
    if mode == "RGB":
        return image, None
    try:
        return image.convert("RGB"), None
    except ValueError as err:
        raise ValueError(f"Cannot convert a PIL image of mode {mode!r} to RGB: {err}") from err


@dataclass(frozen=True)
class Preprocessing:
    """How a model sees a PIL image: resize, center crop, then mean/std normalisation.

    Attributes:
        input_size: (height, width) the model takes; an int means square.
        resize_size: resize before the crop, with torchvision's meaning: an int sets the shorter side
            (aspect ratio kept), a (height, width) pair sets both sides (aspect ratio not kept).
        crop_pct: the timm way to say the same: resize so that the crop keeps `crop_pct` of each side
            (shorter side to `floor(input / crop_pct)`, 224 / 0.875 -> 256). Exclusive with `resize_size`;
            with neither, the shorter side is resized to the input size (crop_pct 1.0).
        crop_only: no resize at all, only the center crop to `input_size` (zero-padded where the image is
            smaller, as torchvision's CenterCrop): how the reference scripts read images that were released
            already cropped (ImageNet-C/test.py's `CenterCrop(224)`). Exclusive with `resize_size` and `crop_pct`.
        interpolation: a torchvision `InterpolationMode` value ("bilinear", "bicubic", ...).
        mean, std: per-channel normalisation of pixels in [0, 1], applied inside `Classifier.forward`.

    Image modes: 8-bit modes (1, L, P, RGB, CMYK, YCbCr, ...) convert to RGB and scale by 1/255. Alpha
    (RGBA, LA, PA, palette transparency) is composited on white, so transparent areas read as white
    background rather than whatever colour the hidden pixels hold (timm and transformers drop alpha;
    the two agree wherever alpha is 255). Integer modes I;16 and I are 16-bit intensities scaled by
    1/65535; F is taken as intensities in [0, 1]; values outside [0, 1] are clipped. Grayscale gives
    three equal channels.
    """

    input_size: tuple[int, int] = (224, 224)
    resize_size: int | tuple[int, int] | None = None
    crop_pct: float | None = None
    interpolation: str = "bicubic"
    mean: tuple[float, float, float] = IMAGENET_DEFAULT_MEAN
    std: tuple[float, float, float] = IMAGENET_DEFAULT_STD
    crop_only: bool = False

    def __post_init__(self) -> None:
        input_size = _pair(self.input_size, "input_size")
        object.__setattr__(self, "input_size", input_size)
        if self.resize_size is not None and self.crop_pct is not None:
            raise ValueError("Give either resize_size or crop_pct, not both.")
        if not isinstance(self.crop_only, bool):
            raise ValueError(f"crop_only must be True or False, got {self.crop_only!r}.")
        if self.crop_only and (self.resize_size is not None or self.crop_pct is not None):
            raise ValueError("crop_only means no resize: give neither resize_size nor crop_pct with it.")
        if isinstance(self.resize_size, int) and not isinstance(self.resize_size, bool):
            if self.resize_size < min(input_size):
                raise ValueError(f"resize_size {self.resize_size} is smaller than input_size {input_size}.")
        elif self.resize_size is not None:
            resize = _pair(self.resize_size, "resize_size")
            if resize[0] < input_size[0] or resize[1] < input_size[1]:
                raise ValueError(f"resize_size {resize} is smaller than input_size {input_size}.")
            object.__setattr__(self, "resize_size", resize)
        if self.crop_pct is not None:
            if not 0.0 < float(self.crop_pct) <= 1.0:
                raise ValueError(f"crop_pct must be in (0, 1], got {self.crop_pct!r}.")
            object.__setattr__(self, "crop_pct", float(self.crop_pct))
        object.__setattr__(self, "interpolation", _interpolation_name(self.interpolation))
        for what in ("mean", "std"):
            values = tuple(float(v) for v in getattr(self, what))
            if len(values) != 3:
                raise ValueError(f"{what} must have 3 values (RGB), got {values!r}.")
            object.__setattr__(self, what, values)
        if min(self.std) <= 0:
            raise ValueError(f"std must be positive, got {self.std!r}.")

    @property
    def interpolation_mode(self) -> InterpolationMode:
        return _INTERPOLATIONS[self.interpolation]

    def resize_target(self, height: int, width: int) -> list[int]:
        """The `size` argument of torchvision's resize for an image of this size (one int: shorter side)."""
        if self.resize_size is not None:
            return [self.resize_size] if isinstance(self.resize_size, int) else list(self.resize_size)
        crop_pct = 1.0 if self.crop_pct is None else self.crop_pct
        scale_h, scale_w = (math.floor(side / crop_pct) for side in self.input_size)
        if scale_h == scale_w:
            return [scale_h]
        # Non-square input: scale so that the image covers (scale_h, scale_w), as timm's ResizeKeepRatio.
        ratio = min(height / scale_h, width / scale_w)
        return [round(height / ratio), round(width / ratio)]

    def image_to_tensor(self, image: Image.Image) -> torch.Tensor:
        """One PIL image of any mode -> float32 tensor (3, H, W) in [0, 1] at `input_size` (not normalised)."""
        if not isinstance(image, Image.Image):
            raise TypeError(f"Expected a PIL.Image.Image, got {type(image).__name__}.")
        image.load()
        converted, scale = _to_rgb_or_float(image)
        resized = (
            converted
            if self.crop_only
            else TF.resize(
                converted,
                self.resize_target(converted.height, converted.width),
                interpolation=self.interpolation_mode,
                antialias=True,
            )
        )
        cropped = TF.center_crop(resized, list(self.input_size))
        tensor = TF.pil_to_tensor(cropped)
        if scale is None:
            return TF.to_dtype(tensor, torch.float32, scale=True)
        tensor = (tensor.to(torch.float32) / scale).clamp_(0.0, 1.0)
        return TF.grayscale_to_rgb(tensor)

    def to_tensor(self, images: Image.Image | Sequence[Image.Image]) -> torch.Tensor:
        """PIL images (one or a list) -> float32 batch (N, 3, H, W) in [0, 1]."""
        if isinstance(images, Image.Image):
            images = [images]
        if len(images) == 0:
            raise ValueError("Expected at least one image.")
        return torch.stack([self.image_to_tensor(image) for image in images])

    def normalize(self, pixels: torch.Tensor) -> torch.Tensor:
        """(pixels - mean) / std for a batch (N, 3, H, W) in [0, 1]; what `Classifier.forward` feeds the model."""
        mean = torch.tensor(self.mean, dtype=pixels.dtype, device=pixels.device).view(1, 3, 1, 1)
        std = torch.tensor(self.std, dtype=pixels.dtype, device=pixels.device).view(1, 3, 1, 1)
        return (pixels - mean) / std

    def to_dict(self) -> dict[str, Any]:
        """A JSON-serialisable dict; `Preprocessing(**d)` rebuilds it."""
        return asdict(self)

    @classmethod
    def from_timm(
        cls, data_config: Mapping[str, Any], input_size: tuple[int, int] | None = None
    ) -> "Preprocessing":
        """From `timm.data.resolve_data_config(...)` (input_size, crop_pct, interpolation, mean, std).

        timm's crop modes "center" and "squash" are supported; "border" (pad instead of crop) is not.
        """
        crop_mode = data_config.get("crop_mode", "center") or "center"
        size = tuple(input_size) if input_size is not None else tuple(data_config["input_size"][-2:])
        crop_pct = data_config.get("crop_pct") or 0.875  # timm's default when unset
        interpolation = data_config.get("interpolation") or "bilinear"
        if interpolation == "random":
            interpolation = "bilinear"
        common = {"interpolation": interpolation, "mean": data_config["mean"], "std": data_config["std"]}
        if crop_mode == "center":
            return cls(input_size=size, crop_pct=crop_pct, **common)
        if crop_mode == "squash":
            resize = (math.floor(size[0] / crop_pct), math.floor(size[1] / crop_pct))
            return cls(input_size=size, resize_size=resize, **common)
        raise ValueError(f"timm crop_mode {crop_mode!r} is not supported (use 'center' or 'squash').")

    @classmethod
    def from_image_processor(cls, processor: Any) -> "Preprocessing":
        """From a transformers image processor (ViT, DeiT, BEiT, ConvNext, CLIP-style, ...).

        Handles `size` given as `{"height", "width"}` (resize to exactly that) or `{"shortest_edge"}`
        (shorter side; with ConvNext's `crop_pct`, to `shortest_edge / crop_pct`), followed by the center
        crop when `do_center_crop`. A shortest_edge-only processor without a crop gives non-square outputs;
        here the result is center-cropped to a square of that edge, since a Classifier has one input size. A rescale factor other than 1/255 is folded into mean and std, so the
        model still receives exactly what the processor would give it.
        """
        if isinstance(getattr(processor, "data_config", None), Mapping):
            # transformers' TimmWrapperImageProcessor (a timm model saved as a transformers folder) keeps timm's
            # resolved data config.
            return cls.from_timm(processor.data_config)
        size = getattr(processor, "size", None)
        if size is None:
            raise ValueError(f"{type(processor).__name__} has no `size`; pass preprocessing= explicitly.")
        height, width, shortest = (_size_field(size, key) for key in ("height", "width", "shortest_edge"))
        crop = getattr(processor, "crop_size", None) if getattr(processor, "do_center_crop", False) else None
        crop_size = (_size_field(crop, "height"), _size_field(crop, "width")) if crop is not None else None
        if crop_size is not None and None in crop_size:
            raise ValueError(f"Unsupported crop_size {crop!r} in {type(processor).__name__}.")
        crop_pct = getattr(processor, "crop_pct", None)
        resize_size: int | tuple[int, int]
        if height is not None and width is not None:
            resize_size = (height, width)
            input_size = crop_size or (height, width)
        elif shortest is not None:
            if crop_pct is not None and "ConvNext" in type(processor).__name__ and shortest >= 384:
                resize_size, input_size = (
                    (shortest, shortest),
                    (shortest, shortest),
                )  # ConvNext warps at >= 384
            else:
                resize_size = int(shortest / crop_pct) if crop_pct is not None else shortest
                input_size = crop_size or (shortest, shortest)
        else:
            raise ValueError(
                f"Unsupported size {size!r} in {type(processor).__name__}: expected height/width or "
                "shortest_edge; pass preprocessing= explicitly."
            )
        resample = getattr(processor, "resample", None)
        interpolation = (
            "bilinear"
            if resample is None
            else _interpolation_name(
                resample if isinstance(resample, InterpolationMode | str) else int(resample)
            )
        )
        if getattr(processor, "do_normalize", True):
            mean = tuple(processor.image_mean)
            std = tuple(processor.image_std)
        else:
            mean, std = (0.0, 0.0, 0.0), (1.0, 1.0, 1.0)
        # The processor feeds (x * 255 * factor - mean) / std for pixels x in [0, 1].
        factor = (
            float(getattr(processor, "rescale_factor", 1 / 255))
            if getattr(processor, "do_rescale", True)
            else 1.0
        )
        gain = 255.0 * factor
        if not math.isclose(gain, 1.0, rel_tol=1e-6):
            mean = tuple(m / gain for m in mean)
            std = tuple(s / gain for s in std)
        return cls(
            input_size=input_size, resize_size=resize_size, interpolation=interpolation, mean=mean, std=std
        )


def _size_field(size: Any, key: str) -> int | None:
    value = size.get(key) if isinstance(size, Mapping) else getattr(size, key, None)
    return None if value is None else int(value)


class TopK(NamedTuple):
    """Top-k predictions of a batch: probabilities and class indices (N, k), and the class names."""

    probabilities: torch.Tensor
    indices: torch.Tensor
    labels: list[list[str]]


def _detect_kind(module: nn.Module) -> str:
    if isinstance(module, PreTrainedModel):
        return "transformers"
    if type(module).__module__.startswith("timm."):
        return "timm"
    return "module"


def _first_tensor(output: Any) -> torch.Tensor | None:
    if isinstance(output, torch.Tensor):
        return output
    if isinstance(output, Mapping):
        output = tuple(output.values())
    if isinstance(output, tuple | list):
        for item in output:
            if isinstance(item, torch.Tensor):
                return item
    return None


class Classifier(nn.Module):
    """Any image classifier behind one interface: float pixels in [0, 1] (N, 3, H, W) -> logits (N, classes).

    The wrapped `module` receives `(pixels - mean) / std`; mean and std are buffers, so `.to(device)` moves
    them with the model. Besides `forward`, it exposes intermediate feature maps and, where the
    architecture has them, attention maps, for every backend (transformers, timm, plain modules).

    Args:
        module: the classifier; a transformers `PreTrainedModel` is called as `module(pixel_values=x)`,
            anything else as `module(x)`, and the logits are `output.logits`, the tensor itself, or the first
            tensor of a tuple.
        preprocessing: how PIL images become this model's input.
        id2label: class index -> name; when omitted, `module.config.id2label` or "LABEL_i".
        name: a short display name; spec: how it was loaded (for reports).
    """

    def __init__(
        self,
        module: nn.Module,
        preprocessing: Preprocessing,
        id2label: Mapping[int, str] | None = None,
        name: str | None = None,
        spec: str | None = None,
    ) -> None:
        super().__init__()
        if not isinstance(module, nn.Module):
            raise TypeError(f"module must be a torch.nn.Module, got {type(module).__name__}.")
        if not isinstance(preprocessing, Preprocessing):
            raise TypeError(f"preprocessing must be a Preprocessing, got {type(preprocessing).__name__}.")
        self.module = module
        self.preprocessing = preprocessing
        self.kind = _detect_kind(module)
        self.name = name or type(module).__name__
        self.spec = spec or f"module:{type(module).__name__}"
        first = next(itertools.chain(module.parameters(), module.buffers()), None)
        device = first.device if first is not None else torch.device("cpu")
        mean = torch.tensor(preprocessing.mean, device=device).view(1, 3, 1, 1)
        std = torch.tensor(preprocessing.std, device=device).view(1, 3, 1, 1)
        self.register_buffer("mean", mean, persistent=False)
        self.register_buffer("std", std, persistent=False)
        self._layer_names: list[str] | None = None
        self._has_attention: bool | None = None
        # input size -> whether the model runs at it (`accepts_input_size`)
        self._accepted_sizes: dict[tuple[int, int], bool] = {}
        if id2label is None:
            config_labels = getattr(getattr(module, "config", None), "id2label", None)
            if config_labels:
                id2label = config_labels
            else:
                num_classes = self._infer_num_classes()
                id2label = {i: f"LABEL_{i}" for i in range(num_classes)}
        self.id2label: dict[int, str] = {int(k): str(v) for k, v in id2label.items()}
        if sorted(self.id2label) != list(range(len(self.id2label))):
            raise ValueError("id2label keys must be 0..num_classes-1.")
        self.wnids: list[str] | None = list(IMAGENET_WNIDS) if is_imagenet_1k(self.id2label) else None

    # ------------------------------------------------------------------ basics
    @property
    def num_classes(self) -> int:
        return len(self.id2label)

    @property
    def input_size(self) -> tuple[int, int]:
        return self.preprocessing.input_size

    @property
    def device(self) -> torch.device:
        return self.mean.device

    @property
    def dtype(self) -> torch.dtype:
        """The floating dtype of the wrapped model's parameters (float32 for parameter-free modules)."""
        for param in self.module.parameters():
            if param.is_floating_point():
                return param.dtype
        return torch.float32

    def extra_repr(self) -> str:
        return f"name={self.name!r}, input_size={self.input_size}, num_classes={self.num_classes}"

    def _check_pixels(self, pixels: torch.Tensor) -> None:
        if not isinstance(pixels, torch.Tensor):
            raise TypeError(f"{self.name}: expected a torch.Tensor of pixels, got {type(pixels).__name__}.")
        if pixels.ndim != 4:
            hint = " (add a batch dimension with pixels.unsqueeze(0))" if pixels.ndim == 3 else ""
            raise ValueError(
                f"{self.name}: expected pixels of shape (N, 3, H, W), got {tuple(pixels.shape)}{hint}."
            )
        if pixels.shape[1] != 3:
            raise ValueError(
                f"{self.name}: expected 3 channels (RGB) in dim 1, got shape {tuple(pixels.shape)}."
            )
        if not pixels.is_floating_point():
            raise ValueError(
                f"{self.name}: expected float pixels in [0, 1], got dtype {pixels.dtype} "
                "(use classifier.preprocess(images), or pixels.float() / 255 for uint8)."
            )
        if tuple(pixels.shape[-2:]) != self.input_size:
            raise ValueError(
                f"{self.name}: expected spatial size {self.input_size}, got {tuple(pixels.shape[-2:])} "
                "(use classifier.preprocess(images) to resize and crop)."
            )
        if pixels.device != self.mean.device:
            raise ValueError(
                f"{self.name}: pixels are on {pixels.device} but the model is on {self.mean.device}."
            )

    def _normalize(self, pixels: torch.Tensor) -> torch.Tensor:
        self._check_pixels(pixels)
        return self._normalize_unchecked(pixels)

    def _call(self, inputs: torch.Tensor, **flags: bool) -> Any:
        if self.kind == "transformers":
            return self.module(pixel_values=inputs, **flags)
        return self.module(inputs)

    def _logits(self, output: Any) -> torch.Tensor:
        logits = getattr(output, "logits", None)
        if logits is None:
            logits = _first_tensor(output)
        if logits is None or logits.ndim != 2:
            shape = None if logits is None else tuple(logits.shape)
            raise ValueError(
                f"{self.name}: the model did not return logits of shape (N, classes), got {shape}."
            )
        return logits

    def _dummy_pixels(self) -> torch.Tensor:
        return torch.zeros(1, 3, *self.input_size, device=self.mean.device)

    @contextlib.contextmanager
    def _probing(self) -> Iterator[None]:
        """No gradients and eval mode for a structure-probing forward pass (keeps BatchNorm stats intact)."""
        modes = [(module, module.training) for module in self.module.modules()]
        self.module.eval()
        try:
            with torch.no_grad():
                yield
        finally:
            for module, training in modes:
                module.training = training

    def _infer_num_classes(self) -> int:
        num_classes = getattr(self.module, "num_classes", None)
        if isinstance(num_classes, int) and num_classes > 0:
            return num_classes
        with self._probing():
            return int(self(self._dummy_pixels()).shape[-1])

    def accepts_input_size(self, input_size: tuple[int, int]) -> bool:
        """Whether the wrapped model runs at `input_size` (one forward pass of a blank image, remembered): any size
        for most CNNs, only its own for a ViT with fixed position embeddings."""
        size = _pair(input_size, "input_size")
        if size == self.input_size:
            return True
        known = self._accepted_sizes
        if size not in known:
            try:
                with self._probing():
                    logits = self._logits(
                        self._call(
                            self._normalize_unchecked(torch.zeros(1, 3, *size, device=self.mean.device))
                        )
                    )
                known[size] = logits.shape[-1] == self.num_classes
            except (ValueError, RuntimeError, AssertionError, TypeError, IndexError):
                known[size] = False
        return known[size]

    def with_preprocessing(self, preprocessing: Preprocessing) -> "Classifier":
        """A classifier on the same module (the same weights, not a copy) that reads images with `preprocessing`,
        at its input size: how an evaluation protocol feeds, e.g., the 224-pixel ImageNet-C images to a model
        whose own transform is 448 pixels (Paul & Chen's BiT-M runs). Raises ValueError when the model does not
        run at that size or when `preprocessing` normalises differently (the normalisation belongs to the model).
        """
        if not isinstance(preprocessing, Preprocessing):
            raise TypeError(f"preprocessing must be a Preprocessing, got {type(preprocessing).__name__}.")
        if preprocessing == self.preprocessing:
            return self
        if (preprocessing.mean, preprocessing.std) != (self.preprocessing.mean, self.preprocessing.std):
            raise ValueError(
                f"{self.name}: a protocol may change the geometry of the input, not its normalisation "
                f"(model mean/std {self.preprocessing.mean}/{self.preprocessing.std})."
            )
        if not self.accepts_input_size(preprocessing.input_size):
            raise ValueError(
                f"{self.name} does not run at {preprocessing.input_size[0]}x{preprocessing.input_size[1]} pixels "
                f"(its input size is {self.input_size[0]}x{self.input_size[1]})."
            )
        return Classifier(self.module, preprocessing, id2label=self.id2label, name=self.name, spec=self.spec)

    def _normalize_unchecked(self, pixels: torch.Tensor) -> torch.Tensor:
        return ((pixels - self.mean) / self.std).to(self.dtype)

    def forward(self, pixels: torch.Tensor) -> torch.Tensor:
        """Float pixels in [0, 1], (N, 3, H, W) at `input_size` -> logits (N, num_classes)."""
        return self._logits(self._call(self._normalize(pixels)))

    def preprocess(self, images: Image.Image | Sequence[Image.Image]) -> torch.Tensor:
        """PIL image(s) -> pixels (N, 3, H, W) in [0, 1] on this classifier's device, ready for `forward`."""
        return self.preprocessing.to_tensor(images).to(self.mean.device)

    @torch.no_grad()
    def predict_topk(self, pixels: torch.Tensor, k: int = 5) -> TopK:
        """Softmax probabilities, indices and names of the k most likely classes per image."""
        if not 1 <= k <= self.num_classes:
            raise ValueError(f"k must be in [1, {self.num_classes}], got {k}.")
        probabilities = self(pixels).float().softmax(dim=-1)
        top = probabilities.topk(k, dim=-1)
        labels = [[self.id2label[i] for i in row] for row in top.indices.tolist()]
        return TopK(top.values, top.indices, labels)

    # ------------------------------------------------------------------ feature maps
    def _uses_intermediates(self) -> bool:
        return self.kind == "timm" and callable(getattr(self.module, "forward_intermediates", None))

    def _hook_layer_names(self) -> list[str]:
        feature_info = getattr(self.module, "feature_info", None)
        names = [info["module"] for info in feature_info] if isinstance(feature_info, list) else []
        modules = dict(self.module.named_modules())
        if names and all(isinstance(n, str) and n in modules for n in names):
            return names
        return [name for name, _ in self.module.named_children()]

    def layer_names(self) -> list[str]:
        """Names `feature_maps` returns by default, shallow to deep.

        transformers: "hidden_states.i" (i = 0 is the embedding output, i the output of stage/layer i);
        timm: the `feature_info` module names of `forward_intermediates` ("layer1", "blocks.3", ...);
        other modules: their top-level children. Any name from `module.named_modules()` may also be
        requested; it is then captured with a forward hook.
        """
        if self._layer_names is None:
            if self.kind == "transformers":
                with self._probing():
                    out = self._call(self._normalize(self._dummy_pixels()), output_hidden_states=True)
                hidden = getattr(out, "hidden_states", None) or ()
                self._layer_names = [f"hidden_states.{i}" for i in range(len(hidden))]
            elif self._uses_intermediates():
                with self._probing():
                    inter = self.module.forward_intermediates(
                        self._normalize(self._dummy_pixels()), intermediates_only=True
                    )
                names = self._hook_layer_names() if hasattr(self.module, "feature_info") else []
                if len(names) != len(inter):
                    names = [f"intermediates.{i}" for i in range(len(inter))]
                self._layer_names = names
            else:
                self._layer_names = self._hook_layer_names()
        return list(self._layer_names)

    def feature_maps(
        self, pixels: torch.Tensor, layers: Sequence[str] | None = None
    ) -> dict[str, torch.Tensor]:
        """Intermediate activations by layer name, in network order.

        transformers models: `output_hidden_states` (CNN stages NCHW, ViT tokens (N, tokens, dim));
        timm models: `forward_intermediates` (NCHW, ViT prefix tokens removed); anything else, or any
        `named_modules()` name: forward hooks (the first tensor of the module's output). Gradients flow
        unless the caller disables them.
        """
        if isinstance(layers, str):
            raise TypeError("layers must be a sequence of names, not a single string.")
        default = self.layer_names()
        requested = list(default) if layers is None else list(layers)
        if not requested:
            raise ValueError("layers is empty.")
        if all(name in default for name in requested):
            inputs = self._normalize(pixels)
            if self.kind == "transformers":
                hidden = self._call(inputs, output_hidden_states=True).hidden_states
                return {name: hidden[default.index(name)] for name in default if name in requested}
            if self._uses_intermediates():
                indices = sorted(default.index(name) for name in set(requested))
                outputs = self.module.forward_intermediates(inputs, indices=indices, intermediates_only=True)
                return {default[i]: out for i, out in zip(indices, outputs, strict=True)}
        return self._hooked_feature_maps(pixels, requested)

    def _hooked_feature_maps(self, pixels: torch.Tensor, requested: list[str]) -> dict[str, torch.Tensor]:
        modules = dict(self.module.named_modules())
        unknown = [name for name in requested if name not in modules or name == ""]
        if unknown:
            raise ValueError(
                f"{self.name}: unknown layers {unknown}; available: {self.layer_names()} "
                "(or any name from classifier.module.named_modules())."
            )
        captured: dict[str, torch.Tensor] = {}

        def make_hook(layer: str) -> Callable[..., None]:
            def hook(_module: nn.Module, _args: Any, output: Any) -> None:
                tensor = _first_tensor(output)
                if tensor is not None and layer not in captured:
                    captured[layer] = tensor

            return hook

        handles = [modules[name].register_forward_hook(make_hook(name)) for name in dict.fromkeys(requested)]
        try:
            self(pixels)
        finally:
            for handle in handles:
                handle.remove()
        missing = [name for name in requested if name not in captured]
        if missing:
            raise ValueError(f"{self.name}: layers {missing} produced no tensor output in the forward pass.")
        order = list(modules)
        return {name: captured[name] for name in sorted(captured, key=order.index)}

    # ------------------------------------------------------------------ attention maps
    def _timm_attention_modules(self) -> list[tuple[str, nn.Module]]:
        return [
            (name, module)
            for name, module in self.module.named_modules()
            if isinstance(getattr(module, "fused_attn", None), bool)
            and isinstance(getattr(module, "attn_drop", None), nn.Module)
        ]

    @contextlib.contextmanager
    def _eager_attention(self) -> Iterator[None]:
        """transformers' fused kernels (sdpa, flash) return no attention weights: switch to eager meanwhile."""
        config = getattr(self.module, "config", None)
        current = getattr(config, "_attn_implementation", None)
        switch = current not in (None, "eager") and hasattr(self.module, "set_attn_implementation")
        if switch:
            self.module.set_attn_implementation("eager")
        try:
            yield
        finally:
            if switch:
                self.module.set_attn_implementation(current)

    def _transformers_attentions(self, inputs: torch.Tensor) -> tuple[torch.Tensor, ...]:
        with self._eager_attention():
            try:
                out = self._call(inputs, output_attentions=True)
            except TypeError:
                return ()
        attentions = getattr(out, "attentions", None) or ()
        return tuple(a for a in attentions if isinstance(a, torch.Tensor))

    @property
    def has_attention(self) -> bool:
        """Whether `attention_maps` works for this architecture."""
        if self._has_attention is None:
            if self.kind == "transformers":
                with self._probing():
                    self._has_attention = bool(
                        self._transformers_attentions(self._normalize(self._dummy_pixels()))
                    )
            elif self.kind == "timm":
                self._has_attention = bool(self._timm_attention_modules())
            else:
                self._has_attention = False
        return self._has_attention

    def attention_maps(self, pixels: torch.Tensor) -> dict[str, torch.Tensor]:
        """Softmax attention weights of every attention layer, in network order.

        transformers: `output_attentions` ("attentions.i"; ViT/DeiT (N, heads, tokens, tokens), Swin per
        window, AlterNet (N, windows, heads, area, area)); timm: the softmax input of each attention
        module's `attn_drop` with fused attention switched off for the call ("blocks.i.attn",
        (N, heads, tokens, tokens)). Raises ValueError for models without attention (CNNs).
        """
        if not self.has_attention:
            raise ValueError(
                f"Model {self.name!r} ({type(self.module).__name__}) has no attention maps: it has no "
                "self-attention layers that report their weights."
            )
        inputs = self._normalize(pixels)
        if self.kind == "transformers":
            attentions = self._transformers_attentions(inputs)
            return {f"attentions.{i}": attention for i, attention in enumerate(attentions)}
        attention_modules = self._timm_attention_modules()
        captured: dict[str, torch.Tensor] = {}

        def make_hook(layer: str) -> Callable[..., None]:
            def hook(_module: nn.Module, args: tuple[Any, ...], _output: Any) -> None:
                captured[layer] = args[0]  # the softmax, before dropout

            return hook

        handles = [
            module.attn_drop.register_forward_hook(make_hook(name)) for name, module in attention_modules
        ]
        fused = [module.fused_attn for _, module in attention_modules]
        try:
            for _, module in attention_modules:
                module.fused_attn = False
            self._call(inputs)
        finally:
            for (_, module), was_fused in zip(attention_modules, fused, strict=True):
                module.fused_attn = was_fused
            for handle in handles:
                handle.remove()
        return {name: captured[name] for name, _ in attention_modules if name in captured}

    # ------------------------------------------------------------------ analysis hooks for probes
    def differentiable_attention(self) -> contextlib.AbstractContextManager[None]:
        """A context in which every attention layer computes an explicit softmax(QK^T)V path that supports double
        backward (Hessian-vector products), instead of a fused kernel that may not. See `attention_paths`."""
        from .attention_paths import differentiable_attention

        return differentiable_attention(self.module)

    def residual_units(self) -> list["ResidualUnit"]:
        """The residual units a lesion study can switch off, in network order. See `residual_units`."""
        from .residual_units import find_residual_units

        return find_residual_units(self.module)

    def residual_sums(self) -> list["ResidualSum"]:
        """The embedding and every residual sum (after each attention / MLP / conv residual), in network order.
        See `residual_units.find_residual_sums`."""
        from .residual_units import find_residual_sums

        return find_residual_sums(self.module)

    def residual_sum_maps(self, pixels: torch.Tensor) -> dict[str, torch.Tensor]:
        """The activations at every `residual_sums()` point for `pixels` in [0, 1], by sum name in network order
        (ViT tokens (N, tokens, dim) with their prefix tokens, CNN maps (N, C, H, W)). Gradients flow unless the
        caller disables them."""
        from .residual_units import recording_residual_sums

        sums = self.residual_sums()
        with recording_residual_sums(self.module, sums) as captured:
            self(pixels)
        missing = [s.name for s in sums if s.name not in captured]
        if missing:
            raise ValueError(f"{self.name}: residual sums {missing} were not reached in the forward pass.")
        return {s.name: captured[s.name] for s in sums}

    def lesion(self, units: Sequence[str]) -> contextlib.AbstractContextManager[None]:
        """A context in which the named residual units contribute nothing (their branch outputs zero)."""
        from .residual_units import lesioned

        return lesioned(self.module, units)


# ---------------------------------------------------------------------- loading
_HUB_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*/[A-Za-z0-9][A-Za-z0-9._-]*$")
# from_pretrained keywords that also apply to AutoImageProcessor.
_HUB_KWARGS = (
    "revision",
    "token",
    "cache_dir",
    "local_files_only",
    "trust_remote_code",
    "subfolder",
    "force_download",
)


def _resolve_dtype(dtype: torch.dtype | str | None) -> torch.dtype | None:
    if dtype is None:
        return None
    resolved = getattr(torch, dtype, None) if isinstance(dtype, str) else dtype
    if not isinstance(resolved, torch.dtype) or not resolved.is_floating_point:
        raise ValueError(f"dtype must be a floating torch dtype (or its name), got {dtype!r}.")
    return resolved


def _accepted_forms() -> str:
    from .builtin import list_builtin_models

    return (
        "accepted forms: a local folder saved with save_pretrained (config.json + preprocessor_config.json); "
        "a Hub id 'org/name' of a transformers image-classification model; 'timm/<model_name>' "
        "(timm.create_model); 'builtin:<name>' with name in "
        f"{list_builtin_models()}; or an nn.Module together with preprocessing=Preprocessing(...)."
    )


def _load_transformers(
    spec: str, preprocessing: Preprocessing | None, dtype: torch.dtype | None, kwargs: dict[str, Any]
) -> tuple[nn.Module, Preprocessing]:
    from transformers import AutoImageProcessor, AutoModelForImageClassification

    model_kwargs = dict(kwargs)
    if dtype is not None:
        model_kwargs["dtype"] = dtype
    model = AutoModelForImageClassification.from_pretrained(spec, **model_kwargs)
    if preprocessing is None:
        hub_kwargs = {key: kwargs[key] for key in _HUB_KWARGS if key in kwargs}
        try:
            processor = AutoImageProcessor.from_pretrained(spec, **hub_kwargs)
        except (OSError, ValueError) as err:
            raise ValueError(
                f"Could not load an image processor for {spec!r} ({err}); pass preprocessing=Preprocessing(...)."
            ) from err
        preprocessing = Preprocessing.from_image_processor(processor)
    return model, preprocessing


def _timm_input_size(model: nn.Module, data_config: Mapping[str, Any]) -> tuple[int, int]:
    """A fixed-size timm model (ViT built with img_size=...) takes its patch embedding's size."""
    patch_embed = getattr(model, "patch_embed", None)
    img_size = getattr(patch_embed, "img_size", None)
    dynamic = getattr(model, "dynamic_img_size", False) or getattr(patch_embed, "dynamic_img_size", False)
    if img_size is not None and not dynamic:
        return _pair(tuple(img_size) if not isinstance(img_size, int) else img_size, "img_size")
    return tuple(data_config["input_size"][-2:])


def _timm_id2label(model: nn.Module) -> dict[int, str]:
    from timm.data import ImageNetInfo, infer_imagenet_subset

    num_classes = getattr(model, "num_classes", 0)
    if not num_classes:
        raise ValueError("The timm model has no classifier head (num_classes=0).")
    subset = infer_imagenet_subset(model)
    if subset:
        info = ImageNetInfo(subset)
        if info.num_classes() == num_classes:
            return {i: info.index_to_description(i) for i in range(num_classes)}
    return {i: f"LABEL_{i}" for i in range(num_classes)}


def _load_timm(
    name: str, preprocessing: Preprocessing | None, kwargs: dict[str, Any]
) -> tuple[nn.Module, Preprocessing, dict[int, str]]:
    import timm
    from timm.data import resolve_data_config

    if not name:
        raise ValueError("Empty timm model name; use 'timm/<model_name>', e.g. 'timm/resnet18'.")
    architecture = name.split(".", 1)[0]
    if not timm.is_model(architecture):
        close = difflib.get_close_matches(architecture, timm.list_models(), n=3, cutoff=0.6)
        hint = f" Did you mean {', '.join(repr(f'timm/{c}') for c in close)}?" if close else ""
        raise ValueError(f"Unknown timm model {name!r}.{hint}")
    create_kwargs = dict(kwargs)
    pretrained = bool(create_kwargs.pop("pretrained", True))
    model = timm.create_model(name, pretrained=pretrained, **create_kwargs)
    if preprocessing is None:
        data_config = resolve_data_config({}, model=model)
        preprocessing = Preprocessing.from_timm(data_config, input_size=_timm_input_size(model, data_config))
    return model, preprocessing, _timm_id2label(model)


def load_classifier(
    spec: str | os.PathLike | nn.Module,
    *,
    preprocessing: Preprocessing | None = None,
    id2label: Mapping[int, str] | None = None,
    device: torch.device | str | None = None,
    dtype: torch.dtype | str | None = None,
    name: str | None = None,
    **kwargs: Any,
) -> Classifier:
    """Build a `Classifier` in eval mode from a model spec.

    Args:
        spec: a local folder or Hub id ("org/name") of a transformers image-classification model
            (model via `AutoModelForImageClassification`, preprocessing from its `AutoImageProcessor`);
            "timm/<name>" (`timm.create_model(name, pretrained=kwargs.get("pretrained", True), ...)`,
            preprocessing from timm's data config); "builtin:<name>" (see `list_builtin_models()`); or an
            `nn.Module`, which needs `preprocessing`.
        preprocessing: overrides the derived preprocessing (required for an nn.Module).
        id2label: overrides the class names.
        device, dtype: where and in which floating dtype to put the model.
        name: display name (defaults to the spec).
        **kwargs: passed to `from_pretrained` (transformers), `timm.create_model` (timm, e.g.
            `pretrained=False, num_classes=10`) or the builtin builder.
    """
    if preprocessing is not None and not isinstance(preprocessing, Preprocessing):
        raise TypeError(f"preprocessing must be a Preprocessing, got {type(preprocessing).__name__}.")
    torch_dtype = _resolve_dtype(dtype)
    labels = id2label
    if isinstance(spec, nn.Module):
        if preprocessing is None:
            raise ValueError("An in-memory nn.Module needs preprocessing=Preprocessing(...).")
        if kwargs:
            raise TypeError(f"Unexpected keyword arguments for an in-memory module: {sorted(kwargs)}.")
        module, spec_str = spec, f"module:{type(spec).__name__}"
        if torch_dtype is not None:
            module = module.to(torch_dtype)
    elif isinstance(spec, str | os.PathLike):
        spec_str = os.fspath(spec)
        if spec_str.startswith("builtin:"):
            from .builtin import create_builtin

            built = create_builtin(spec_str.removeprefix("builtin:"), **kwargs)
            module = built.module
            preprocessing = built.preprocessing if preprocessing is None else preprocessing
            labels = built.id2label if labels is None else labels
            if torch_dtype is not None:
                module = module.to(torch_dtype)
        elif spec_str.startswith("timm/"):
            module, derived, timm_labels = _load_timm(spec_str.removeprefix("timm/"), preprocessing, kwargs)
            preprocessing = derived
            labels = timm_labels if labels is None else labels
            if torch_dtype is not None:
                module = module.to(torch_dtype)
        elif os.path.isdir(spec_str) or (_HUB_ID.match(spec_str) and not os.path.exists(spec_str)):
            module, preprocessing = _load_transformers(spec_str, preprocessing, torch_dtype, kwargs)
        else:
            what = (
                "is a file, not a model folder"
                if os.path.isfile(spec_str)
                else "is not a recognised model spec"
            )
            raise ValueError(f"{spec_str!r} {what}; {_accepted_forms()}")
    else:
        raise ValueError(f"Unsupported model spec of type {type(spec).__name__}; {_accepted_forms()}")
    classifier = Classifier(module, preprocessing, id2label=labels, name=name or spec_str, spec=spec_str)
    if device is not None:
        classifier = classifier.to(torch.device(device))
    return classifier.eval()


__all__ = [
    "IMAGENET_DEFAULT_MEAN",
    "IMAGENET_DEFAULT_STD",
    "Classifier",
    "Preprocessing",
    "TopK",
    "load_classifier",
]
