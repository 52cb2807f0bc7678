# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""The pixel patterns of ImageNet-C-bar's corruptions (`c_bar`), batched: plasma, sparkle rays, Perlin turbulence,
Fourier noise, the rotated checkerboard and caustic refraction.

Each is the formula of facebookresearch/augmentation-corruption `imagenet_c_bar/corrupt.py` (and its
`utils/perlin_noise.py`, `utils/image.py`) at commit ba4d5a5, evaluated for every pixel of every image at once in
float64, with the reference's coordinates: its images are (row y, column x), and its per-pixel kernels are called
as `kernel(x, y)` or `kernel([y, x])` as noted at each function.
"""

from __future__ import annotations

import math

import torch

#: The Perlin generator's table size (`B`) and its coordinate offset (`N = 16 * 256`).
PERLIN_TABLE = 256
_PERLIN_OFFSET = 16 * 256
#: The most iterations PlasmaNoise draws (`randint(4, 7)`).
PLASMA_MAX_ITERATIONS = 6
#: Rec. 709 luma weights, as the reference's `luma_at_offset`.
_LUMA = (0.2126, 0.7152, 0.0722)


def pixel_grid(pixels: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """(rows, columns), each (S, S) float64 on the pixels' device: the y and x of every pixel."""
    size = pixels.shape[-1]
    axis = torch.arange(size, dtype=torch.float64, device=pixels.device)
    rows, columns = torch.meshgrid(axis, axis, indexing="ij")
    return rows, columns


def plasma(
    pixels: torch.Tensor,
    time: torch.Tensor,
    iterations: torch.Tensor,
    sharpness: torch.Tensor,
    scale: torch.Tensor,
) -> torch.Tensor:
    """PlasmaNoise's (N, 3, S, S) pattern in [-1, 1]: `kernel(x, y, ...)` iterated 4-6 times per image (the images
    with fewer iterations keep their point once done)."""
    rows, columns = pixel_grid(pixels)
    rand = time[:, None, None]
    x, y = columns / scale[:, None, None], rows / scale[:, None, None]
    ones = torch.ones_like(time)
    i0, i1, i2, i3 = ones, ones, ones, torch.zeros_like(time)
    for step in range(PLASMA_MAX_ITERATIONS):
        active = (step < iterations)[:, None, None]
        a0, a1, a2, a3 = (v[:, None, None] for v in (i0, i1, i2, i3))
        r0 = torch.cos(y * a0 - a3 + rand / a1) / a2
        r1 = torch.sin(x * a0 - a3 + rand / a1) / a2
        r0, r1 = r0 - r1 * 0.3, r1 + r0 * 0.3
        x = torch.where(active, x + r0, x)
        y = torch.where(active, y + r1, y)
        i0, i1, i2, i3 = i0 * 1.93, i1 * 1.15, i2 * (2.25 - sharpness), i3 * (time * i1)
    red = torch.sin(x - rand)
    blue = torch.sin(y + rand)
    green = torch.sin((x + y + torch.sin(rand)) * 0.5)
    return torch.stack([red, green, blue], dim=1)


def sparkle_weight(
    pixels: torch.Tensor, center: torch.Tensor, lengths: torch.Tensor, rays: torch.Tensor, exponent: float
) -> torch.Tensor:
    """The weight f of Sparkles' and InverseSparkles' `kernel([y, x], ...)`, (N, 1, S, S) in [0, 1]: the ray
    length interpolated at the pixel's angle about `center` (N, 2) from `lengths` (N, >= rays: the first `rays`
    (N,) are the sparkle's), g = (length^2 / (dist^2 + 1e-4)) ** exponent, times 1 - (f - 1/2)^2."""
    rows, columns = pixel_grid(pixels)
    dy = rows - center[:, 0, None, None]
    dx = columns - center[:, 1, None, None]
    distance = torch.sqrt(dy**2 + dx**2)
    count = rays[:, None, None]
    position = (torch.atan2(dx, dy) + math.pi) / (2 * math.pi) * count
    index = position.floor()
    fraction = position - index
    index = index.to(torch.int64)
    flat = (index % count).flatten(1), ((index + 1) % count).flatten(1)
    here, after = (torch.gather(lengths, 1, where).view_as(distance) for where in flat)
    length = here + fraction * (after - here)
    spread = (length**2 / (distance**2 + 1e-4)) ** exponent
    return ((1 - (fraction - 0.5) ** 2) * spread).clamp(0.0, 1.0)[:, None]


