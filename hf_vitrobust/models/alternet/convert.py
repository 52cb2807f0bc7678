# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""The converter's former name, kept so that `python -m hf_vitrobust.models.alternet.convert ...` and
`from hf_vitrobust.models.alternet.convert import ...` keep working; the code is `convert_alternet_to_hf.py`."""

from .convert_alternet_to_hf import (
    convert_official_checkpoint,
    convert_official_state_dict,
    main,
    rename_official_key,
    unwrap_official_checkpoint,
)

__all__ = [
    "convert_official_checkpoint",
    "convert_official_state_dict",
    "main",
    "rename_official_key",
    "unwrap_official_checkpoint",
]

if __name__ == "__main__":
    main()
