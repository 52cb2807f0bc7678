# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""How a model sees a PIL image: `Preprocessing` (resize, center crop, mean/std) and its readers of timm data configs
and transformers image processors.

`Preprocessing` turns PIL images of any mode into float pixels in [0, 1] exactly as timm's evaluation transform (and
transformers' image processors) would, minus the normalisation, which `Classifier.forward` applies (see
`classifier.py`).
"""

import math
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
import torch
from PIL import Image
from torchvision.transforms.v2 import functional as TF
from torchvision.transforms.v2.functional import InterpolationMode

from ..constants import IMAGENET_DEFAULT_MEAN, IMAGENET_DEFAULT_STD

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
#: How an 8-bit resize comes back to 8 bits (`Preprocessing.quantize`).
QUANTIZE_MODES = ("opencv", "truncate")


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


def _pixels(image: Image.Image, scale: float | None) -> torch.Tensor:
    """An image from `_to_rgb_or_float` -> float32 (3, H, W) in [0, 1]."""
    tensor = TF.pil_to_tensor(image)
    if scale is None:
        return TF.to_dtype(tensor, torch.float32, scale=True)
    tensor = (tensor.to(torch.float32) / scale).clamp_(0.0, 1.0)
    return TF.grayscale_to_rgb(tensor)


def _output_size(target: Sequence[int], image: Image.Image) -> tuple[int, int]:
    """torchvision's resize size -> (height, width): one int sets the shorter side, the longer one truncated."""
    if len(target) == 2:
        return int(target[0]), int(target[1])
    short, long = sorted((image.height, image.width))
    new_short, new_long = int(target[0]), int(target[0] * long / short)
    return (new_short, new_long) if image.height <= image.width else (new_long, new_short)


def tf_bilinear_resize(pixels: torch.Tensor, size: tuple[int, int]) -> torch.Tensor:
    """TensorFlow 2's `tf.image.resize(pixels, size, method="bilinear")` (antialias off, the default): each output
    pixel i reads the input at (i + 0.5) * in / out - 0.5 (half-pixel centres; clamped at the borders) and
    interpolates its two neighbours per axis, so shrinking skips pixels instead of averaging them. Float in, float
    out, nothing rounded. `pixels`: (C, H, W) or (N, C, H, W)."""
    batch = pixels.unsqueeze(0) if pixels.dim() == 3 else pixels
    resized = torch.nn.functional.interpolate(
        batch.float(), size=tuple(size), mode="bilinear", align_corners=False, antialias=False
    )
    return resized[0] if pixels.dim() == 3 else resized


def uint8_resize(image: Image.Image, size: tuple[int, int], quantize: str) -> torch.Tensor:
    """An 8-bit RGB image resized to `size` (height, width) and kept on 8 bits, as Paul & Chen's Cutout notebooks
    resized before the hole -> float32 (3, H, W) in [0, 1], multiples of 1/255. "opencv": `cv2.resize(...,
    INTER_LINEAR)` of the uint8 array itself (albumentations' `A.Resize`; OpenCV's fixed-point result, rounded).
    "truncate": TensorFlow's bilinear (`tf_bilinear_resize`) of the 0-255 values, cast to uint8 by truncation
    (`tf.cast(tf.image.resize(uint8_image, size), tf.uint8)`)."""
    height, width = size
    if quantize == "opencv":
        import cv2

        resized = cv2.resize(np.asarray(image), (width, height), interpolation=cv2.INTER_LINEAR)
        return TF.to_dtype(torch.from_numpy(resized).permute(2, 0, 1), torch.float32, scale=True)
    if quantize == "truncate":
        resized = tf_bilinear_resize(TF.pil_to_tensor(image).float(), size)
        return resized.clamp_(0.0, 255.0).trunc_() / 255.0
    raise ValueError(f"quantize must be one of {QUANTIZE_MODES}, got {quantize!r}.")


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
        antialias: True (the default): PIL's resize, which low-pass filters when it shrinks (timm, transformers).
            False: TensorFlow's `tf.image.resize(..., method="bilinear")` as Paul & Chen's notebooks ran it: half-pixel
            centres, no antialiasing, the float result not rounded to 8 bits (`tf_bilinear_resize`); bilinear only.
        quantize: None (the default): the resize's float result. With antialias=False, how an 8-bit image is resized
            and kept on 8 bits, as Paul & Chen's Cutout notebooks did before the hole (`uint8_resize`): "opencv"
            (OpenCV's INTER_LINEAR on the uint8 array, rounded: albumentations' Resize, CutOut_ViT) or "truncate"
            (TensorFlow's bilinear cast to uint8, truncated: CutOut_BiT). 8-bit images only.
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
    antialias: bool = True
    quantize: str | None = None

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
        if not isinstance(self.antialias, bool):
            raise ValueError(f"antialias must be True or False, got {self.antialias!r}.")
        if not self.antialias and self.interpolation != "bilinear":
            raise ValueError(
                f"antialias=False is TensorFlow's bilinear resize; it takes interpolation 'bilinear', "
                f"not {self.interpolation!r}."
            )
        if self.quantize is not None:
            if self.quantize not in QUANTIZE_MODES:
                raise ValueError(f"quantize must be None or one of {QUANTIZE_MODES}, got {self.quantize!r}.")
            if self.antialias or self.crop_only:
                raise ValueError(
                    f"quantize={self.quantize!r} is a bilinear resize without antialiasing: it takes "
                    "antialias=False and a resize (not crop_only)."
                )
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
        target = self.resize_target(converted.height, converted.width)
        if not self.crop_only and not self.antialias:
            size = _output_size(target, converted)
            if self.quantize is None:
                pixels = tf_bilinear_resize(_pixels(converted, scale), size)
            elif scale is None:
                pixels = uint8_resize(converted, size, self.quantize)
            else:
                raise ValueError(
                    f"quantize={self.quantize!r} resizes 8-bit images; this one is mode {image.mode!r}."
                )
            return TF.center_crop(pixels, list(self.input_size))
        resized = (
            converted
            if self.crop_only
            else TF.resize(converted, target, interpolation=self.interpolation_mode, antialias=True)
        )
        return _pixels(TF.center_crop(resized, list(self.input_size)), scale)

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


__all__ = [
    "IMAGENET_DEFAULT_MEAN",
    "IMAGENET_DEFAULT_STD",
    "QUANTIZE_MODES",
    "Preprocessing",
    "tf_bilinear_resize",
    "uint8_resize",
]
