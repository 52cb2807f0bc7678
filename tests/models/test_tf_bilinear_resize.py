# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""TensorFlow's bilinear resize without antialiasing (`models.preprocessing.tf_bilinear_resize`,
`Preprocessing(antialias=False)`), checked against values worked by hand with TF 2's rule: output pixel i reads the
input at s = (i + 0.5) * in / out - 0.5, its neighbours floor(s) (at least 0) and ceil(s) (at most in - 1), weighted
s - floor(s) (tensorflow/core/kernels/image/resize_bilinear_op.cc, `HalfPixelScaler`, `compute_interpolation_weights`)."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from PIL import Image

from hf_vitrobust.models.preprocessing import Preprocessing, tf_bilinear_resize


def test_shrinking_skips_pixels_instead_of_averaging_them():
    # A 4-pixel row 0, 10, 20, 30 to 2 pixels: s = 0.5 and 2.5, so 5 and 25 (the neighbours' mean, nothing else).
    row = torch.tensor([0.0, 10.0, 20.0, 30.0]).view(1, 1, 4)
    assert tf_bilinear_resize(row, (1, 2)).flatten().tolist() == [5.0, 25.0]
    # 4 x 4 to 2 x 2 of v = 10 x + 40 y: s = 0.5, 2.5 on both axes, so v(0.5, 0.5) = 25 and so on.
    grid = torch.tensor([[10.0 * x + 40.0 * y for x in range(4)] for y in range(4)]).view(1, 4, 4)
    assert tf_bilinear_resize(grid, (2, 2))[0].tolist() == [[25.0, 45.0], [105.0, 125.0]]


def test_enlarging_clamps_at_the_borders():
    # 0, 10 to 4 pixels: s = -0.25 (clamped: 0), 0.25 (2.5), 0.75 (7.5), 1.25 (both neighbours 1: 10).
    row = torch.tensor([0.0, 10.0]).view(1, 1, 2)
    assert tf_bilinear_resize(row, (1, 4)).flatten().tolist() == [0.0, 2.5, 7.5, 10.0]
    # A batch keeps its shape.
    assert tf_bilinear_resize(row.unsqueeze(0).repeat(3, 1, 1, 1), (2, 4)).shape == (3, 1, 2, 4)


def test_preprocessing_without_antialias_is_the_tf_resize_of_the_image_in_floats():
    """A 4 x 4 RGB image of v = 10 x + 40 y squashed to 2 x 2: TF's 25, 45, 105, 125 (over 255, not rounded); the
    antialiased default is PIL's own bilinear resize, which averages neighbourhoods (36, 52, 98, 114 here)."""
    values = np.array([[10 * x + 40 * y for x in range(4)] for y in range(4)], dtype=np.uint8)
    image = Image.fromarray(np.stack([values] * 3, axis=-1))
    tf_like = Preprocessing(input_size=2, resize_size=(2, 2), interpolation="bilinear", antialias=False)
    pixels = tf_like.image_to_tensor(image)
    assert pixels.shape == (3, 2, 2) and pixels.dtype == torch.float32
    assert (pixels * 255).round(decimals=4).tolist() == [[[25.0, 45.0], [105.0, 125.0]]] * 3
    antialiased = Preprocessing(input_size=2, resize_size=(2, 2), interpolation="bilinear")
    pil = np.asarray(image.resize((2, 2), Image.Resampling.BILINEAR))[..., 0]
    assert (antialiased.image_to_tensor(image)[0] * 255).round().tolist() == pil.astype(float).tolist()
    assert pil.tolist() == [[36, 52], [98, 114]]
    # The shorter side to 2 keeps the aspect ratio, as torchvision's resize does: 4 x 8 -> 2 x 4, cropped to 2 x 2.
    wide = Image.fromarray(np.zeros((4, 8, 3), dtype=np.uint8))
    shorter = Preprocessing(input_size=2, resize_size=2, interpolation="bilinear", antialias=False)
    assert shorter.image_to_tensor(wide).shape == (3, 2, 2)
    # It round-trips through its dict, and takes only TF's bilinear kernel.
    assert Preprocessing(**tf_like.to_dict()) == tf_like
    with pytest.raises(ValueError, match="TensorFlow's bilinear"):
        Preprocessing(interpolation="bicubic", antialias=False)