def perlin_tables(gradients: torch.Tensor, swaps: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """PerlinNoiseGenerator's tables per image: the permutation (N, 2B + 2), shuffled as the reference does (for i
    from B - 1 down to 0, swap p[i] with p[j], j the i-th draw: not a uniform shuffle, kept as is), repeated, and
    the unit gradients (N, B, 2) of the integer draws (a zero draw, which the reference divides by its zero norm,
    stays zero here)."""
    count = gradients.shape[0]
    table = torch.arange(PERLIN_TABLE, device=swaps.device).repeat(count, 1)
    rows = torch.arange(count, device=swaps.device)
    for step, i in enumerate(range(PERLIN_TABLE - 1, -1, -1)):
        j = swaps[:, step]
        kept = table[:, i].clone()
        table[:, i] = table[rows, j]
        table[rows, j] = kept
    permutation = torch.cat([table, table, table[:, :2]], dim=1)
    vectors = gradients.double() / 256
    norms = vectors.norm(dim=-1, keepdim=True)
    unit = torch.where(norms > 0, vectors / norms.clamp(min=1e-300), torch.zeros_like(vectors))
    return permutation, unit


def _perlin_noise(
    permutation: torch.Tensor, gradient: torch.Tensor, x: torch.Tensor, y: torch.Tensor
) -> torch.Tensor:
    """PerlinNoiseGenerator.noise(x, y) at every point of x, y (N, P)."""

    def corner(coordinate: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
        shifted = coordinate + _PERLIN_OFFSET
        low = shifted.trunc().to(torch.int64) % PERLIN_TABLE
        fraction = torch.remainder(shifted, 1.0)
        return low, (low + 1) % PERLIN_TABLE, fraction, fraction - 1.0

    bx0, bx1, rx0, rx1 = corner(x)
    by0, by1, ry0, ry1 = corner(y)
    i, j = torch.gather(permutation, 1, bx0), torch.gather(permutation, 1, bx1)
    b00, b10 = torch.gather(permutation, 1, i + by0), torch.gather(permutation, 1, j + by0)
    b01, b11 = torch.gather(permutation, 1, i + by1), torch.gather(permutation, 1, j + by1)

    def dot(b: torch.Tensor, rx: torch.Tensor, ry: torch.Tensor) -> torch.Tensor:
        return rx * torch.gather(gradient[..., 0], 1, b) + ry * torch.gather(gradient[..., 1], 1, b)

    sx, sy = rx0**2 * (3.0 - 2.0 * rx0), ry0**2 * (3.0 - 2.0 * ry0)
    u, v = dot(b00, rx0, ry0), dot(b10, rx1, ry0)
    a = u + sx * (v - u)
    u, v = dot(b01, rx0, ry1), dot(b11, rx1, ry1)
    b = u + sx * (v - u)
    return 1.5 * (a + sy * (b - a))


def perlin_turbulence(pixels: torch.Tensor, gradients: torch.Tensor, swaps: torch.Tensor) -> torch.Tensor:
    """PerlinNoise's turbulence (octaves 1, 2, 4, 8, 16) at `kernel([y, x])`, (N, S, S): the generator's `x` is
    the row over 32 (times S / 224), its `y` the column."""
    size = pixels.shape[-1]
    permutation, gradient = perlin_tables(gradients, swaps)
    rows, columns = pixel_grid(pixels)
    period = 32 * size / 224
    # np.matmul([y, x], eye(2) / period): each coordinate divided by the period.
    x = (rows / period).flatten()[None].expand(len(gradients), -1)
    y = (columns / period).flatten()[None].expand(len(gradients), -1)
    total = torch.zeros_like(x)
    frequency = 1.0
    while frequency <= 16.0:
        total = total + _perlin_noise(permutation, gradient, frequency * x, frequency * y).abs() / frequency
        frequency *= 2
    return total.view(-1, size, size)


def fourier_noise(phases: torch.Tensor, centre_phases: torch.Tensor | None, spectrum: str) -> torch.Tensor:
    """BlueNoise(Sample)'s and BrownishNoise's `gen_noise`, (N, C, S, S): a spectrum of power |k| ("blue") or
    1 / (|k|^2 + 1) ("brownish") about the centre, the phases mirrored (phases[::-1, ::-1]) into the right half,
    rolled by S // 2, inverse FFT (its real part), divided by its (population) standard deviation."""
    size = phases.shape[-2]
    if size % 2:
        zero = torch.zeros_like(centre_phases[..., :1, :])
        middle = torch.cat([centre_phases, zero, centre_phases.flip(-2)], dim=-2)
        full = torch.cat([phases, middle, phases.flip(-2, -1)], dim=-1)
    else:
        full = torch.cat([phases, phases.flip(-2, -1)], dim=-1)
    axis = torch.arange(size, dtype=torch.float64, device=phases.device) - size / 2
    squared = axis[:, None] ** 2 + axis[None, :] ** 2
    power = squared.sqrt() if spectrum == "blue" else 1 / (squared + 1)
    noise = torch.complex(power * torch.cos(full), power * torch.sin(full))
    noise = torch.roll(noise, (size // 2, size // 2), dims=(-2, -1))
    noise = torch.fft.ifft2(noise).real
    return noise / noise.std(dim=(-2, -1), correction=0, keepdim=True)


def checkerboard_cut(
    pixels: torch.Tensor, angle: torch.Tensor, scale: torch.Tensor, chosen: torch.Tensor
) -> torch.Tensor:
    """Which pixels CheckerBoardCutOut greys, (N, S, S): those whose cell of the checkerboard rotated by `angle`
    with squares of side `scale` has equal parities and is `chosen` in the grid (int(4 S // scale) cells a side,
    indexed as the reference's numpy array: int() truncates, negative indices count from the end)."""
    size = pixels.shape[-1]
    rows, columns = pixel_grid(pixels)
    cos, sin, side = (v[:, None, None] for v in (torch.cos(angle), torch.sin(angle), scale))
    nx = (cos * rows + sin * columns) / side
    ny = (-sin * rows + cos * columns) / side
    same_parity = torch.remainder(nx, 2).trunc() == torch.remainder(ny, 2).trunc()
    cells = torch.div(torch.full_like(scale, 4.0 * size), scale, rounding_mode="floor").to(torch.int64)
    cells = cells[:, None, None]
    ix, iy = nx.trunc().to(torch.int64) % cells, ny.trunc().to(torch.int64) % cells
    flat = (ix * chosen.shape[-1] + iy).flatten(1)
    picked = torch.gather(chosen.flatten(1), 1, flat).view_as(nx)
    return same_parity & picked


def _reflect_blur(values: torch.Tensor) -> torch.Tensor:
    """scipy.ndimage.gaussian_filter(sigma=1) of (N, S, S): a 9-tap kernel (truncate 4), mode "reflect" (the edge
    sample repeated: d c b a | a b c d | d c b a), one axis after the other."""
    offsets = torch.arange(-4, 5, dtype=torch.float64, device=values.device)
    weights = torch.exp(-0.5 * offsets**2)
    weights = weights / weights.sum()
    size = values.shape[-1]
    index = torch.arange(-4, size + 4, device=values.device)
    index = torch.where(index < 0, -index - 1, torch.where(index >= size, 2 * size - index - 1, index))
    for dim in (-2, -1):
        values = (values.index_select(dim, index).unfold(dim, 9, 1) * weights).sum(-1)
    return values


def _caustics(
    rows: torch.Tensor, columns: torch.Tensor, time: torch.Tensor, size: torch.Tensor
) -> torch.Tensor:
    """CausticRefraction's `caustic_noise_kernel([y, x], time, size)`, (N, S, S) in [0, 1]."""
    t0, scale = time[:, None, None], size[:, None, None]
    p0 = torch.remainder(rows / scale, 1.0) * 6.28318530718 - 250
    p1 = torch.remainder(columns / scale, 1.0) * 6.28318530718 - 250
    i0, i1 = p0, p1
    c = torch.ones_like(p0)
    intensity = 0.005
    for n in range(5):
        t = t0 * (1.0 - (3.5 / (n + 1)))
        i0, i1 = p0 + torch.cos(t - i0) + torch.sin(t + i1), p1 + torch.sin(t - i1) + torch.cos(t + i0)
        length = torch.sqrt(
            (p0 / (torch.sin(i0 + t) / intensity)) ** 2 + (p1 / (torch.cos(i1 + t) / intensity)) ** 2
        )
        c = c + 1.0 / length
    c = 1.17 - (c / 5.0) ** 1.4
    return (c.abs() ** 8.0).clamp(0.0, 1.0)


def _bilinear(image: torch.Tensor, row: torch.Tensor, column: torch.Tensor) -> torch.Tensor:
    """`utils.image.bilinear_interpolation` of (N, 3, S, S) at points (N, S, S): zero outside the image."""
    _, channels, size, _ = image.shape
    top, left = row.floor(), column.floor()
    flat = image.flatten(2)
    out = torch.zeros_like(image)
    for drow, dcol in ((0, 0), (0, 1), (1, 0), (1, 1)):
        r, c = top + drow, left + dcol
        inside = (r >= 0) & (r < size) & (c >= 0) & (c < size)
        where = (r.clamp(0, size - 1) * size + c.clamp(0, size - 1)).to(torch.int64).flatten(1)
        values = torch.gather(flat, 2, where[:, None].expand(-1, channels, -1)).view_as(image)
        weight_row = (1.0 - row + top) if drow == 0 else (1.0 - (top + 1) + row)
        weight_col = (1.0 - column + left) if dcol == 0 else (1.0 - (left + 1) + column)
        out = out + (values * inside[:, None]) * (weight_row * weight_col)[:, None]
    return out


def caustic_refraction(
    image: torch.Tensor, time: torch.Tensor, size: torch.Tensor, lens_scale: float, lighting_amount: float
) -> torch.Tensor:
    """CausticRefraction's output before clipping, (N, 3, S, S) in image units (0-1): the caustic pattern blurred
    (`gaussian_filter(sigma=1)`), its luma gradient read as a lens normal that refracts (eta 4) the sampling point
    by up to `lens_scale` pixels (rounded to 3 decimals), bilinear sampling, plus the lighting term."""
    rows, columns = pixel_grid(image)
    caustics = _reflect_blur(_caustics(rows, columns, time, size))
    luma = caustics * _LUMA[0] + caustics * _LUMA[1] + caustics * _LUMA[2]
    padded = torch.nn.functional.pad(luma, (1, 1, 1, 1))  # the reference reads 0 outside the image
    north, south = padded[:, 1:-1, :-2], padded[:, 1:-1, 2:]  # offsets [0, -1] and [0, 1]: columns
    west, east = padded[:, :-2, 1:-1], padded[:, 2:, 1:-1]  # offsets [-1, 0] and [1, 0]: rows
    normal = torch.stack([east - west, south - north, torch.ones_like(luma)], dim=-1)
    normal = normal / normal.norm(dim=-1, keepdim=True)
    n0, n1, n2 = normal.unbind(-1)
    out_angle = torch.asin(torch.sin(torch.acos(n2)) / 4.0)
    spectator = torch.stack([-n1, n0], dim=-1)
    spectator = spectator / spectator.norm(dim=-1, keepdim=True).clamp(min=1e-300)
    # The rotation (normal, normal x spectator, spectator) is orthonormal: its inverse is its transpose.
    orthogonal = torch.stack([-n2 * spectator[..., 1], n2 * spectator[..., 0]], dim=-1)
    refract = torch.cos(out_angle)[..., None] * normal[..., :2] + torch.sin(out_angle)[..., None] * orthogonal
    straight = (n2.abs() >= 1.0 - 1e-3)[..., None]  # the reference returns the incident ray (0, 0, 1)
    offset = torch.round(torch.where(straight, torch.zeros_like(refract), refract * lens_scale), decimals=3)
    out = _bilinear(image, rows + offset[..., 0], columns + offset[..., 1])
    lighting = ((north - south) * lighting_amount + (east - west) * lighting_amount)[:, None]
    return out + lighting


__all__ = [
    "PERLIN_TABLE",
    "caustic_refraction",
    "checkerboard_cut",
    "fourier_noise",
    "perlin_tables",
    "perlin_turbulence",
    "pixel_grid",
    "plasma",
    "sparkle_weight",
]
