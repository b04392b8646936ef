"""Where the policy comes from when none is named: the nearest ``pyguard.toml``, or ``pyproject.toml`` with a
``[tool.pyguard]`` table, in the current directory or one of its parents (as ruff and coverage find theirs).

Standard library only (no engine, no numpy): the pytest plugin resolves the file when pytest starts, and its import
stays cheap. A policy file's TOML, and its ``[tool.pyguard]`` table, are read here only (:func:`read_policy_table`);
:meth:`pyguard.engine.PolicyConfig.from_toml` validates what it returns.
"""

from __future__ import annotations

from pathlib import Path

from pyguard.base.errors import ConfigError
from pyguard.base.safe_reader import load_toml_text, read_file_bytes

__all__: list[str] = []

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
    data = _read_toml(
        path,
        what="the pyproject.toml looked in for [tool.pyguard]",
        invalid="{path} is not valid TOML ({error}), so pyguard cannot tell whether it holds [tool.pyguard]; fix the"
        " file or name a policy file",
    )
    tool = data.get("tool")
    return isinstance(tool, dict) and "pyguard" in tool


def read_policy_table(path: str | Path) -> tuple[dict, str]:
    """The policy table of a TOML file — the whole file, or its ``[tool.pyguard]`` table (a ``pyproject.toml``, or
    any file with a ``[tool]`` table) — and where it came from, for messages. ConfigError naming the file when it
    cannot be read, is not TOML, or lacks the table."""
    p = Path(path)
    data = _read_toml(p, what="policy config", invalid="{path} is not valid TOML: {error}; fix the file")
    if "tool" in data or p.name == "pyproject.toml":
        tool = data.get("tool", {})
        if not isinstance(tool, dict) or "pyguard" not in tool:
            raise ConfigError(f"{str(p)!r} has no [tool.pyguard] table; add one or pass a plain policy TOML file")
        return tool["pyguard"], f"{p} [tool.pyguard]"
    return data, str(p)


def read_toml_safely(path: str | Path, what: str = "policy config") -> dict:
    """A TOML file read through the safe reader's limits (:mod:`pyguard.base.safe_reader`: size, nesting, integers); a
    :class:`ConfigError` naming the file and what is wrong (or the limit) otherwise."""
    return _read_toml(Path(path), what=what, invalid="{path} is not valid TOML: {error}; fix the file")


def _read_toml(path: Path, *, what: str, invalid: str) -> dict:
    """``path``'s TOML through the safe reader; ``invalid`` (``{path}``, ``{error}``) words a parse error."""
    shown = repr(str(path))
    raw = read_file_bytes(path, what=what, error=ConfigError)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError(invalid.format(path=shown, error=exc)) from None
    prefix = f"{shown} is not valid TOML: "

    def refused(message: str) -> ConfigError:  # a parse error in the caller's words; a limit's message as it is
        if message.startswith(prefix):
            return ConfigError(invalid.format(path=shown, error=message.removeprefix(prefix)))
        return ConfigError(f"{message}; fix the file")

    return load_toml_text(text, source=shown, error=refused)
