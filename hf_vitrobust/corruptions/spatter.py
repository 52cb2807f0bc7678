# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""The ImageNet-C `spatter` corruption, batched on tensors, with the OpenCV steps of its water mode re-implemented.

The reference (`imagecorruptions` 1.1.2, `corruptions.py`; `make_cifar_c.py` for the "cifar" profile) draws a
normal "liquid layer", blurs and thresholds it, and then either adds pale-turquoise water whose shading comes from
cv2.Canny, cv2.distanceTransform, cv2.equalizeHist and small cv2 filters, or blends in brown mud. Each cv2 step is
reproduced in OpenCV's integer or float32 arithmetic, batched over images:

- Canny (aperture 3, L1 gradient): Sobel with edge replication, OpenCV's fixed-point sector test for non-maximum
  suppression, and hysteresis as iterated 8-neighbour dilation of the strong edges inside the weak ones;
- distanceTransform (DIST_L2, mask 5): OpenCV's 5x5 chamfer metric (a = 1, b = 1.4, c = 2.1969, in float32), not
  the Euclidean distance; as the reference truncates the distances at 20, twenty min-plus relaxations from a cap
  of 20 give the truncated chamfer distance (to a few float32 ulp on rare pixels);
- equalizeHist: per-image histogram and OpenCV's float32 lookup table.

