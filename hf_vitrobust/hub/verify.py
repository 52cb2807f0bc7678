# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""Check a staged model folder where hf_vitrobust cannot be imported, before it is written out or uploaded.

A fresh Python with `sys.modules["hf_vitrobust"] = None` loads the stage with `AutoModelForImageClassification
.from_pretrained(stage, trust_remote_code=True)` and `AutoImageProcessor`, computes the logits of fixed pixels
and runs `pipeline("image-classification")` on a fixed image. The logits must equal those of the original
checkpoint loaded here, with hf_vitrobust (AlterNet as its native, registered class).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

from .model_repo import StagingError

# How far the isolated logits may be from the original's (the same code and weights on the same CPU: in practice 0).
LOGITS_ATOL = 1e-5

_SCRIPT = """
import json, sys
sys.modules["hf_vitrobust"] = None  # any import of the package now fails
import numpy as np
import torch
from PIL import Image
from transformers import AutoImageProcessor, AutoModelForImageClassification, pipeline
stage, work = {stage!r}, {work!r}
model = AutoModelForImageClassification.from_pretrained(stage, trust_remote_code=True).eval()
processor = AutoImageProcessor.from_pretrained(stage)
pixels = torch.load(work + "/pixels.pt", weights_only=True)
with torch.no_grad():
    torch.save(model(pixel_values=pixels).logits, work + "/logits.pt")
image = Image.open(work + "/image.png")
predictions = pipeline("image-classification", model=model, image_processor=processor)(image, top_k=1)
loaded = sorted(m for m in sys.modules if sys.modules[m] and m.split(".")[0] == "hf_vitrobust")
json.dump({{"model_module": type(model).__module__, "predictions": predictions, "hf_vitrobust": loaded}},
          open(work + "/report.json", "w"))
"""


def fixed_image():
    """A fixed 48x40 RGB test image (seeded noise)."""
    import numpy as np
    from PIL import Image

    return Image.fromarray(np.random.default_rng(0).integers(0, 256, (40, 48, 3), dtype=np.uint8))


def verify_model_stage(stage: Path, checkpoint: Path, work: Path, *, kind: str, timeout: float = 600) -> None:
    """Raise StagingError unless the staged folder `stage` loads and runs without hf_vitrobust and gives the
    logits of `checkpoint` (loaded here, with hf_vitrobust). `work`: a scratch folder."""
    import torch
    from transformers import AutoImageProcessor, AutoModelForImageClassification

    import hf_vitrobust.evaluation  # noqa: F401  (imports the models: AlterNet is registered with the Auto classes)

    work.mkdir(parents=True, exist_ok=True)
    try:
        processor = AutoImageProcessor.from_pretrained(stage)
        pixels = processor(fixed_image(), return_tensors="pt")["pixel_values"]
        original = AutoModelForImageClassification.from_pretrained(checkpoint).eval()
        with torch.no_grad():
            expected = original(pixel_values=pixels).logits
    except Exception as error:
        raise StagingError(f"Checkpoint {checkpoint} does not load with hf_vitrobust: {error}") from error
    torch.save(pixels, work / "pixels.pt")
    fixed_image().save(work / "image.png")
    env = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
    env.update(HF_MODULES_CACHE=str(work / "modules"), HF_HUB_OFFLINE="1")
    script = textwrap.dedent(_SCRIPT.format(stage=str(stage), work=str(work)))
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=work, env=env, capture_output=True, text=True, timeout=timeout
    )
    if done.returncode != 0:
        raise StagingError(
            f"The staged folder of {checkpoint} does not load or run where hf_vitrobust is not installed "
            f"(from_pretrained(..., trust_remote_code=True) and pipeline): {done.stderr.strip()[-2000:]}"
        )
    report = json.loads((work / "report.json").read_text(encoding="utf-8"))
    if report["hf_vitrobust"]:
        raise StagingError(f"The staged folder imported hf_vitrobust: {report['hf_vitrobust']}.")
    if kind == "alternet" and not report["model_module"].startswith("transformers_modules"):
        raise StagingError(
            f"The staged AlterNet did not load from its remote code ({report['model_module']})."
        )
    logits = torch.load(work / "logits.pt", weights_only=True)
    if logits.shape != expected.shape:
        raise StagingError(
            f"The staged folder gives logits of shape {tuple(logits.shape)}, the checkpoint {tuple(expected.shape)}."
        )
    difference = float((logits - expected).abs().max())
    if not difference <= LOGITS_ATOL:
        raise StagingError(
            f"The staged folder's logits differ from the checkpoint's by up to {difference:.3g} (> {LOGITS_ATOL}) "
            "where hf_vitrobust is not installed: its remote code does not reproduce the model."
        )


__all__ = ["LOGITS_ATOL", "fixed_image", "verify_model_stage"]
