"""Deprecated: the Parquet summaries moved next to the rules they compute.

``check_parquet`` / ``check_summary`` are in :mod:`pyguard.check.parquet`, ``calibrate_parquet`` /
``calibration_arrays`` in :mod:`pyguard.calibrate.parquet`, both over :mod:`pyguard.store.sql`. This alias forwards
the old names with a DeprecationWarning, by name and on first use only, so that ``pyguard.store`` imports nothing
above it. To be removed once nothing imports it.
"""

from __future__ import annotations

import importlib
import warnings
from typing import Any

__all__: list[str] = []

_MOVED = {
    "check_parquet": "pyguard.check.parquet",
    "check_summary": "pyguard.check.parquet",
    "check_facts": "pyguard.check.parquet",
    "calibrate_parquet": "pyguard.calibrate.parquet",
    "calibration_arrays": "pyguard.calibrate.parquet",
}


def __getattr__(name: str) -> Any:
    home = _MOVED.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    warnings.warn(f"pyguard.store.summaries.{name} moved: import it from {home}", DeprecationWarning, stacklevel=2)
    return getattr(importlib.import_module(home), name)