CPU tensors take OpenCV itself instead (`opencv_for`): the water mask is the reference's own cv2 pipeline, one call
chain per image (tested equal to the torch re-implementation, which CUDA keeps), and the two Gaussian blurs are
cv2.sepFilter2D (float rounding apart, the matrix products' result).
"""

from types import ModuleType

import numpy as np
import torch
import torch.nn.functional as F

from .base import register_corruption
from .blur import gaussian_filter, opencv_for
from .randomness import normal

# (liquid mean, liquid std, liquid blur sigma, liquid threshold, water intensity or mud blur sigma, mode: 0 water,
# 1 mud) per severity. imagecorruptions/corruptions.py `spatter`; make_cifar_c.py `spatter`.
SPATTER: dict[str, tuple[tuple[float, float, float, float, float, int], ...]] = {
    "imagenet": (
        (0.65, 0.3, 4, 0.69, 0.6, 0),
        (0.65, 0.3, 3, 0.68, 0.6, 0),
        (0.65, 0.3, 2, 0.68, 0.5, 0),
        (0.65, 0.3, 1, 0.65, 1.5, 1),
        (0.67, 0.4, 1, 0.65, 1.5, 1),
    ),
    "cifar": (
        (0.62, 0.1, 0.7, 0.7, 0.5, 0),
        (0.65, 0.1, 0.8, 0.7, 0.5, 0),
        (0.65, 0.3, 1, 0.69, 0.5, 0),
        (0.65, 0.1, 0.7, 0.69, 0.6, 1),
        (0.65, 0.1, 0.5, 0.68, 0.6, 1),
    ),
}

WATER_COLOR = (175 / 255, 238 / 255, 238 / 255)  # the reference's "pale turquoise", in array channel order
MUD_COLOR = (63 / 255, 42 / 255, 20 / 255)  # the reference's "mud brown", in array channel order
CANNY_THRESHOLDS = (50, 150)  # cv2.Canny(liquid_layer, 50, 150): apertureSize 3, L2gradient False
DISTANCE_CAP = 20  # cv2.threshold(dist, 20, 20, cv2.THRESH_TRUNC)

# OpenCV's 5x5 chamfer weights for DIST_L2 (axial, diagonal, knight move), float32 as in its distanceTransform.
_CHAMFER_WEIGHTS = (1.0, 1.4, 2.1969)
# Non-maximum suppression sector bounds: OpenCV's TG22 = round(tan(22.5 deg) * 2^15), shift 15.
_TG22 = 13573
_CANNY_SHIFT = 15

_SOBEL_X = ((-1, 0, 1), (-2, 0, 2), (-1, 0, 1))
_SOBEL_Y = ((-1, -2, -1), (0, 0, 0), (1, 2, 1))
_WATER_KERNEL = ((-2, -1, 0), (-1, 1, 1), (0, 1, 2))
_BOX_KERNEL = ((1, 1, 1), (1, 1, 1), (1, 1, 1))


def _correlate3x3(maps: torch.Tensor, kernel: tuple[tuple[int, ...], ...], mode: str) -> torch.Tensor:
    """Correlate (N, H, W) integer maps with an integer 3x3 kernel after one pixel of padding in `mode` ("reflect"
    is cv2's BORDER_REFLECT_101, "replicate" its BORDER_REPLICATE): exact, in int32, as a sum of shifted views
    (a float64 convolution takes torch's slow reference path; float32 ones may use inexact Winograd kernels). The
    padding runs on float32 copies, exact for 8-bit maps, as every backend pads floats in these modes."""
    padded = F.pad(maps[:, None].float(), (1, 1, 1, 1), mode=mode)[:, 0].to(torch.int32)
    total = torch.zeros(maps.shape, dtype=torch.int32, device=maps.device)
    for dy, row in enumerate(kernel):
        for dx, weight in enumerate(row):
            if weight:
                total.add_(_neighbour(padded, 1, dy - 1, dx - 1), alpha=weight)
    return total


def _neighbour(padded: torch.Tensor, pad: int, dy: int, dx: int) -> torch.Tensor:
    """The (N, H, W) view of a map padded by `pad` on each side, shifted to the neighbour at (dy, dx)."""
    height, width = padded.shape[-2] - 2 * pad, padded.shape[-1] - 2 * pad
    return padded[:, pad + dy : pad + dy + height, pad + dx : pad + dx + width]


def _dilate3x3(maps: torch.Tensor) -> torch.Tensor:
    """8-neighbour dilation of (N, H, W) bool maps (outside the image counts as False), as two separable passes
    of ORs over shifted views."""
    padded = F.pad(maps, (1, 1, 1, 1))
    rows = padded[:, :, :-2] | padded[:, :, 1:-1] | padded[:, :, 2:]
    return rows[:, :-2] | rows[:, 1:-1] | rows[:, 2:]


def canny(gray: torch.Tensor, low: int, high: int, max_iterations: int | None = None) -> torch.Tensor:
    """cv2.Canny(gray, low, high) with apertureSize 3 and L2gradient False on (N, H, W) 0-255 maps: a bool edge map.

    Gradients are 3x3 Sobel with edge replication and the magnitude is |dx| + |dy|. A pixel above `low` survives
    non-maximum suppression when it beats its two neighbours across the edge, in OpenCV's three sectors (fixed
    point tan 22.5 / 67.5 degrees; the later neighbour may tie in the horizontal and vertical sectors; the
    magnitude is 0 outside the image). Hysteresis keeps the survivors 8-connected to one above `high`, grown by
    dilation until stable (at most H * W steps, the longest possible chain).
    """
    dx = _correlate3x3(gray, _SOBEL_X, "replicate")
    dy = _correlate3x3(gray, _SOBEL_Y, "replicate")
    abs_dx, abs_dy = dx.abs(), dy.abs()
    magnitude = abs_dx + abs_dy
    padded = F.pad(magnitude, (1, 1, 1, 1))

    def beats(dy_: int, dx_: int, tie: bool = False) -> torch.Tensor:
        other = _neighbour(padded, 1, dy_, dx_)
        return magnitude >= other if tie else magnitude > other

    tan22 = abs_dx * _TG22
    scaled_dy = abs_dy << _CANNY_SHIFT
    horizontal = scaled_dy < tan22
    vertical = scaled_dy > tan22 + (abs_dx << (_CANNY_SHIFT + 1))
    same_sign = (dx ^ dy) >= 0
    diagonal = torch.where(same_sign, beats(-1, -1) & beats(1, 1), beats(-1, 1) & beats(1, -1))
    maximum = torch.where(
        horizontal,
        beats(0, -1) & beats(0, 1, tie=True),
        torch.where(vertical, beats(-1, 0) & beats(1, 0, tie=True), diagonal),
    )
    weak = maximum & (magnitude > low)
    edges = weak & (magnitude > high)
    steps = max_iterations if max_iterations is not None else gray.shape[-2] * gray.shape[-1]
    for _ in range(steps):
        grown = weak & _dilate3x3(edges)
        if torch.equal(grown, edges):
            break
        edges = grown
    return edges


def _minimum_into(target: torch.Tensor, other: torch.Tensor) -> torch.Tensor:
    """target = min(target, other), elementwise, in place."""
    return torch.minimum(target, other, out=target)


def truncated_chamfer_distance(zero: torch.Tensor, cap: int = DISTANCE_CAP) -> torch.Tensor:
    """min(cv2.distanceTransform(map, cv2.DIST_L2, 5), cap) for (N, H, W) maps whose zero pixels are `zero`.

    The chamfer distance is the cheapest path to a zero pixel in moves of 1 (axial), 1.4 (diagonal) and 2.1969
    (knight), summed in float32 from the zero pixel outwards as OpenCV does; paths stay inside the image. Every
    move costs at least 1, so a path of cost <= cap has at most cap moves: `cap` Jacobi min-plus relaxations
    starting from the cap reach the truncated distance (OpenCV's sequential two passes reach the same minimum, up
    to the float32 rounding of equal-cost paths summed in another order). Returns float32 distances.
    """
    axial_weight, diagonal_weight, knight_weight = (
        torch.tensor(w, dtype=torch.float32, device=zero.device) for w in _CHAMFER_WEIGHTS
    )
    limit = float(cap)
    count, height, width = zero.shape
    # The distances live inside a border of 2 held at the cap: a move out of the image never improves a value.
    padded = torch.full((count, height + 4, width + 4), limit, dtype=torch.float32, device=zero.device)
    distance = padded[:, 2:-2, 2:-2]
    distance.masked_fill_(zero, 0.0)
    relaxed = distance.clone()
    for _ in range(cap):
        # The nearest neighbour value per kind of move, from minima of shifted views shared between the kinds (a
        # minimum is exact in any grouping): over every padded row, the horizontal minima at +-1 and +-2 columns,
        # then their vertical combinations.
        across_1 = torch.minimum(padded[:, :, 1:-3], padded[:, :, 3:-1])
        across_2 = torch.minimum(padded[:, :, :-4], padded[:, :, 4:])
        axial = _minimum_into(torch.minimum(padded[:, 1:-3, 2:-2], padded[:, 3:-1, 2:-2]), across_1[:, 2:-2])
        diagonal = torch.minimum(across_1[:, 1:-3], across_1[:, 3:-1])
        knight = _minimum_into(torch.minimum(across_2[:, 1:-3], across_2[:, 3:-1]), across_1[:, :-4])
        _minimum_into(knight, across_1[:, 4:])
        # Rounded addition is monotonic, so min(a + w, b + w) == min(a, b) + w exactly: one addition per weight.
        torch.minimum(distance, axial.add_(axial_weight), out=relaxed)
        _minimum_into(relaxed, diagonal.add_(diagonal_weight))
        _minimum_into(relaxed, knight.add_(knight_weight))
        if torch.equal(relaxed, distance):
            break
        distance.copy_(relaxed)
    return relaxed


def equalize_hist(gray: torch.Tensor) -> torch.Tensor:
    """cv2.equalizeHist on (N, H, W) int 0-255 maps, per image: lut[k] = round(float32(255 / (total - h[first])) *
    (cumulative count after the first occupied bin)), 0 at the first occupied bin; a one-level image stays."""
    count = gray.shape[0]
    flat = gray.reshape(count, -1).long()
    total = flat.shape[1]
    hist = torch.zeros(count, 256, dtype=torch.long, device=gray.device)
    hist.scatter_add_(1, flat, torch.ones_like(flat))
    first = (hist > 0).long().argmax(1, keepdim=True)
    first_count = hist.gather(1, first)
    cumulative = hist.cumsum(1) - first_count
    denominator = (total - first_count).clamp(min=1).float()
    scale = torch.tensor(255.0, dtype=torch.float32, device=gray.device) / denominator
    lut = (cumulative.float() * scale).round().clamp(0, 255).long()
    levels = torch.arange(256, device=gray.device)[None]
    lut = torch.where(levels <= first, 0, lut)
    lut = torch.where(first_count == total, first.expand(-1, 256), lut)
    return lut.gather(1, flat).reshape(gray.shape)


def _box3x3_float(maps: torch.Tensor) -> torch.Tensor:
    """cv2.blur(float32 map, (3, 3)) of truncated chamfer distances: the float64 sum of the 3x3 window
    (reflect-101) times 1/9, to float32. The distances are 0 or float32 values in [1, 20], multiples of 2**-23, so
    the float64 sum of nine of them is exact in any order: summed as rows of three, then columns of three."""
    padded = F.pad(maps[:, None].double(), (1, 1, 1, 1), mode="reflect")[:, 0]
    rows = padded[:, :, :-2] + padded[:, :, 1:-1]
    rows += padded[:, :, 2:]
    window = rows[:, :-2] + rows[:, 1:-1]
    window += rows[:, 2:]
    return window.mul_(1.0 / 9).float()


def _box3x3_uint8(maps: torch.Tensor) -> torch.Tensor:
    """cv2.blur(uint8 map, (3, 3)): the window sum (reflect-101) divided by 9, rounded half up."""
    window_sum = _correlate3x3(maps, _BOX_KERNEL, "reflect")
    return torch.div(2 * window_sum + 9, 18, rounding_mode="floor")


def water_mask(liquid_uint8: torch.Tensor, opencv: ModuleType | None = None) -> torch.Tensor:
    """The reference's water shading before normalisation, liquid_layer * dist, as float32 (N, H, W).

    dist: 255 - Canny edges, its chamfer distance to the edges truncated at 20, a 3x3 blur cast to uint8
    (truncation), equalizeHist, filter2D with [[-2, -1, 0], [-1, 1, 1], [0, 1, 2]] saturated to uint8, and a
    3x3 blur of that uint8 map. With `opencv` (cv2, for CPU maps) the reference's cv2 calls themselves run, one
    chain per map (they have no batched form; about 3x faster than the torch steps on one thread).
    """
    if opencv is not None:
        return _water_mask_opencv(opencv, liquid_uint8)
    edges = canny(liquid_uint8, *CANNY_THRESHOLDS)
    distance = truncated_chamfer_distance(edges, DISTANCE_CAP)
    distance = _box3x3_float(distance).floor().long()
    distance = equalize_hist(distance)
    distance = _correlate3x3(distance, _WATER_KERNEL, "reflect").clamp(0, 255)
    distance = _box3x3_uint8(distance).float()
    return liquid_uint8.float() * distance


def _water_mask_opencv(cv2: ModuleType, liquid_uint8: torch.Tensor) -> torch.Tensor:
    """`water_mask` on the CPU through the reference's own cv2 calls, map by map."""
    layers = liquid_uint8.to(torch.uint8).contiguous().numpy()
    kernel = np.array(_WATER_KERNEL, dtype=np.float64)
    masks = np.empty(layers.shape, dtype=np.float32)
    for layer, out in zip(layers, masks, strict=True):
        distance = cv2.distanceTransform(255 - cv2.Canny(layer, *CANNY_THRESHOLDS), cv2.DIST_L2, 5)
        distance = np.minimum(distance, np.float32(DISTANCE_CAP))  # cv2.threshold(..., THRESH_TRUNC)
        distance = cv2.equalizeHist(cv2.blur(distance, (3, 3)).astype(np.uint8))
        distance = cv2.blur(cv2.filter2D(distance, cv2.CV_8U, kernel), (3, 3))
        np.multiply(layer, distance, out=out, dtype=np.float32)
    return torch.from_numpy(masks)


@register_corruption("spatter")
def spatter(
    images: torch.Tensor, severity: int, profile: str, seed: int, sample_ids: torch.Tensor
) -> torch.Tensor:
    """Spatter: a blurred, thresholded normal liquid layer, added as water (severities with mode 0) or blended in
    as mud (mode 1), as the reference's `spatter`.

    Water: m = c4 * mask / max(mask) per image with `water_mask`, and x + m * pale turquoise, clipped. A mask that
    is zero everywhere (no liquid) adds nothing, where the reference would divide by zero. Mud: the liquid's
    support blurred with sigma c4 and zeroed below 0.8, and x * (1 - m) + m * brown, clipped.
    """
    mean, std, sigma, threshold, strength, mode = SPATTER[profile][severity - 1]
    height, width = images.shape[-2:]
    device = images.device
    liquid = normal(seed, sample_ids, "spatter/liquid", (height, width), torch.float64).mul_(std).add_(mean)
    liquid = gaussian_filter(liquid, sigma, opencv=True)
    liquid = liquid.masked_fill_(liquid < threshold, 0.0)
    x = images
    if mode == 0:
        # (liquid * 255).astype(np.uint8): truncation, wrapping modulo 256 as NumPy's cast does above 255.
        liquid_uint8 = (liquid * 255).long() & 255
        mask = water_mask(liquid_uint8, opencv=opencv_for(liquid))
        peak = mask.amax((1, 2), keepdim=True)
        mask = mask.div_(torch.where(peak > 0, peak, torch.ones_like(peak)))
        mask = mask.mul_(torch.tensor(strength, dtype=torch.float32, device=device))
        color = torch.tensor(WATER_COLOR, dtype=torch.float32, device=device)[None, :, None, None]
        out = (mask[:, None] * color).to(x.dtype).add_(x)
    else:
        support = (liquid > threshold).double()
        mask = gaussian_filter(support, strength, opencv=True).float()
        mask = torch.where(mask < 0.8, 0.0, mask)[:, None]
        color = torch.tensor(MUD_COLOR, dtype=torch.float64, device=device)[None, :, None, None]
        out = (x * (1 - mask).to(x.dtype)).double().add_(color * mask)
    return out.clamp_(0.0, 1.0).to(images.dtype)
