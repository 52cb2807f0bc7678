# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""How analysed runs are shown: report.md / report.html (`write_report`), its blocks, the benchmark sections, the
figures and their captions, and the interval and reproduction sections. It reads what `hf_vitrobust.analysis`
computed: it never opens a predictions file and never computes an interval.
"""

from .document import write_report

__all__ = ["write_report"]
