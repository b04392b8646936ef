"""The plugin's command-line options and ini keys, read once into one :class:`PluginSettings`.

Every option has an ini twin (``--pyguard-trace-dir`` / ``pyguard_trace_dir``); the command line wins over the ini
file, except for the classpath, where both add up (the ini names the project's jars, the command line adds more).
Relative paths in the ini file are resolved against the ini file's folder, on the command line against the folder
pytest was started in. Without ``--pyguard-policy`` / ``pyguard_policy`` the policy is the nearest ``pyguard.toml`` or
``pyproject.toml`` with ``[tool.pyguard]`` from that folder up (:func:`pyguard.base.config_search.find_config_file`), as
the ``pyguard`` commands find theirs.
"""

from __future__ import annotations

import glob
import os
from pathlib import Path
from typing import Literal

import pytest
from pydantic import BaseModel, ConfigDict, ValidationError

from pyguard.base.config_search import find_config_file
from pyguard.base.errors import ConfigError, JvmError, PyguardError

__all__: list[str] = []

KEEP_CHOICES = ("failed", "all", "none")
RECORD_CHOICES = ("none", "once", "all")
DEFAULT_LIVE_IMAGE = "ollama/ollama:0.5.7"
"""An Ollama release whose OpenAI-compatible endpoint supports tool calls."""
DEFAULT_LIVE_MODEL = "qwen2.5:0.5b"
"""A small model (about 400 MB) that can call tools."""


