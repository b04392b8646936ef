"""Where the policy comes from when none is named: the nearest ``pyguard.toml``, or ``pyproject.toml`` with a
``[tool.pyguard]`` table, in the current directory or one of its parents (as ruff and coverage find theirs).

Standard library only (no engine, no numpy): the pytest plugin resolves the file when pytest starts, and its import
stays cheap. The file is read by :meth:`pyguard.engine.PolicyConfig.from_toml`.
"""

from __future__ import annotations

import tomllib
from pathlib import Path

from pyguard.errors import ConfigError

__all__ = ["find_config_file"]

CONFIG_FILE_NAMES = ("pyguard.toml", "pyproject.toml")
"""Looked for in this order in each directory; a ``pyproject.toml`` counts only with a ``[tool.pyguard]`` table."""


def find_config_file(start: str | Path | None = None) -> Path | None:
    """The policy file to use when none is given, or None.

    In ``start`` (default: the current directory) and then each parent in turn: the first ``pyguard.toml``, or
    ``pyproject.toml`` with a ``[tool.pyguard]`` table (one without the table is passed over). The search stops at
    the filesystem root, or after a directory holding ``.git`` (a repository's root: a file above it belongs to
    something else). A ``pyproject.toml`` that is not valid TOML is a :class:`ConfigError` naming it.
    """
    here = Path(start if start is not None else Path.cwd()).resolve()
    for directory in (here, *here.parents):
        own = directory / CONFIG_FILE_NAMES[0]
        if own.is_file():
            return own
        pyproject = directory / CONFIG_FILE_NAMES[1]
        if pyproject.is_file() and _has_pyguard_table(pyproject):
            return pyproject
        if (directory / ".git").exists():
            return None
    return None


def _has_pyguard_table(path: Path) -> bool:
    try:
        data = tomllib.loads(path.read_bytes().decode("utf-8"))
    except OSError as exc:
        raise ConfigError(
            f"cannot read {str(path)!r} while looking for [tool.pyguard]: {exc.strerror}; fix it or name a policy file"
        ) from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ConfigError(
            f"{str(path)!r} is not valid TOML ({exc}), so pyguard cannot tell whether it holds [tool.pyguard];"
            " fix the file or name a policy file"
        ) from None
    tool = data.get("tool")
    return isinstance(tool, dict) and "pyguard" in tool
