"""The ``@pytest.mark.pyguard(...)`` marker: its arguments, checked when the tests are collected.

    @pytest.mark.pyguard(task_type="lookup", policy="policies/strict.toml", max_iterations=8)
    def test_agent_converges(pyguard_guard): ...

- ``task_type``: the task type every run of the test's ``pyguard_guard`` gets unless the run names its own;
- ``policy``: a TOML file (relative to the test file's folder), a dict of ``PolicyConfig`` fields, or a
  ``PolicyConfig``; it is laid over the session's ``--pyguard-policy``;
- ``max_iterations``: the hard cap on model calls per run (an int >= 1).

Markers on a class or module apply to every test in it; a marker closer to the test wins key by key. A bad argument
is found when the tests are collected (:class:`MarkerError`, naming the test, the argument and what is expected, with
the closest argument name for a misspelt one) and fails that test alone: the others run, and ``--co`` lists them all.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel, ConfigDict

from pyguard.base.errors import ConfigError, did_you_mean

__all__: list[str] = []

MARKER = "pyguard"
MARKER_HELP = (
    "pyguard(task_type=None, policy=None, max_iterations=None): configure the pyguard_guard fixture of this test "
    "(task type of its runs, a policy TOML file or dict laid over --pyguard-policy, a hard cap on model calls)"
)
_ALLOWED = ("task_type", "policy", "max_iterations")


class MarkerError(ConfigError):
    """A pyguard marker's bad argument: the message names the test and the argument. The plugin fails that test alone
    with it."""


class MarkerArgs(BaseModel):
    """The checked arguments of the test's pyguard markers, merged (closest marker wins key by key)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    task_type: str | None = None
    policy_file: Path | None = None
    """The marker's policy when it named a TOML file (resolved)."""
    policy_fields: dict[str, Any] | None = None
    """The marker's policy when it gave a dict or a PolicyConfig (as its dumped fields)."""
    max_iterations: int | None = None


def marker_args(item: pytest.Item) -> MarkerArgs:
    """Merge and check the pyguard markers of ``item`` (farthest first, so the closest wins)."""
    merged: dict[str, Any] = {}
    for mark in reversed(list(item.iter_markers(MARKER))):
        if mark.args:
            raise MarkerError(
                f"{item.nodeid}: @pytest.mark.pyguard takes keyword arguments only, got positional {mark.args!r}; "
                f"write e.g. @pytest.mark.pyguard(task_type={mark.args[0]!r})"
            )
        merged.update(mark.kwargs)
    return parse_marker_kwargs(merged, where=item.nodeid, base=Path(str(item.path)).parent)


def parse_marker_kwargs(kwargs: dict[str, Any], *, where: str, base: Path) -> MarkerArgs:
    """Check marker keyword arguments; raises :class:`MarkerError` naming the first bad one."""

    def bad(message: str) -> MarkerError:
        return MarkerError(f"{where}: @pytest.mark.pyguard {message}")

    unknown = sorted(set(kwargs) - set(_ALLOWED))
    if unknown:
        hint = did_you_mean(unknown[0], _ALLOWED)
        raise bad(f"got unknown argument {unknown[0]!r}{hint}: the arguments are {', '.join(_ALLOWED)}")

    task_type = kwargs.get("task_type")
    if task_type is not None and (not isinstance(task_type, str) or not task_type.strip()):
        raise bad(f"task_type={task_type!r} must be a non-empty string such as 'lookup'")

    max_iterations = kwargs.get("max_iterations")
    if max_iterations is not None and (
        isinstance(max_iterations, bool) or not isinstance(max_iterations, int) or max_iterations < 1
    ):
        raise bad(f"max_iterations={max_iterations!r} must be an integer >= 1")

    policy = kwargs.get("policy")
    policy_file: Path | None = None
    policy_fields: dict[str, Any] | None = None
    if policy is None:
        pass
    elif isinstance(policy, (str, Path)):
        policy_file = Path(policy) if Path(policy).is_absolute() else base / policy
        if not policy_file.is_file():
            raise bad(
                f"policy={str(policy)!r} is not a file (looked for {str(policy_file)!r}): give a TOML policy file"
            )
    elif isinstance(policy, dict):
        policy_fields = dict(policy)
    elif isinstance(policy, BaseModel):
        policy_fields = policy.model_dump()
    else:
        raise bad(
            f"policy={policy!r} must be a TOML file path, a dict of PolicyConfig fields or a PolicyConfig, "
            f"not {type(policy).__name__}"
        )
    if policy_fields is not None:
        _check_policy_fields(policy_fields, bad)

    return MarkerArgs(
        task_type=task_type,
        policy_file=policy_file,
        policy_fields=policy_fields,
        max_iterations=max_iterations,
    )


def _check_policy_fields(fields: dict[str, Any], bad) -> None:
    """Validate a policy dict against ``PolicyConfig`` (imported lazily: the engine is plain Python, no JVM)."""
    # lazy: the plugin loads in every pytest session; the engine (numpy) only for a test that uses it
    from pyguard.engine import PolicyConfig

    try:
        PolicyConfig.model_validate(fields)
    except ConfigError as exc:
        items = getattr(exc, "items", None) or [("", None, str(exc))]
        problems = "; ".join(f"{key!r} = {value!r}: {msg}" if key else msg for key, value, msg in items)
        raise bad(f"policy has bad fields: {problems}") from None
