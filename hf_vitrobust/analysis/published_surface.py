# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""A published loss surface beside ours, by its summary statistics.

Park & Kim drew their two directions with an unseeded `torch.randn` (how-do-vits-work `ops/loss_landscapes.py`
`rand_basis`), so only the origin of their grid can be compared point by point; the rest of the surface is compared
by statistics that do not depend on which random directions were drawn. Each is computed the same way from their
published grid and from ours, on the two lines through the origin (direction 1: the row y = 0; direction 2: the
column x = 0), one value per direction:

- minimum: the lowest finite loss on the line;
- curvature at the origin: the central second difference (L(h) - 2 L(0) + L(-h)) / h^2 at the grid step h;
- basin width: the length of the interval around the origin where the loss stays within `BASIN_LEVEL` of the
  origin's loss, its ends linearly interpolated between grid points (NaN where the basin reaches past the grid or a
  point on the way is missing: the ResNet's grid lacks its 31 points of infinite NLL).

A statistic is the mean over the two directions. Two directions are two independent draws, so half their difference
estimates the spread of that mean over draws; the augmentation drawn at every point adds noise, estimated from our
per-point standard errors (the chunks' spread, `loss_standard_error` of the probe) by propagating seeded Gaussian
draws through the statistic, and taken to be the same for theirs (the same protocol and image count). The verdict:
"within" when |ours - theirs| <= z sqrt(s_theirs^2 + s_ours^2 + 2 s_noise^2) at the run's confidence level, else
"outside".
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..metrics.intervals import z_value
from .published import PublishedNumber

#: The loss above the origin's at which the basin width is read (the loss's own units: NLL + wd x l2).
BASIN_LEVEL = 5.0
#: Gaussian draws that carry the per-point noise through each statistic.
NOISE_DRAWS = 200


def surface_grid(rows: Sequence[PublishedNumber]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The grid of published loss rows (conditions x and y): x (nx,), y (ny,), loss (ny, nx) in meshgrid "xy"
    order, NaN where the table has no row (a non-finite value the authors' plot dropped)."""
    xs = sorted({float(row.conditions["x"]) for row in rows})
    ys = sorted({float(row.conditions["y"]) for row in rows})
    loss = np.full((len(ys), len(xs)), np.nan)
    for row in rows:
        loss[ys.index(float(row.conditions["y"])), xs.index(float(row.conditions["x"]))] = row.value
    return np.asarray(xs), np.asarray(ys), loss


def _origin(axis: np.ndarray) -> int:
    index = int(np.argmin(np.abs(axis)))
    if abs(axis[index]) > 1e-9 or not 0 < index < len(axis) - 1:
        raise ValueError(
            f"the grid needs the origin with a neighbour on each side, got the axis {axis.tolist()}"
        )
    return index


def _minimum(steps: np.ndarray, line: np.ndarray, at: int) -> float:
    finite = line[np.isfinite(line)]
    return float(finite.min()) if finite.size else float("nan")


def _curvature(steps: np.ndarray, line: np.ndarray, at: int) -> float:
    h = (steps[at + 1] - steps[at - 1]) / 2.0
    return float((line[at + 1] - 2.0 * line[at] + line[at - 1]) / h**2)


def _basin_width(steps: np.ndarray, line: np.ndarray, at: int) -> float:
    level = line[at] + BASIN_LEVEL
    ends = []
    for direction in (-1, 1):
        i = at
        while (
            0 <= i + direction < len(line)
            and np.isfinite(line[i + direction])
            and line[i + direction] <= level
        ):
            i += direction
        j = i + direction
        if not 0 <= j < len(line) or not np.isfinite(line[j]):
            return float("nan")
        share = (level - line[i]) / (line[j] - line[i])
        ends.append(steps[i] + share * (steps[j] - steps[i]))
    return float(ends[1] - ends[0])


#: The statistics, each of one line through the origin: (steps, loss on the line, the origin's index) -> value.
SURFACE_STATISTICS: dict[str, Callable[[np.ndarray, np.ndarray, int], float]] = {
    "minimum": _minimum,
    "curvature at the origin": _curvature,
    f"basin width at +{BASIN_LEVEL:g}": _basin_width,
}


def direction_statistics(x: Sequence[float], y: Sequence[float], loss: np.ndarray) -> dict[str, np.ndarray]:
    """name -> (2,) the statistic along direction 1 (the row y = 0) and direction 2 (the column x = 0)."""
    x, y, loss = (
        np.asarray(x, dtype=np.float64),
        np.asarray(y, dtype=np.float64),
        np.asarray(loss, np.float64),
    )
    if loss.shape != (len(y), len(x)):
        raise ValueError(f"loss must be (len(y), len(x)) = ({len(y)}, {len(x)}), got {loss.shape}.")
    i, j = _origin(y), _origin(x)
    lines = ((x, loss[i, :], j), (y, loss[:, j], i))
    return {name: np.array([fn(*line) for line in lines]) for name, fn in SURFACE_STATISTICS.items()}


def off_the_origin(row: PublishedNumber) -> str | None:
    """Why a published grid point off the origin compares with none of ours (None for any other row): it lies
    along the authors' unseeded random directions, which no run can draw again."""
    conditions = row.conditions
    if not {"x", "y"} <= set(conditions) or float(conditions["x"]) == 0.0 == float(conditions["y"]):
        return None
    return (
        f"x={conditions['x']}, y={conditions['y']} lies along the authors' unseeded random directions, not ours: "
        "only the origin compares point by point, the surface by its statistics"
    )


def surface_statistics(x: Sequence[float], y: Sequence[float], loss: Any) -> dict[str, float]:
    """name -> the statistic's mean over the two directions (what a verdict compares)."""
    stats = direction_statistics(x, y, np.asarray(loss, dtype=np.float64))
    return {name: float(values.mean()) for name, values in stats.items()}


@dataclass(frozen=True)
class SurfaceStatistic:
    """One summary statistic of a published surface beside ours: both means over the two directions, the
    tolerance of the verdict (z times the combined spread), and the verdict kind, "within" or "outside" (or "not
    comparable" where a statistic cannot be read from one of the grids)."""

    name: str
    theirs: float
    ours: float
    tolerance: float
    kind: str

    @property
    def verdict(self) -> str:
        if self.kind == "not comparable":
            return "not comparable"
        return f"{self.kind} the spread of random directions and augmentation draws (±{self.tolerance:.3g})"


def _noise_spread(
    x: np.ndarray, y: np.ndarray, loss: np.ndarray, standard_error: np.ndarray | None, seed: int
) -> dict[str, float]:
    """The standard deviation of each statistic's direction mean under Gaussian per-point noise of the given
    standard errors (0 without them)."""
    if standard_error is None:
        return dict.fromkeys(SURFACE_STATISTICS, 0.0)
    noise = np.random.default_rng(seed).standard_normal((NOISE_DRAWS, *loss.shape))
    draws = [direction_statistics(x, y, loss + standard_error * n) for n in noise]
    return {name: float(np.nanstd([d[name].mean() for d in draws], ddof=1)) for name in SURFACE_STATISTICS}


def compare_surfaces(
    theirs: tuple[Any, Any, Any],
    ours: tuple[Any, Any, Any],
    ours_standard_error: Any,
    confidence_level: float,
    seed: int = 0,
) -> list[SurfaceStatistic]:
    """Each statistic of `SURFACE_STATISTICS` of their (x, y, loss) grid beside ours (arrays or nested lists, as
    results.json keeps them), with its verdict (see the module docstring); `ours_standard_error`: our per-point
    standard errors (ny, nx), or None."""
    their_grid = tuple(np.asarray(part, dtype=np.float64) for part in theirs)
    our_grid = tuple(np.asarray(part, dtype=np.float64) for part in ours)
    theirs_stats = direction_statistics(*their_grid)
    ours_stats = direction_statistics(*our_grid)
    spread = None if ours_standard_error is None else np.asarray(ours_standard_error, dtype=np.float64)
    noise = _noise_spread(*our_grid, spread, seed)
    z = z_value(confidence_level)
    out = []
    for name in SURFACE_STATISTICS:
        a, b = theirs_stats[name], ours_stats[name]
        tolerance = float(
            z * np.sqrt((np.ptp(a) / 2.0) ** 2 + (np.ptp(b) / 2.0) ** 2 + 2.0 * noise[name] ** 2)
        )
        if not (np.isfinite(a).all() and np.isfinite(b).all() and np.isfinite(tolerance)):
            kind = "not comparable"
        else:
            kind = "within" if abs(b.mean() - a.mean()) <= tolerance else "outside"
        out.append(SurfaceStatistic(name, float(a.mean()), float(b.mean()), tolerance, kind))
    return out


__all__ = [
    "BASIN_LEVEL",
    "SURFACE_STATISTICS",
    "SurfaceStatistic",
    "compare_surfaces",
    "direction_statistics",
    "off_the_origin",
    "surface_grid",
    "surface_statistics",
]
