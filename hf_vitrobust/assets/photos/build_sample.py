# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""Build the bundled sample of real photos (the offline demo's "imagenet-val") and its `manifest.csv`.

Every image is a photo bundled in scikit-image's wheel (no download), optionally cropped and resized, saved as a
JPEG of quality 90 by Pillow. `SAMPLE` below is the whole provenance: source function, crop box, resize. The labels
are ImageNet-1k classes a person agrees with (checked by eye, see LICENSE.md); the builtin EfficientNet-Lite0's
top-1 and top-5 are recorded beside them, and may disagree with the label.

    python hf_vitrobust/assets/photos/build_sample.py            # rewrite the images and manifest.csv here
    python hf_vitrobust/assets/photos/build_sample.py --no-model # images only; model columns left empty

With Pillow 13, `chelsea.jpg` and `coffee.jpg` come out byte for byte as first shipped.
"""

from __future__ import annotations

import argparse
import csv
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from PIL import Image

HERE = Path(__file__).resolve().parent
JPEG_QUALITY = 90
#: New images are saved with the shorter side at most this long (the two original photos are kept as they were).
MAX_SHORTER_SIDE = 320
MANIFEST_COLUMNS = (
    "file",
    "label",
    "wnid",
    "class_name",
    "source",
    "crop",
    "size",
    "builtin_top1",
    "builtin_top1_name",
    "builtin_top1_probability",
    "label_in_builtin_top5",
)


@dataclass(frozen=True)
class Photo:
    """One image of the sample.

    file: the JPEG's name (also the sample id). source: the `skimage.data` function. label: ImageNet-1k index.
    crop: (x0, y0, x1, y1) in the source photo's pixels (x1, y1 exclusive), or None for the whole photo.
    shorter_side: resize (Lanczos) so the shorter side has this length; None keeps the size.
    """

    file: str
    source: str
    label: int
    crop: tuple[int, int, int, int] | None = None
    shorter_side: int | None = MAX_SHORTER_SIDE


EGYPTIAN_CAT, ESPRESSO, MISSILE, SPACE_SHUTTLE, TRIPOD = 285, 967, 657, 812, 872

SAMPLE: tuple[Photo, ...] = (
    # Chelsea the cat (a brown ticked tabby): ImageNet's cat classes 281 tabby, 282 tiger cat and 285 Egyptian
    # cat overlap; 285, as the rest of this project labels this photo.
    Photo("chelsea.jpg", "chelsea", EGYPTIAN_CAT, shorter_side=None),
    Photo("chelsea_face.jpg", "chelsea", EGYPTIAN_CAT, (60, 0, 400, 300)),
    Photo("chelsea_eyes.jpg", "chelsea", EGYPTIAN_CAT, (110, 40, 370, 290)),
    Photo("chelsea_muzzle.jpg", "chelsea", EGYPTIAN_CAT, (150, 100, 350, 300)),
    Photo("chelsea_left.jpg", "chelsea", EGYPTIAN_CAT, (0, 0, 300, 300)),
    Photo("chelsea_right.jpg", "chelsea", EGYPTIAN_CAT, (151, 0, 451, 300)),
    Photo("chelsea_small.jpg", "chelsea", EGYPTIAN_CAT, shorter_side=112),
    # A cup of espresso on a saucer with a spoon, on a wooden bar.
    Photo("coffee.jpg", "coffee", ESPRESSO, shorter_side=None),
    Photo("coffee_cup.jpg", "coffee", ESPRESSO, (160, 10, 430, 300)),
    Photo("coffee_crema.jpg", "coffee", ESPRESSO, (170, 15, 410, 215)),
    Photo("coffee_saucer.jpg", "coffee", ESPRESSO, (70, 10, 490, 390)),
    Photo("coffee_spoon.jpg", "coffee", ESPRESSO, (160, 10, 480, 340)),
    Photo("coffee_left.jpg", "coffee", ESPRESSO, (0, 0, 400, 400)),
    Photo("coffee_right.jpg", "coffee", ESPRESSO, (200, 0, 600, 400)),
    Photo("coffee_small.jpg", "coffee", ESPRESSO, shorter_side=120),
    # A Falcon 9 rocket on its launch pad between lightning towers (ImageNet's "missile" holds such photos).
    Photo("rocket.jpg", "rocket", MISSILE),
    Photo("rocket_center.jpg", "rocket", MISSILE, (160, 60, 480, 427)),
    Photo("rocket_pad.jpg", "rocket", MISSILE, (200, 100, 440, 427)),
    Photo("rocket_body.jpg", "rocket", MISSILE, (230, 120, 410, 427)),
    Photo("rocket_nose.jpg", "rocket", MISSILE, (260, 110, 380, 260)),
    Photo("rocket_left.jpg", "rocket", MISSILE, (0, 0, 427, 427)),
    Photo("rocket_right.jpg", "rocket", MISSILE, (213, 0, 640, 427)),
    Photo("rocket_small.jpg", "rocket", MISSILE, shorter_side=128),
    # The model of a space shuttle (orbiter, tank and boosters) behind the astronaut Eileen Collins.
    Photo("astronaut_shuttle.jpg", "astronaut", SPACE_SHUTTLE, (320, 0, 512, 300)),
    Photo("astronaut_shuttle_tall.jpg", "astronaut", SPACE_SHUTTLE, (340, 0, 480, 290)),
    Photo("astronaut_shuttle_tight.jpg", "astronaut", SPACE_SHUTTLE, (350, 60, 465, 280)),
    # A photographer at a camera on a tripod (a greyscale photo, saved as RGB).
    Photo("camera.jpg", "camera", TRIPOD),
    Photo("camera_tripod.jpg", "camera", TRIPOD, (200, 120, 420, 512)),
    Photo("camera_tripod_legs.jpg", "camera", TRIPOD, (220, 280, 420, 512)),
)


def source_photo(name: str) -> np.ndarray:
    """The bundled scikit-image photo `name` as an RGB uint8 (H, W, 3) array (greyscale repeated on 3 channels)."""
    import skimage.data

    array = getattr(skimage.data, name)()
    if array.ndim == 2:
        array = np.repeat(array[..., None], 3, axis=-1)
    return np.ascontiguousarray(array[..., :3])


def render(photo: Photo) -> Image.Image:
    """The image of `photo` before JPEG encoding: the source photo, cropped, then resized."""
    array = source_photo(photo.source)
    if photo.crop is not None:
        x0, y0, x1, y1 = photo.crop
        if not (0 <= x0 < x1 <= array.shape[1] and 0 <= y0 < y1 <= array.shape[0]):
            raise ValueError(
                f"{photo.file}: crop {photo.crop} is outside the {array.shape[1]}x{array.shape[0]} photo"
            )
        array = array[y0:y1, x0:x1]
    image = Image.fromarray(np.ascontiguousarray(array))
    if photo.shorter_side is not None and min(image.size) > photo.shorter_side:
        scale = photo.shorter_side / min(image.size)
        size = (max(1, round(image.width * scale)), max(1, round(image.height * scale)))
        image = image.resize(size, Image.Resampling.LANCZOS)
    return image


def crop_text(photo: Photo) -> str:
    return "full" if photo.crop is None else ",".join(str(v) for v in photo.crop)


def builtin_predictions(paths: list[Path]) -> list[tuple[int, float, list[int]]]:
    """(top-1 index, top-1 probability, top-5 indices) of the builtin EfficientNet-Lite0 for each file, with the
    model's own preprocessing (shorter side 256 bicubic, centre crop 224)."""
    import torch

    from hf_vitrobust.models import load_classifier

    classifier = load_classifier("builtin:efficientnet_lite0", device="cpu")
    images = []
    for path in paths:
        with Image.open(path) as image:
            images.append(image.convert("RGB"))
    with torch.no_grad():
        top = classifier.predict_topk(classifier.preprocess(images), k=5)
    return [
        (int(indices[0]), float(probabilities[0]), [int(i) for i in indices])
        for indices, probabilities in zip(top.indices.tolist(), top.probabilities.tolist(), strict=True)
    ]


