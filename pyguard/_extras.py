"""Optional extras: import a heavy library only when a feature needs it, and say which extra to install.

    pa = require("pyarrow", extra="columnar", feature="Parquet traces")

``pip install pyguard`` stays light; ``pip install 'pyguard[otel]'``, ``'pyguard[columnar]'`` and
``'pyguard[ray]'`` add OpenTelemetry, Parquet/DuckDB and Ray. A missing one raises
:class:`~pyguard.errors.MissingExtraError` naming the extra and the command that installs it.
"""

from __future__ import annotations

import importlib
from types import ModuleType

from pyguard.errors import MissingExtraError

__all__ = ["EXTRAS", "require"]

EXTRAS: dict[str, tuple[str, ...]] = {
    "otel": ("opentelemetry-sdk", "opentelemetry-exporter-otlp-proto-http"),
    "columnar": ("pyarrow", "duckdb"),
    "ray": ("ray",),
}
"""Extra name -> the packages it installs (as in pyproject.toml)."""


def require(module: str, *, extra: str, feature: str) -> ModuleType:
    """Import ``module``; when it is not installed, raise MissingExtraError naming ``extra`` and ``feature``."""
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as exc:
        top = module.split(".")[0]
        if exc.name is None or exc.name.split(".")[0] != top:
            raise
        packages = ", ".join(EXTRAS.get(extra, ()))
        raise MissingExtraError(
            f"{feature} needs the optional extra '{extra}' ({packages}), which is not installed (no module "
            f"{exc.name!r}): pip install 'pyguard[{extra}]'"
        ) from None
