"""The policy file of a command that reads one (``replay``, ``check``, ``tune``): ``--config``, else the nearest
``pyguard.toml`` or ``pyproject.toml`` with ``[tool.pyguard]`` (:func:`pyguard.base.config_search.find_config_file`), else
the defaults; and the line that says which."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from pyguard.base.config_search import find_config_file
from pyguard.engine import PolicyConfig

if TYPE_CHECKING:  # pragma: no cover
    from pyguard.engine import PolicyConfig

__all__: list[str] = []

CONFIG_DEFAULT_HELP = (
    "default: the nearest pyguard.toml, or pyproject.toml with [tool.pyguard], in this directory or a parent (up to"
    " the repository root), else the default policy"
)


def policy_file(config_path: Path | None) -> Path | None:
    """``--config`` when given, else the nearest config file, else None (the default policy)."""
    return config_path if config_path is not None else find_config_file()


def load_policy(config_path: Path | None) -> tuple[PolicyConfig, Path | None]:
    """The policy and its file: ``--config`` when given, else :meth:`PolicyConfig.discover` (the nearest config file,
    else the defaults and None) — the CLI's no-config path is the one the README gives Python users."""

    if config_path is not None:
        return PolicyConfig.from_file(config_path), config_path
    return PolicyConfig.discover()


def policy_line(path: Path | None, *, given: bool) -> str:
    """The header line naming the policy in use."""
    if path is None:
        return "policy: the defaults (no --config, and no pyguard.toml or [tool.pyguard] found)"
    table = " [tool.pyguard]" if path.name == "pyproject.toml" else ""
    return f"policy: {path}{table}" + ("" if given else " (found automatically)")


def config_option(what: str) -> Callable[[Any], Any]:
    """The one ``--config`` option (replay, check, tune): an existing file, passed as ``config_path``; ``what`` opens
    its help (what the policy is used for there)."""
    return click.option(
        "--config",
        "config_path",
        type=click.Path(exists=True, dir_okay=False, path_type=Path),
        default=None,
        help=f"{what} (a TOML file, or a pyproject.toml with [tool.pyguard]; {CONFIG_DEFAULT_HELP}).",
    )