def build(output: Path = HERE, with_model: bool = True) -> list[dict[str, str]]:
    """Write every image of `SAMPLE` and `manifest.csv` into `output`; returns the manifest rows."""
    from hf_vitrobust.models.imagenet import IMAGENET_CLASS_NAMES, IMAGENET_WNIDS

    output.mkdir(parents=True, exist_ok=True)
    paths, sizes = [], []
    for photo in SAMPLE:
        path = output / photo.file
        image = render(photo)
        image.save(path, format="JPEG", quality=JPEG_QUALITY)
        paths.append(path)
        sizes.append(f"{image.width}x{image.height}")
    predictions = builtin_predictions(paths) if with_model else [None] * len(paths)
    rows = []
    for photo, size, predicted in zip(SAMPLE, sizes, predictions, strict=True):
        row = {
            "file": photo.file,
            "label": str(photo.label),
            "wnid": IMAGENET_WNIDS[photo.label],
            "class_name": IMAGENET_CLASS_NAMES[photo.label],
            "source": f"skimage.data.{photo.source}",
            "crop": crop_text(photo),
            "size": size,
            "builtin_top1": "",
            "builtin_top1_name": "",
            "builtin_top1_probability": "",
            "label_in_builtin_top5": "",
        }
        if predicted is not None:
            top1, probability, top5 = predicted
            row["builtin_top1"] = str(top1)
            row["builtin_top1_name"] = IMAGENET_CLASS_NAMES[top1]
            row["builtin_top1_probability"] = f"{probability:.4f}"
            row["label_in_builtin_top5"] = str(photo.label in top5).lower()
        rows.append(row)
    with open(output / "manifest.csv", "w", encoding="utf-8", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=MANIFEST_COLUMNS, lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--output", type=Path, default=HERE, help="folder to write into (default: this one)")
    parser.add_argument("--no-model", action="store_true", help="skip the builtin model's predictions")
    args = parser.parse_args()
    rows = build(args.output, with_model=not args.no_model)
    if not args.no_model:
        top1 = sum(row["builtin_top1"] == row["label"] for row in rows)
        top5 = sum(row["label_in_builtin_top5"] == "true" for row in rows)
        print(f"{len(rows)} images; builtin top-1 {top1}/{len(rows)}, top-5 {top5}/{len(rows)}")


if __name__ == "__main__":
    main()