class PluginSettings(BaseModel):
    """What the options and ini keys say, with paths resolved (but not yet checked to exist)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    classpath: tuple[str, ...] = ()
    """Classpath entries of the agent under test: jars, folders, or globs such as ``target/dependency/*.jar``."""
    trace_dir: Path | None = None
    """Where traces of kept tests go; None means ``<pytest basetemp>/pyguard-traces``."""
    policy: Path | None = None
    """A TOML file with the policy (``PolicyConfig``) every guard of the session starts from: the option, else the
    nearest ``pyguard.toml`` / ``[tool.pyguard]``, else None (the defaults)."""
    keep_traces: Literal["failed", "all", "none"] = "failed"
    """Keep the JSONL trace of failed tests only, of every test that ran a guard, or of none."""
    trace_mode: int = 0o600
    """Permission bits of kept trace files (traces hold prompts and tool output: owner only by default; ``0o640`` lets
    a CI artifact collector in the same group read them)."""
    record: Literal["none", "once", "all"] = "none"
    """``pyguard_cassette``: replay recordings only (``none``, the default: CI never reaches a model), record the ones
    that are missing (``once``), or record every one again (``all``)."""
    keep_earlier_traces: bool = False
    """Leave the traces an earlier session kept in ``trace_dir``; by default a session starts by removing them."""
    live_image: str = DEFAULT_LIVE_IMAGE
    """The container image of the live model server (``pyguard_live_model``)."""
    live_model: str = DEFAULT_LIVE_MODEL
    """The model the live server pulls and serves."""

    def resolved_classpath(self) -> list[str]:
        """The classpath entries with globs expanded; raises :class:`JvmError` naming an entry that matches nothing."""
        out: list[str] = []
        for entry in self.classpath:
            if glob.has_magic(entry):
                matches = sorted(glob.glob(entry))
                if not matches:
                    raise JvmError(
                        f"--pyguard-classpath entry {entry!r} matches no file: build the agent first "
                        "(for example `mvn package dependency:copy-dependencies`) or fix the pattern"
                    )
                out.extend(matches)
            elif not os.path.exists(entry):
                raise JvmError(
                    f"--pyguard-classpath entry {entry!r} does not exist: build the agent first (mvn package) "
                    "or fix the path"
                )
            else:
                out.append(entry)
        return out


def add_options(parser: pytest.Parser) -> None:
    group = parser.getgroup("pyguard", "pyguard: guarded Java LangChain4j agents")
    group.addoption(
        "--pyguard-classpath",
        action="append",
        default=[],
        metavar="PATHS",
        help="classpath of the agent under test (jars, folders, globs); repeatable, or an os.pathsep-separated list",
    )
    group.addoption(
        "--pyguard-trace-dir", default=None, metavar="DIR", help="where the JSONL traces of kept tests are written"
    )
    group.addoption("--pyguard-policy", default=None, metavar="TOML", help="a TOML file with the guard policy")
    group.addoption(
        "--pyguard-keep-traces",
        default=None,
        choices=KEEP_CHOICES,
        help="keep the traces of failed tests (default), of all tests, or of none",
    )
    group.addoption(
        "--pyguard-trace-mode",
        default=None,
        metavar="OCTAL",
        help="permission bits of kept trace files, e.g. 640 for group-readable (default 600: owner only)",
    )
    group.addoption(
        "--pyguard-keep-earlier-traces",
        action="store_true",
        default=None,
        help="leave the traces of earlier sessions in the trace dir (by default a session removes them first)",
    )
    group.addoption(
        "--pyguard-record",
        default=None,
        choices=RECORD_CHOICES,
        help="pyguard_cassette: replay recordings only (none, the default), record missing ones (once), or all again",
    )
    group.addoption(
        "--pyguard-by-conversation",
        action="store_true",
        default=False,
        help="the end-of-session summary also lists each test's conversations (an attached agent's memory ids)",
    )
    group.addoption("--pyguard-live-image", default=None, metavar="IMAGE", help="image of the live model server")
    group.addoption("--pyguard-live-model", default=None, metavar="NAME", help="model the live server serves")
    parser.addini(
        "pyguard_classpath",
        "classpath of the agent under test, one entry (or os.pathsep list) a line",
        type="linelist",
        default=[],
    )
    parser.addini("pyguard_trace_dir", "where the JSONL traces of kept tests are written", default="")
    parser.addini("pyguard_policy", "a TOML file with the guard policy", default="")
    parser.addini("pyguard_keep_traces", "failed | all | none", default="")
    parser.addini("pyguard_trace_mode", "permission bits of kept trace files, e.g. 640", default="")
    parser.addini(
        "pyguard_keep_earlier_traces",
        "leave the traces of earlier sessions in the trace dir",
        type="bool",
        default=False,
    )
    parser.addini("pyguard_record", "none | once | all", default="")
    parser.addini("pyguard_live_image", "image of the live model server", default="")
    parser.addini("pyguard_live_model", "model the live server serves", default="")


def settings_from_config(config: pytest.Config) -> PluginSettings:
    """Read the options and ini keys; a bad value is a ``pytest.UsageError`` naming it."""
    ini_dir = Path(config.inipath).parent if config.inipath else Path(config.rootpath)
    cli_dir = Path(config.invocation_params.dir)

    def ini(name: str) -> str:
        return str(config.getini(name) or "").strip()

    classpath: list[str] = []
    for line in config.getini("pyguard_classpath"):
        classpath.extend(_resolve(p, ini_dir) for p in str(line).split(os.pathsep) if p.strip())
    for value in config.getoption("pyguard_classpath") or []:
        classpath.extend(_resolve(p, cli_dir) for p in value.split(os.pathsep) if p.strip())

    def path_setting(option: str, key: str) -> Path | None:
        if config.getoption(option):
            return Path(_resolve(config.getoption(option), cli_dir))
        if ini(key):
            return Path(_resolve(ini(key), ini_dir))
        return None

    keep = config.getoption("pyguard_keep_traces") or ini("pyguard_keep_traces") or "failed"
    if keep not in KEEP_CHOICES:
        raise pytest.UsageError(f"pyguard_keep_traces = {keep!r} is not valid: use one of {', '.join(KEEP_CHOICES)}")
    policy = path_setting("pyguard_policy", "pyguard_policy")
    if policy is not None and not policy.is_file():
        raise pytest.UsageError(
            f"pyguard policy file {str(policy)!r} does not exist: fix --pyguard-policy / pyguard_policy"
        )
    if policy is None:
        try:
            policy = find_config_file(cli_dir)
        except ConfigError as exc:
            raise pytest.UsageError(one_line(str(exc))) from None
    if policy is not None:
        check_policy_file(policy)
    record = config.getoption("pyguard_record") or ini("pyguard_record") or "none"
    if record not in RECORD_CHOICES:
        raise pytest.UsageError(f"pyguard_record = {record!r} is not valid: use one of {', '.join(RECORD_CHOICES)}")
    try:
        return PluginSettings(
            record=record,
            classpath=tuple(classpath),
            trace_dir=path_setting("pyguard_trace_dir", "pyguard_trace_dir"),
            policy=policy,
            keep_traces=keep,
            trace_mode=parse_mode(config.getoption("pyguard_trace_mode") or ini("pyguard_trace_mode") or "600"),
            keep_earlier_traces=bool(
                config.getoption("pyguard_keep_earlier_traces") or config.getini("pyguard_keep_earlier_traces")
            ),
            live_image=config.getoption("pyguard_live_image") or ini("pyguard_live_image") or DEFAULT_LIVE_IMAGE,
            live_model=config.getoption("pyguard_live_model") or ini("pyguard_live_model") or DEFAULT_LIVE_MODEL,
        )
    except ValidationError as exc:  # pragma: no cover - every field is checked above
        raise pytest.UsageError(f"invalid pyguard settings: {exc}") from None


def parse_mode(text: str) -> int:
    """``600``, ``0640`` or ``0o640`` as permission bits; a ``pytest.UsageError`` naming anything else."""
    digits = text.strip().lower().removeprefix("0o")
    if not digits or any(c not in "01234567" for c in digits) or int(digits, 8) > 0o777:
        raise pytest.UsageError(
            f"pyguard_trace_mode = {text!r} is not valid: give octal permission bits such as 600 or 640"
        )
    return int(digits, 8)


def check_policy_file(policy: Path) -> None:
    """Read the session's policy once, at configure time: a policy pyguard cannot use stops the session with one line
    naming the file (instead of every test erroring with the same traceback)."""
    # lazy: the plugin loads in every pytest session; the engine (numpy) only for a test that uses it
    from pyguard.engine import PolicyConfig  # the engine is plain Python: no JVM, no jpype

    try:
        PolicyConfig.from_file(policy)
    except (PyguardError, ValueError) as exc:
        raise pytest.UsageError(f"pyguard policy {str(policy)!r} cannot be used: {one_line(str(exc))}") from None


def one_line(message: str) -> str:
    """A possibly multi-line message as one line (its lines joined by ``; ``)."""
    return "; ".join(part.strip() for part in message.splitlines() if part.strip())


def _resolve(path: str, base: Path) -> str:
    path = os.path.expanduser(path.strip())
    return path if os.path.isabs(path) else str(base / path)
