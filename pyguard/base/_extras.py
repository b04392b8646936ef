"""Optional extras: import a heavy library only when a feature needs it, and say which extra to install.

    pa = require("pyarrow", extra="columnar", feature="Parquet traces")

``pip install pyguard`` stays light (pydantic, numpy, rich, click, JPype1, tomli-w: the engine, the JVM bridge, the
demo, replay, the calibration tables, check without a baseline); ``pip install 'pyguard[plot]'`` adds matplotlib
(calibration and trade-off plots), ``'pyguard[stats]'`` scipy (check's baseline tests, tune's intervals),
``'pyguard[otel]'``, ``'pyguard[columnar]'`` and ``'pyguard[ray]'`` OpenTelemetry, Parquet/DuckDB and Ray;
``'pyguard[all]'`` all of them. A missing one raises :class:`~pyguard.base.errors.MissingExtraError` naming the extra and
the command that installs it.
"""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import Any

from pyguard.base.errors import MissingExtraError

__all__: list[str] = []

EXTRAS: dict[str, tuple[str, ...]] = {
    "plot": ("matplotlib",),
    "stats": ("scipy",),
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


def agg_figure(feature: str, **kwargs: Any) -> Any:
    """A ``matplotlib.figure.Figure(**kwargs)`` on an Agg canvas (no pyplot, no GUI backend, no global state);
    MissingExtraError naming the ``plot`` extra when matplotlib is not installed."""
    figure = require("matplotlib.figure", extra="plot", feature=feature)
    agg = require("matplotlib.backends.backend_agg", extra="plot", feature=feature)
    fig = figure.Figure(**kwargs)
    agg.FigureCanvasAgg(fig)
    return fig
