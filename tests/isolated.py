"""Running a saved checkpoint where hf_vitrobust cannot be imported: what a Hub user without the package gets."""

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import torch


def remote_code_logits(folder: Path, pixels: torch.Tensor, work: Path) -> torch.Tensor:
    """Logits of `AutoModelForImageClassification.from_pretrained(folder, trust_remote_code=True)` on `pixels`,
    computed in a fresh Python where `import hf_vitrobust` fails; also asserts the model came from the folder's
    remote code (a `transformers_modules` class), not from an installed package."""
    torch.save(pixels, work / "pixels.pt")
    script = textwrap.dedent(
        f"""
        import sys
        sys.modules["hf_vitrobust"] = None  # any import of the package now fails
        import torch
        from transformers import AutoModelForImageClassification
        model = AutoModelForImageClassification.from_pretrained({str(folder)!r}, trust_remote_code=True).eval()
        assert type(model).__module__.startswith("transformers_modules"), type(model).__module__
        pixels = torch.load({str(work / "pixels.pt")!r}, weights_only=True)
        with torch.no_grad():
            torch.save(model(pixel_values=pixels).logits, {str(work / "logits.pt")!r})
        """
    )
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env.update(HF_MODULES_CACHE=str(work / "modules"), HF_HUB_OFFLINE="1")
    done = subprocess.run(
        [sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return torch.load(work / "logits.pt", weights_only=True)
