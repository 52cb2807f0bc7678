# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""`python -m hf_vitrobust ...` runs the `vitrobust` command line."""

from __future__ import annotations

import sys

from .cli import main

sys.exit(main())
