# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""A published accuracy and ours as counts of the same images (`ImageCounts`): how many images differ, and how
many the images the authors left out can explain (`dropped_images_bound`). `published_vs_ours` gives its verdicts
in these counts where ours and theirs score the same images."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class ImageCounts:
    """A published accuracy and ours as counts of the same images: the published count (a range where the reading
    precision allows several) of `published_images`, ours of `our_images`, and ours on their images (a range where
    they left some of ours out: `dropped_images_bound`)."""

    published: tuple[int, int]
    published_images: int
    ours: int
    our_images: int
    ours_on_theirs: tuple[int, int]

    @property
    def difference(self) -> tuple[int, int]:
        """Published minus ours on their images, in images: the least and the most it can be."""
        return self.published[0] - self.ours_on_theirs[1], self.published[1] - self.ours_on_theirs[0]

    @property
    def flipped(self) -> int:
        """The fewest images that must differ: 0 when the difference can be explained."""
        low, high = self.difference
        return max(low, -high, 0)

    def verdict(self) -> str:
        low, high = self.difference
        if (low, high) == (0, 0):
            return "equal"
        if self.flipped == 0:
            return f"within {max(-low, high):,} image{'s' if max(-low, high) != 1 else ''}"
        return f"outside by {self.flipped:,} image{'s' if self.flipped != 1 else ''}"

    def to_dict(self) -> dict[str, Any]:
        return {
            "published": list(self.published),
            "published_images": self.published_images,
            "ours": self.ours,
            "our_images": self.our_images,
            "ours_on_theirs": list(self.ours_on_theirs),
            "difference": list(self.difference),
        }


def dropped_images_bound(count: int, num_images: int, kept: int) -> tuple[int, int]:
    """What a model that counts `count` of `num_images` images counts on `kept` of them, the others unknown: the
    least and the most.

    The bound from our own accuracy, not the worst case: the authors scored m of our n
    images and left out d = n - m. If our model counts k of the n images (correct, or wrong for an error %), then on
    their m images it counts k - x, where x is how many of the d left-out images it counts; x is at least
    max(0, d - (n - k)) and at most min(d, k). So the published count, if our model is theirs, lies in
    [k - min(d, k), k - max(0, d - (n - k))], and their accuracy 100 (k - x) / m differs from ours, p = k / n, by
    between -100 (1 - p) d / m and +100 p d / m points (for d <= k and d <= n - k). For ViT-L/16 on ImageNet-A
    (p = 0.281, d = 76, m = 7,424) that is -0.74 to +0.29 points, where the worst case 100 d / m allows +-1.02.
    """
    dropped = num_images - kept
    if not 0 <= kept <= num_images or not 0 <= count <= num_images:
        raise ValueError(f"need 0 <= kept ({kept}) and count ({count}) <= images ({num_images})")
    return count - min(dropped, count), count - max(0, dropped - (num_images - count))


def published_count(value: float, num_images: int, tolerance: float) -> tuple[int, int] | None:
    """The counts of `num_images` images that a printed percentage `value` (to `tolerance` points) can stand for:
    the least and the most; None where none can (a value that is no fraction of its images, such as the mean of
    Keras' running accuracies that Paul & Chen's Table 7 notebooks print)."""
    low = max(math.ceil(num_images * (value - tolerance) / 100.0 - 1e-9), 0)
    high = min(math.floor(num_images * (value + tolerance) / 100.0 + 1e-9), num_images)
    return None if low > high else (low, high)


__all__ = ["ImageCounts", "dropped_images_bound", "published_count"]
