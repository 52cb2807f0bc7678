# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""Park & Kim's frequency-band noise (Fig. 2b) as the first author described it (xxxnell/how-do-vits-work issue #44):
`Random(eps=0.7)` sign noise band-passed by `ops/adversarial.py`'s `FreqAttack._fourier_mask(x, f, s=0.2)`,
transcribed below from the repository and compared with `band="park-kim"`, at 224 and at 32 pixels."""

import math

import pytest
import torch
import torch.nn.functional as F
from probe_models import transformers_vit

from hf_vitrobust.corruptions.frequency_noise import (
    IMAGENET_STD,
    add_band_noise,
    band_pass,
    park_kim_band_mask,
    white_sign_noise,
)
from hf_vitrobust.models import Classifier, Preprocessing
from hf_vitrobust.probes.frequency_noise import frequency_noise


def _center_mask(w1: int, w2: int) -> torch.Tensor:
    w1 = w2 if w1 > w2 else w1
    w1 = 0 if w1 < 0 else w1
    return F.pad(torch.ones([1, 3, w1, w1]), [int((w2 - w1) / 2)] * 4)


def _shift(x: torch.Tensor) -> torch.Tensor:
    _, _, h, w = x.shape
    return torch.roll(x, shifts=(int(h / 2), int(w / 2)), dims=(2, 3))


def reference_fourier_mask(x: torch.Tensor, f: float, s: float = 0.2) -> torch.Tensor:
    """`FreqAttack._fourier_mask` (ops/adversarial.py), line by line (f in radians)."""
    b, c, h, w = x.shape
    x = _shift(torch.fft.fft2(x))
    x_abs, x_ang = x.abs(), x.angle()
    mask = _center_mask(int(((f + s) * h) / (2 * math.pi)) * 2, h) - _center_mask(
        int(((f - s) * h) / (2 * math.pi)) * 2, h
    )
    x_abs = mask.to(x_abs.dtype) * x_abs
    unit = torch.complex(
        torch.zeros(b, c, h, w, dtype=x_abs.dtype), torch.ones(b, c, h, w, dtype=x_abs.dtype)
    )
    return torch.fft.ifft2(_shift(x_abs * torch.exp(unit * x_ang)))


@pytest.mark.parametrize("size", [224, 32])
@pytest.mark.parametrize("frequency", [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9])
def test_park_kim_band_is_the_authors_fourier_mask(size, frequency):
    white = torch.randn(
        2, 3, size, size, dtype=torch.float64, generator=torch.Generator().manual_seed(3)
    ).sign()
    reference = reference_fourier_mask(white, frequency * math.pi).real
    torch.testing.assert_close(band_pass(white, frequency, band="park-kim"), reference, atol=1e-12, rtol=0)


def test_park_kim_band_is_0_127_pi_wide_with_int_truncation():
    # At 224 px and f = 0.5 pi: outer side 2 * int((0.5 pi + 0.2) 224 / 2 pi) = 2 * 63, inner 2 * int(48.87) = 2 * 48.
    mask = park_kim_band_mask(224, 224, 0.5)
    index = torch.fft.fftfreq(224, 1 / 224).round().long()
    kept_rows = sorted({int(index[k]) for k in range(224) if mask[k, 0]})
    assert kept_rows == [*range(-63, -48), *range(48, 63)]
    assert (63 - 48) * 2 * math.pi / 224 / math.pi == pytest.approx(0.134, abs=1e-3)  # about 2 s = 0.127 pi
    for bad in ((224, 200), (33, 33)):
        with pytest.raises(ValueError, match="square images of even side"):
            park_kim_band_mask(*bad, 0.5)


def test_the_noise_is_the_authors_in_normalised_space_at_0_7_times_the_imagenet_std():
    """`xs + FreqAttack(Random(eps=0.7))` on normalised images = normalising `pixels + 0.7 * std * band(sign)`."""
    pixels = torch.rand(2, 3, 32, 32, dtype=torch.float64)
    mean, std = (
        torch.tensor([0.485, 0.456, 0.406]).view(1, 3, 1, 1),
        torch.tensor(IMAGENET_STD).view(1, 3, 1, 1),
    )
    ids = torch.tensor([5, 9])
    noisy = add_band_noise(
        pixels,
        0.3,
        magnitude=[0.7 * s for s in IMAGENET_STD],
        seed=4,
        sample_ids=ids,
        clip=False,
        band="park-kim",
    )
    sign = white_sign_noise(ids, (3, 32, 32), seed=4, dtype=torch.float64)
    xs = (pixels - mean) / std
    reference = xs + reference_fourier_mask(0.7 * sign, 0.3 * math.pi).real
    torch.testing.assert_close((noisy - mean) / std, reference, atol=1e-6, rtol=0)  # float32 noise


def _same_model_other_std(model: Classifier, std: float) -> Classifier:
    own = model.preprocessing
    return Classifier(model.module, Preprocessing(input_size=own.input_size, mean=own.mean, std=(std,) * 3))


def test_epsilon_is_stated_in_pixels_the_same_for_every_normalisation_and_switchable():
    vit = transformers_vit()
    other = _same_model_other_std(vit, 0.5)
    images = torch.rand(4, 3, 32, 32, generator=torch.Generator().manual_seed(1))
    labels = torch.tensor([0, 1, 2, 3])
    settings = {"frequencies": [0.2, 0.8], "band": "park-kim", "seed": 2}
    for classifier in (vit, other):
        result = frequency_noise(classifier, images, labels, **settings)
        assert result.pixel_magnitude == pytest.approx([0.7 * s for s in IMAGENET_STD])
        assert result.band == "park-kim" and result.bandwidth == pytest.approx(0.4 / math.pi)
    own = frequency_noise(other, images, labels, epsilon_units="model-std", **settings)
    assert own.pixel_magnitude == pytest.approx([0.35] * 3) and own.epsilon_units == "model-std"
    ours = frequency_noise(vit, images, labels, frequencies=[0.2, 0.8], seed=2)
    assert ours.band == "square-annulus" and ours.bandwidth == 0.2
    with pytest.raises(ValueError, match="band must be one of square-annulus, park-kim"):
        frequency_noise(vit, images, labels, band="annulus")
    with pytest.raises(ValueError, match="epsilon_units must be one of"):
        frequency_noise(vit, images, labels, epsilon_units="pixels")
