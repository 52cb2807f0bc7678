# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""Convert checkpoints of the official AlterNet code (github xxxnell/how-do-vits-work) to transformers format.

The official code saves `{"name": ..., "state_dict": ..., "optimizer": ...}` with `torch.save`; module names follow
models/alternet.py (`layer0` stem, `layer1..4` stages, `classifier.0` BN-GAP head). The mapping is one-to-one: every
official tensor has exactly one place here and nothing is left over, which `convert_official_state_dict` checks.

    python -m hf_vitrobust.models.alternet.convert_alternet_to_hf --official-checkpoint ckpt.pth.tar \
        --variant alternet-50 --num-labels 1000 --output ./alternet-50

(named like transformers' conversion scripts; `python -m hf_vitrobust.models.alternet.convert` runs the same.)
"""

import argparse
import json
import os
import re
from collections.abc import Mapping

import torch

from ..state_dict_checks import check_fits_model
from .configuration_alternet import ALTERNET_PRESETS, AlterNetConfig
from .image_processing_alternet import (
    CIFAR100_MEAN,
    CIFAR100_STD,
    IMAGENET_MEAN,
    IMAGENET_STD,
    alternet_image_processor,
)
from .modeling_alternet import AlterNetForImageClassification
from .saving import save_alternet

# (official pattern, our replacement), applied in order, first match wins. `{B}` is a block prefix.
_BLOCK = r"^layer([1-9])\.(\d+)\."
_KEY_RULES: list[tuple[str, str]] = [
    (r"^layer0\.layer0\.0\.weight$", "embeddings.convolution.weight"),
    (_BLOCK + r"shortcut\.0\.weight$", "shortcut.weight"),
    # Conv blocks (preresnet_dnn_block.BasicBlock / Bottleneck).
    (_BLOCK + r"bn\.(.+)$", r"norm1.\3"),
    (_BLOCK + r"conv1\.weight$", "conv1.weight"),
    (_BLOCK + r"conv2\.0\.(.+)$", r"norm2.\3"),
    (_BLOCK + r"conv2\.2\.weight$", "conv2.weight"),
    (_BLOCK + r"conv3\.0\.(.+)$", r"norm3.\3"),
    (_BLOCK + r"conv3\.2\.weight$", "conv3.weight"),
    # Attention blocks (alternet.AttentionBlockB / AttentionBasicBlockB).
    (_BLOCK + r"norm1\.(.+)$", r"norm1.\3"),
    (_BLOCK + r"conv\.weight$", "conv.weight"),
    (_BLOCK + r"norm2\.(.+)$", r"norm2.\3"),
    (_BLOCK + r"attn\.attn\.to_q\.weight$", "attention.query.weight"),
    (_BLOCK + r"attn\.attn\.to_kv\.weight$", "attention.key_value.weight"),
    (_BLOCK + r"attn\.attn\.to_out\.0\.(weight|bias)$", r"attention.output.\3"),
    (_BLOCK + r"attn\.pos_embedding$", "attention.relative_position_bias_table"),
    # Head (classifier_block.BNGAPBlock).
    (r"^classifier\.0\.bn\.(.+)$", r"norm.\1"),
    (r"^classifier\.0\.dense\.(weight|bias)$", r"classifier.\1"),
]


def rename_official_key(key: str) -> str:
    """Our parameter name (relative to `AlterNetForImageClassification`) for one official key."""
    for pattern, replacement in _KEY_RULES:
        match = re.match(pattern, key)
        if match is None:
            continue
        if pattern.startswith(_BLOCK):
            stage, block = int(match.group(1)) - 1, int(match.group(2))
            suffix = match.expand(replacement)
            return f"alternet.encoder.stages.{stage}.layers.{block}.{suffix}"
        if replacement.startswith("classifier."):
            return match.expand(replacement)
        return "alternet." + match.expand(replacement)
    raise KeyError(f"Official AlterNet key {key!r} matches no conversion rule.")


def unwrap_official_checkpoint(checkpoint: Mapping) -> dict[str, torch.Tensor]:
    """The model tensors of an official checkpoint: `checkpoint["state_dict"]`, without a DataParallel prefix."""
    state_dict = checkpoint.get("state_dict", checkpoint)
    return {key.removeprefix("module."): value for key, value in state_dict.items()}


def convert_official_state_dict(
    official_state_dict: Mapping[str, torch.Tensor], config: AlterNetConfig
) -> dict[str, torch.Tensor]:
    """Rename an official state dict and check it against `config`: same keys, same shapes, nothing left over."""
    converted = {rename_official_key(key): value for key, value in official_state_dict.items()}
    with torch.device("meta"):
        check_fits_model(
            converted,
            AlterNetForImageClassification(config),
            "The official checkpoint does not fit this config (wrong --variant or --num-labels?).",
        )
    return converted


def convert_official_checkpoint(
    checkpoint_path: str | os.PathLike,
    variant: str,
    num_labels: int,
    id2label: Mapping[int, str] | None = None,
    **config_overrides,
) -> AlterNetForImageClassification:
    """Load an official checkpoint (safely, `weights_only=True`) into an `AlterNetForImageClassification`.

    `id2label` names the classes (for ImageNet: `hf_vitrobust.models.imagenet.imagenet_id2label()`, the order of
    the official code's ImageFolder, which sorts the wnids).
    """
    if id2label is not None:
        if sorted(int(k) for k in id2label) != list(range(num_labels)):
            raise ValueError(f"id2label must have exactly the keys 0..{num_labels - 1}.")
        id2label = {int(k): str(v) for k, v in id2label.items()}
        config_overrides.update(id2label=id2label, label2id={v: k for k, v in id2label.items()})
    checkpoint = torch.load(checkpoint_path, map_location="cpu", weights_only=True)
    config = AlterNetConfig.from_preset(variant, num_labels=num_labels, **config_overrides)
    state_dict = convert_official_state_dict(unwrap_official_checkpoint(checkpoint), config)
    model = AlterNetForImageClassification(config)
    model.load_state_dict(state_dict, strict=True)
    return model.eval()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--official-checkpoint", required=True, help="A .pth/.pth.tar saved by the official code."
    )
    parser.add_argument("--variant", required=True, choices=sorted(ALTERNET_PRESETS))
    parser.add_argument("--num-labels", type=int, required=True)
    parser.add_argument("--output", required=True, help="Folder to write the transformers checkpoint to.")
    parser.add_argument(
        "--normalization",
        choices=("imagenet", "cifar100"),
        default=None,
        help="Mean/std of the saved image processor (default: cifar100 for *-cifar variants, else imagenet).",
    )
    parser.add_argument(
        "--id2label",
        default=None,
        help="A JSON file {index: class name} to store in the config (default: LABEL_0, LABEL_1, ...).",
    )
    parser.add_argument(
        "--no-remote-code", action="store_true", help="Do not copy the model files beside it."
    )
    args = parser.parse_args(argv)

    if not os.path.isfile(args.official_checkpoint):
        parser.error(f"--official-checkpoint {args.official_checkpoint!r} is not a file.")
    if args.num_labels <= 0:
        parser.error(f"--num-labels must be positive, got {args.num_labels}.")
    id2label = None
    if args.id2label is not None:
        try:
            with open(args.id2label) as file:
                id2label = json.load(file)
        except (OSError, json.JSONDecodeError) as err:
            parser.error(f"--id2label {args.id2label!r} is not a readable JSON file: {err}")
    model = convert_official_checkpoint(args.official_checkpoint, args.variant, args.num_labels, id2label)
    normalization = args.normalization or ("cifar100" if args.variant.endswith("-cifar") else "imagenet")
    mean, std = (
        (CIFAR100_MEAN, CIFAR100_STD) if normalization == "cifar100" else (IMAGENET_MEAN, IMAGENET_STD)
    )
    processor = alternet_image_processor(model.config, image_mean=mean, image_std=std)
    save_alternet(model, args.output, image_processor=processor, remote_code=not args.no_remote_code)
    print(
        f"Wrote {args.variant} ({sum(p.numel() for p in model.parameters()):,} parameters) to {args.output}"
    )


if __name__ == "__main__":
    main()
