# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""ImageNet-C-bar's 10 corruptions (Mintun et al., "On Interaction Between Augmentations and Corruptions in Natural
Corruption Robustness", NeurIPS 2021), batched on tensors.

The reference is facebookresearch/augmentation-corruption (MIT), `imagenet_c_bar/corrupt.py` at commit ba4d5a5:
one class per corruption whose `sample_parameters` draws with NumPy's global generator and whose `transform` loops
over pixels. Here each corruption is split the same way: `draw_parameters` (every random number of the reference,
with the reference's distribution, from this package's counter-based streams, so that an image's draws depend only
on (seed, sample id) and never on the batch) and `apply_c_bar` (the reference's formula on a batch, float64).
The release cannot be reproduced bit for bit: its draws came from `np.random.seed(0)` in DataLoader workers.

Severities are the reference's: each corruption's five parameters of `imagenet_c_bar.csv` (the value handed to the
transform as `severity`, read through `float_parameter(severity, maxval) = severity * maxval / 10`). Images are
uint8 or float (N, 3, S, S), square as the reference's `im_size`; pixel values are computed in the reference's
0-255 units and truncated to uint8 as its `astype(np.uint8)`.

These corruptions are kept apart from ImageNet-C's registry (`base.CORRUPTION_REGISTRY`): their names and
severities are another benchmark's. The pixel patterns of the larger ones live in `c_bar_patterns`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import torch

from ..registry import Registry
from . import c_bar_patterns as patterns
from .base import check_images, check_sample_ids, check_severity, to_unit_float
from .randomness import normal, uniform

#: The release's corruption names (its README's list and folder names).
C_BAR_CORRUPTIONS: tuple[str, ...] = (
    "blue_noise_sample",
    "brownish_noise",
    "caustic_refraction",
    "checkerboard_cutout",
    "cocentric_sine_waves",
    "inverse_sparkles",
    "perlin_noise",
    "plasma_noise",
    "single_frequency_greyscale",
    "sparkles",
)

#: Each corruption's parameter at severities 1..5: `imagenet_c_bar/imagenet_c_bar.csv` at commit ba4d5a5.
C_BAR_SEVERITY_PARAMETERS: dict[str, tuple[float, ...]] = {
    "caustic_refraction": (2.35, 3.2, 4.9, 6.6, 9.15),
    "inverse_sparkles": (1.0, 2.0, 4.0, 9.0, 10.0),
    "sparkles": (1.0, 2.0, 3.0, 5.0, 6.0),
    "perlin_noise": (4.6, 5.2, 5.8, 7.6, 8.8),
    "blue_noise_sample": (0.8, 1.6, 2.4, 4.0, 5.6),
    "plasma_noise": (4.75, 7.0, 8.5, 9.25, 10.0),
    "checkerboard_cutout": (2.0, 3.0, 4.0, 5.0, 6.0),
    "cocentric_sine_waves": (3.0, 5.0, 8.0, 9.0, 10.0),
    "single_frequency_greyscale": (1.0, 1.5, 2.0, 4.5, 5.0),
    "brownish_noise": (1.0, 2.0, 3.0, 4.0, 5.0),
}

#: How many sparkles `sparkles` draws, and the most rays a sparkle can have (`randint(50, 200)`).
NUM_SPARKLES = 5
MAX_RAYS = 199

Draws = dict[str, torch.Tensor]


def float_parameter(level: float, maxval: float) -> float:
    """The reference's `float_parameter`: a severity parameter read as a fraction of `maxval` (level / 10)."""
    return float(level) * maxval / 10.0


class _Streams:
    """Uniform, integer and normal draws of one corruption, per image, float64: `stream` names each purpose."""

    def __init__(self, name: str, seed: int, sample_ids: torch.Tensor) -> None:
        self.prefix, self.seed, self.ids = f"c_bar/{name}/", seed, sample_ids

    def uniform(
        self, stream: str, shape: tuple[int, ...], low: float = 0.0, high: float = 1.0
    ) -> torch.Tensor:
        draws = uniform(self.seed, self.ids, self.prefix + stream, shape, torch.float64)
        return draws * (high - low) + low

    def integers(self, stream: str, shape: tuple[int, ...], low: int, high: int) -> torch.Tensor:
        """Uniform integers in [low, high), as NumPy's `randint(low, high)`."""
        return (self.uniform(stream, shape) * (high - low)).floor().to(torch.int64) + low

    def normal(self, stream: str, shape: tuple[int, ...]) -> torch.Tensor:
        return normal(self.seed, self.ids, self.prefix + stream, shape, torch.float64)


def _fourier_phases(draws: _Streams, stream: str, size: int, channels: int) -> dict[str, torch.Tensor]:
    """The phases of the reference's Fourier noise (`gen_noise`), per channel: (N, C, S, S//2) uniforms in
    [0, 2 pi), and for odd sizes the centre column's (N, C, S//2, 1)."""
    phases = {"phases": draws.uniform(stream, (channels, size, size // 2), 0.0, 2 * math.pi)}
    if size % 2:
        phases["centre_phases"] = draws.uniform(
            stream + "/centre", (channels, size // 2, 1), 0.0, 2 * math.pi
        )
    return phases


def draw_parameters(name: str, size: int, seed: int, sample_ids: torch.Tensor) -> Draws:
    """Every random number the reference's corruption `name` draws for an image of side `size`, per image (first
    dimension), with the reference's distribution; the draws its inner `RandomState(seed)` makes come as arrays
    (noise phases, ray lengths, the Perlin tables, the checkerboard's grid)."""
    draws = _Streams(name, seed, sample_ids)
    two_pi = 2 * math.pi
    if name == "single_frequency_greyscale":
        magnitude = draws.uniform("freq_mag", (), -math.pi, math.pi)
        second = draws.uniform("freq_2", (), -1.0, 1.0) * magnitude.abs()
        swap = draws.uniform("permutation", ()) < 0.5  # np.random.permutation(2) is [1, 0] half the time
        frequency = torch.stack(
            [torch.where(swap, second, magnitude), torch.where(swap, magnitude, second)], -1
        )
        return {"frequency": frequency, "phase": draws.uniform("phase", (), 0.0, two_pi)}
    if name == "cocentric_sine_waves":
        return {
            "offset": draws.uniform("offset", (2,), 0.0, size),
            "frequency": draws.uniform("freq", (), 0.0, 10.0),
            "amplitude": draws.uniform("amplitude", (), 0.0, size / 10),
            "ring_width": draws.uniform("ring_width", (), 0.0, size / 10),
        }
    if name == "plasma_noise":
        return {
            "time": draws.uniform("time", (), 0.0, 6 * math.pi),
            "iterations": draws.integers("iterations", (), 4, 7),
            "sharpness": draws.uniform("sharpness", (), 0.5, 1.0),
            "scale": draws.uniform("scale", (), 0.075, 0.2) * size,
        }
    if name == "sparkles":
        return {
            "centers": draws.uniform("centers", (NUM_SPARKLES, 2), 0.0, size),
            "rays": draws.integers("nrays", (NUM_SPARKLES,), 50, 200),
            "ray_noise": draws.normal("ray_lengths", (NUM_SPARKLES, MAX_RAYS)),
        }
    if name == "inverse_sparkles":
        return {
            "center": draws.uniform("center", (2,), 0.25, 0.75) * size,
            "rays": draws.integers("rays", (), 50, 200),
            "ray_noise": draws.normal("ray_lengths", (MAX_RAYS,)),
        }
    if name == "perlin_noise":
        return {
            # randint(0, 2**31) % 512 - 256: uniform integers in [-256, 256), before normalising.
            "gradients": draws.integers("gradients", (patterns.PERLIN_TABLE, 2), -256, 256),
            "swaps": draws.integers("permutation", (patterns.PERLIN_TABLE,), 0, patterns.PERLIN_TABLE),
        }
    if name == "blue_noise_sample":
        return _fourier_phases(draws, "phases", size, 1)
    if name == "brownish_noise":
        return _fourier_phases(draws, "phases", size, 3)
    if name == "checkerboard_cutout":
        # The grid is int(4 * size // scale) cells a side; drawn at the largest side any scale gives.
        cells = int(4 * size // max(0.1 * size, 1.0)) + 1
        return {
            "angle": draws.uniform("angle", (), 0.0, two_pi),
            "scale": (draws.uniform("scales", (), 0.1, 0.25) * size).clamp(min=1.0),
            "grid": draws.uniform("grid", (cells, cells)),
        }
    if name == "caustic_refraction":
        return {
            "time": draws.uniform("time", (), 0.5, 2.0),
            "size": draws.uniform("size", (), 0.75, 1.25) * size,
        }
    raise ValueError(_unknown(name))


def _unknown(name: str) -> str:
    return f"Unknown ImageNet-C-bar corruption {name!r}; known: {', '.join(C_BAR_CORRUPTIONS)}."


def _add_and_clip(pixels: torch.Tensor, noise: torch.Tensor, intensity: float) -> torch.Tensor:
    return (pixels + intensity * noise).clamp(0.0, 255.0)


def _single_frequency_greyscale(pixels: torch.Tensor, level: float, draws: Draws) -> torch.Tensor:
    rows, columns = patterns.pixel_grid(pixels)
    frequency = draws["frequency"][:, None, None, :]
    wave = torch.sin(columns * frequency[..., 0] + rows * frequency[..., 1] + draws["phase"][:, None, None])
    return _add_and_clip(pixels, wave[:, None], float_parameter(level, 196))


def _cocentric_sine_waves(pixels: torch.Tensor, level: float, draws: Draws) -> torch.Tensor:
    rows, columns = patterns.pixel_grid(pixels)
    x0, y0 = (draws["offset"][:, k, None, None] for k in (0, 1))
    frequency, amplitude, width = (draws[k][:, None, None] for k in ("frequency", "amplitude", "ring_width"))
    angle = torch.atan2(columns - x0, rows - y0) * frequency
    radius = torch.sqrt((columns - x0) ** 2 + (rows - y0) ** 2) + torch.sin(angle) * amplitude
    rings = torch.remainder(radius, width) / width - 0.5
    return _add_and_clip(pixels, rings[:, None], float_parameter(level, 128))


def _plasma_noise(pixels: torch.Tensor, level: float, draws: Draws) -> torch.Tensor:
    intensity = float_parameter(level, 64)
    noise = patterns.plasma(pixels, draws["time"], draws["iterations"], draws["sharpness"], draws["scale"])
    return ((1 - intensity / 255) * pixels + intensity * noise).clamp(0.0, 255.0)


def _sparkles(pixels: torch.Tensor, level: float, draws: Draws) -> torch.Tensor:
    size = pixels.shape[-1]
    radius = float_parameter(level, 0.1) * size
    # max(1, radius + randomness / 100 * radius * randn) with randomness 25; each sparkle on the previous result.
    lengths = (radius + 0.25 * radius * draws["ray_noise"]).clamp(min=1.0)
    out = pixels
    for k in range(NUM_SPARKLES):
        # The reference reads each pixel as float32 before every sparkle (`image[y, x, :].astype(np.float32)`).
        value = out.float().double()
        weight = patterns.sparkle_weight(
            pixels, draws["centers"][:, k], lengths[:, k], draws["rays"][:, k], 1.0
        )
        out = value + weight * (255.0 - value)
    return out.clamp(0.0, 255.0)


def _inverse_sparkles(pixels: torch.Tensor, level: float, draws: Draws) -> torch.Tensor:
    size = pixels.shape[-1]
    radius = 0.25 * size
    amount = 100 - float_parameter(level, 65)
    lengths = radius + 0.25 * radius * draws["ray_noise"]
    weight = patterns.sparkle_weight(pixels, draws["center"], lengths, draws["rays"], (100 - amount) / 50.0)
    return (255.0 + weight * (pixels - 255.0)).clamp(0.0, 255.0)


def _perlin_noise(pixels: torch.Tensor, level: float, draws: Draws) -> torch.Tensor:
    alpha = float_parameter(level, 0.50)
    noise = patterns.perlin_turbulence(pixels, draws["gradients"], draws["swaps"])
    shade = (0.5 * noise + 0.5).clamp(0.0, 1.0)
    # (1 - alpha) * image.astype(np.float32) is a float32 product in the reference.
    kept = (pixels.float() * torch.tensor(1 - alpha, dtype=torch.float32)).double()
    return (kept + 255 * alpha * shade[:, None]).clamp(0.0, 255.0)


def _blue_noise_sample(pixels: torch.Tensor, level: float, draws: Draws) -> torch.Tensor:
    threshold = float_parameter(level, 3.0) - 2.5
    noise = patterns.fourier_noise(draws["phases"], draws.get("centre_phases"), "blue")
    return pixels * (noise > threshold)


def _brownish_noise(pixels: torch.Tensor, level: float, draws: Draws) -> torch.Tensor:
    noise = patterns.fourier_noise(draws["phases"], draws.get("centre_phases"), "brownish")
    return _add_and_clip(pixels, noise, float_parameter(level, 64))


def _checkerboard_cutout(pixels: torch.Tensor, level: float, draws: Draws) -> torch.Tensor:
    fraction = float_parameter(level, 1.0)
    cut = patterns.checkerboard_cut(pixels, draws["angle"], draws["scale"], draws["grid"] < fraction)
    return torch.where(cut[:, None], torch.full_like(pixels, 128.0), pixels)


def _caustic_refraction(pixels: torch.Tensor, level: float, draws: Draws) -> torch.Tensor:
    size = pixels.shape[-1]
    unit = (pixels / 255).float().double()  # image.astype(np.float32) / 255
    refracted = patterns.caustic_refraction(
        unit,
        draws["time"],
        draws["size"],
        lens_scale=float_parameter(level, 0.5 * size),
        lighting_amount=float_parameter(level, 2.0),
    )
    return refracted.clamp(0.0, 1.0) * 255


_APPLY: dict[str, Callable[[torch.Tensor, float, Draws], torch.Tensor]] = {
    "blue_noise_sample": _blue_noise_sample,
    "brownish_noise": _brownish_noise,
    "caustic_refraction": _caustic_refraction,
    "checkerboard_cutout": _checkerboard_cutout,
    "cocentric_sine_waves": _cocentric_sine_waves,
    "inverse_sparkles": _inverse_sparkles,
    "perlin_noise": _perlin_noise,
    "plasma_noise": _plasma_noise,
    "single_frequency_greyscale": _single_frequency_greyscale,
    "sparkles": _sparkles,
}

#: The ported corruptions, by the release's name.
C_BAR_REGISTRY: Registry[Callable[[torch.Tensor, float, Draws], torch.Tensor]] = Registry(
    "ImageNet-C-bar corruption"
)
for _name in C_BAR_CORRUPTIONS:
    C_BAR_REGISTRY.register(_name, _APPLY[_name])


def apply_c_bar(pixels: torch.Tensor, name: str, level: float, draws: Draws) -> torch.Tensor:
    """The reference's `transform` of corruption `name` at severity parameter `level` on float64 0-255 pixels
    (N, 3, S, S) with the given draws (`draw_parameters`): float64 0-255, clipped, before the uint8 truncation."""
    return C_BAR_REGISTRY.get(name)(pixels, level, draws)


def check_square(images: torch.Tensor, name: str) -> None:
    height, width = images.shape[-2:]
    if height != width:
        raise ValueError(
            f"{name}: ImageNet-C-bar's corruptions are defined on square images (the reference's im_size); got "
            f"{height}x{width}. Crop first (the release: shorter side 256, centre crop 224)."
        )


def corrupt_c_bar(
    images: torch.Tensor,
    name: str,
    severity: int,
    seed: int = 0,
    sample_ids: Sequence[int] | torch.Tensor | None = None,
) -> torch.Tensor:
    """Apply ImageNet-C-bar corruption `name` at `severity` (1-5, the release's folders; the reference's parameter
    `C_BAR_SEVERITY_PARAMETERS[name][severity - 1]`) to square images (N, 3, S, S); same dtype, shape and device.

    Each image's random draws come from (`seed`, its sample id) only (default ids 0..N-1), so a sample's corruption
    never depends on the batch size or order. uint8 output is the reference's `astype(np.uint8)` truncation; float output is
    the reference's clipped value / 255.
    """
    C_BAR_REGISTRY.get(name)
    check_severity(severity)
    check_images(images, 1, name)
    check_square(images, name)
    ids = check_sample_ids(seed, sample_ids, images)
    size = images.shape[-1]
    draws = {key: value.to(images.device) for key, value in draw_parameters(name, size, seed, ids).items()}
    pixels = images.double() if images.dtype == torch.uint8 else to_unit_float(images).double() * 255
    corrupted = apply_c_bar(pixels, name, C_BAR_SEVERITY_PARAMETERS[name][severity - 1], draws)
    if images.dtype == torch.uint8:  # already clipped to 0..255: the reference's astype(np.uint8) truncates
        return corrupted.floor().to(torch.uint8)
    return (corrupted / 255).to(images.dtype)


def c_bar_parameters(name: str) -> dict[str, Any]:
    """The release's severity parameters of `name`, keyed by severity (1..5); an unknown name is a ValueError."""
    C_BAR_REGISTRY.get(name)
    return {severity: value for severity, value in enumerate(C_BAR_SEVERITY_PARAMETERS[name], start=1)}


__all__ = [
    "C_BAR_CORRUPTIONS",
    "C_BAR_REGISTRY",
    "C_BAR_SEVERITY_PARAMETERS",
    "apply_c_bar",
    "c_bar_parameters",
    "corrupt_c_bar",
    "draw_parameters",
    "float_parameter",
]
