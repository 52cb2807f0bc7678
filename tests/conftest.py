"""Shared test set-up: every test runs offline (pyproject's [tool.pytest.ini_options] env sets HF_HUB_OFFLINE=1),
and the natural photos the corruption tests compare on."""

import os

import pytest

if os.environ.get("HF_HUB_OFFLINE") != "1":
    raise pytest.UsageError("Tests must run with HF_HUB_OFFLINE=1; install the dev extras (pytest-env).")


@pytest.fixture(scope="module")
def photos():
    """Three natural 224x224 uint8 photos (scikit-image's astronaut, chelsea, coffee), (3, 3, 224, 224)."""
    # Imported here, so that tests without corruptions do not load the reference package.
    import skimage.data
    import torch
    from reference_corruptions import photo

    images = (skimage.data.astronaut(), skimage.data.chelsea(), skimage.data.coffee())
    return torch.cat([photo(image, (224, 224)) for image in images])


@pytest.fixture(scope="module")
def tiny_photos():
    """Three natural photos at CIFAR's 32x32 (astronaut, chelsea, rocket), (3, 3, 32, 32) uint8."""
    import skimage.data
    import torch
    from reference_corruptions import photo

    images = (skimage.data.astronaut(), skimage.data.chelsea(), skimage.data.rocket())
    return torch.cat([photo(image, (32, 32)) for image in images])


try:
    from hypothesis import settings as _hypothesis_settings
except ImportError:  # the dev extra installs hypothesis; without it, the property tests fail at import
    pass
else:
    # Property tests draw their examples from a fixed seed, so CI runs are reproducible.
    _hypothesis_settings.register_profile("hf_vitrobust", derandomize=True)
    _hypothesis_settings.load_profile("hf_vitrobust")
