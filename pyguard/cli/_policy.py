"""The policy file of a command that reads one (``replay``, ``check``, ``tune``): ``--config``, else the nearest
``pyguard.toml`` or ``pyproject.toml`` with ``[tool.pyguard]`` (:func:`pyguard.config_search.find_config_file`), else
the defaults; and the line that says which."""

from __future__ import annotations

from pathlib import Path

from pyguard.config_search import find_config_file

__all__ = ["CONFIG_DEFAULT_HELP", "policy_file", "policy_line"]

CONFIG_DEFAULT_HELP = (
    "default: the nearest pyguard.toml, or pyproject.toml with [tool.pyguard], in this directory or a parent (up to"
    " the repository root), else the default policy"
)


def policy_file(config_path: Path | None) -> Path | None:
    """``--config`` when given, else the nearest config file, else None (the default policy)."""
    return config_path if config_path is not None else find_config_file()


def policy_line(path: Path | None, *, given: bool) -> str:
    """The header line naming the policy in use."""
    if path is None:
        return "policy: the defaults (no --config, and no pyguard.toml or [tool.pyguard] found)"
    table = " [tool.pyguard]" if path.name == "pyproject.toml" else ""
    return f"policy: {path}{table}" + ("" if given else " (found automatically)")
