# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""The dtype a checkpoint's weights were stored in, read without loading them.

`load_classifier` runs every model in float32 unless a dtype is asked for (transformers 5's `from_pretrained` would
otherwise keep a bf16 checkpoint in bf16), so the stored dtype is not the dtype a model runs in; results.json records
both. Sources, most direct first: the safetensors headers of the weight files (the dtype of every tensor, no tensor
data read), a `.bin`/`.pth` state dict memory-mapped (its tensors' dtypes, no data read), then config.json's
`dtype` (transformers 5) or `torch_dtype` (transformers 4). The answer is a dtype name ("bfloat16"), or the names of
a mixed checkpoint joined by "+", most tensors first ("bfloat16+float32"); None when nothing says.
"""

from __future__ import annotations

import json
import struct
from collections import Counter
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import torch

# safetensors' dtype codes of floating tensors -> torch's names; integer buffers (position ids) say nothing about
# the precision of the weights.
_SAFETENSORS_FLOATS = {
    "F64": "float64",
    "F32": "float32",
    "F16": "float16",
    "BF16": "bfloat16",
    "F8_E4M3": "float8_e4m3fn",
    "F8_E5M2": "float8_e5m2",
}
SAFETENSORS_WEIGHTS = "model.safetensors"
SAFETENSORS_INDEX = "model.safetensors.index.json"
TORCH_WEIGHTS = ("pytorch_model.bin", "open_clip_pytorch_model.bin")


def describe_dtypes(counts: Mapping[str, int]) -> str | None:
    """One dtype name, or the names of a mixed checkpoint joined by "+" (most tensors first, then by name)."""
    names = sorted(
        (name for name, count in counts.items() if count > 0), key=lambda name: (-counts[name], name)
    )
    return "+".join(names) or None


def safetensors_dtype_counts(path: str | Path) -> Counter[str]:
    """How many floating tensors of each dtype a safetensors file holds, from its JSON header alone."""
    with open(path, "rb") as file:
        (length,) = struct.unpack("<Q", file.read(8))
        header = json.loads(file.read(length))
    return Counter(
        _SAFETENSORS_FLOATS[entry["dtype"]]
        for name, entry in header.items()
        if name != "__metadata__" and entry.get("dtype") in _SAFETENSORS_FLOATS
    )


def state_dict_dtype_counts(path: str | Path) -> Counter[str]:
    """How many floating tensors of each dtype a torch state dict file holds (memory-mapped: no data is read)."""
    state = torch.load(path, map_location="cpu", mmap=True, weights_only=True)
    state = state.get("state_dict", state) if isinstance(state, Mapping) else {}
    return Counter(
        str(tensor.dtype).removeprefix("torch.")
        for tensor in state.values()
        if isinstance(tensor, torch.Tensor) and tensor.is_floating_point()
    )


def tensors_dtype(tensors: Iterable[torch.Tensor]) -> str | None:
    """The stored dtype of tensors already in memory (a state dict's values)."""
    return describe_dtypes(
        Counter(str(t.dtype).removeprefix("torch.") for t in tensors if t.is_floating_point())
    )


def weight_files_dtype(files: Iterable[str | Path]) -> str | None:
    """The stored dtype of a checkpoint's weight files (safetensors or torch state dicts); None when none of them
    can be read."""
    counts: Counter[str] = Counter()
    for file in files:
        try:
            if str(file).endswith(".safetensors"):
                counts += safetensors_dtype_counts(file)
            else:
                counts += state_dict_dtype_counts(file)
        except (OSError, ValueError, RuntimeError, KeyError, struct.error, TypeError):
            continue
    return describe_dtypes(counts)


def config_dtype(config: Mapping[str, Any]) -> str | None:
    """config.json's `dtype` (transformers 5) or `torch_dtype` (transformers 4), as a dtype name."""
    for key in ("dtype", "torch_dtype"):
        value = config.get(key)
        if isinstance(value, str) and isinstance(getattr(torch, value, None), torch.dtype):
            return value
    return None


def folder_weight_files(folder: str | Path) -> list[Path]:
    """The weight files transformers or timm would read from `folder`: the safetensors shards of an index, else
    model.safetensors, else the torch state dict."""
    folder = Path(folder)
    index = folder / SAFETENSORS_INDEX
    if index.is_file():
        shards = json.loads(index.read_text(encoding="utf-8")).get("weight_map", {}).values()
        return [folder / shard for shard in sorted(set(shards))]
    for name in (SAFETENSORS_WEIGHTS, *TORCH_WEIGHTS):
        if (folder / name).is_file():
            return [folder / name]
    return sorted(folder.glob("*.safetensors"))


def folder_stored_dtype(folder: str | Path) -> str | None:
    """The stored dtype of the checkpoint in a local folder: from its weight files, else its config.json."""
    found = weight_files_dtype(folder_weight_files(folder))
    if found is not None:
        return found
    config_file = Path(folder) / "config.json"
    try:
        config = json.loads(config_file.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return config_dtype(config) if isinstance(config, Mapping) else None


def hub_cache_stored_dtype(repo_id: str, **hub_kwargs: Any) -> str | None:
    """The stored dtype of a Hub repository's checkpoint from the local Hugging Face cache only (the files a load
    just fetched); never reaches the Hub. Sharded checkpoints and repos missing from the cache fall back to the
    cached config.json, else None."""
    from huggingface_hub import try_to_load_from_cache

    where = {key: hub_kwargs[key] for key in ("cache_dir", "revision") if hub_kwargs.get(key) is not None}
    subfolder = hub_kwargs.get("subfolder") or ""

    def cached(name: str) -> str | None:
        path = try_to_load_from_cache(repo_id, f"{subfolder}/{name}" if subfolder else name, **where)
        return path if isinstance(path, str) else None

    index = cached(SAFETENSORS_INDEX)
    if index is not None:
        shards = sorted(
            set(json.loads(Path(index).read_text(encoding="utf-8")).get("weight_map", {}).values())
        )
        files = [cached(shard) for shard in shards]
        found = weight_files_dtype(file for file in files if file is not None)
    else:
        single = (cached(name) for name in (SAFETENSORS_WEIGHTS, *TORCH_WEIGHTS))
        first = next((file for file in single if file is not None), None)
        found = None if first is None else weight_files_dtype([first])
    if found is not None:
        return found
    config_file = cached("config.json")
    if config_file is None:
        return None
    try:
        config = json.loads(Path(config_file).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return config_dtype(config) if isinstance(config, Mapping) else None


__all__ = [
    "config_dtype",
    "describe_dtypes",
    "folder_stored_dtype",
    "folder_weight_files",
    "hub_cache_stored_dtype",
    "safetensors_dtype_counts",
    "state_dict_dtype_counts",
    "tensors_dtype",
    "weight_files_dtype",
]
