"""The policy of a Guard's traces, written once per trace folder; each run's header holds its digest and settings.

A run's ``run_start`` header used to hold the whole policy: a policy of 10 MB (thousands of task types) made every
trace of a folder 10 MB heavier. Now the Guard's header holds ``policy`` =

    {"digest": "sha256:<hex>", "file": "policy-<16 hex>.toml", <the policy's top-level settings>, "stop": ...,
     "task_type": <the run's own [task_types.X] table, if any>}

and the whole policy is written once beside the traces, as ``policy-<16 hex digits of its digest>.toml`` (a policy
TOML file: ``pyguard replay --config`` takes it as it is). The top-level settings are the policy's numbers, flags and
modes (its tables are in the file); ``stop`` is kept in the header when it is small, so replay judges the run by its
recorded stop conditions even without the file.

Readers (:func:`pyguard.trace.read_trace`, ``load_runs``) put the whole policy back into the header from the file
beside the trace, after checking its digest; a header whose file is missing or altered keeps its digest and settings
(with a :class:`~pyguard.trace.records.TraceWarning`). The digest is SHA-256 of the policy (its keys whose value is
null left out) as canonical JSON: sorted keys, no spaces, UTF-8.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import re
import uuid
import warnings
import weakref
from pathlib import Path
from typing import Any

from pyguard.base.config_search import read_toml_safely
from pyguard.base.errors import ConfigError
from pyguard.trace.records import TraceWarning

__all__: list[str] = []

_FILE = re.compile(r"^policy-[0-9a-f]{16}\.toml$")
_STOP_IN_HEADER_BYTES = 65_536
_written: set[tuple[str, str]] = set()
_dumps: dict[int, tuple[weakref.ref, dict[str, Any]]] = {}
_digests: list[tuple[tuple[Any, ...], str]] = []  # (the policy's top-level values, its digest), the latest few


def dumped_policy(config: Any) -> dict[str, Any]:
    """``config.model_dump(mode="json")`` (a :class:`~pyguard.engine.PolicyConfig`), made once per config object: a
    guard's runs share one dump, and their trace headers one digest (a 20 MB policy cost each run 0.8 s to dump and
    1.6 s to digest, measured on the 2-core machine, 2026-12-02)."""
    held = _dumps.get(id(config))
    if held is not None and held[0]() is config:
        return held[1]
    dump = config.model_dump(mode="json")
    for key in [k for k, (ref, _) in _dumps.items() if ref() is None]:
        del _dumps[key]
    try:
        _dumps[id(config)] = (weakref.ref(config), dump)
    except TypeError:  # an object no weak reference can follow: dumped each time
        pass
    return dump


def _without_nulls(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _without_nulls(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_without_nulls(v) for v in value]
    return value


def policy_digest(policy: dict[str, Any]) -> str:
    """``sha256:<hex>`` of ``policy`` (nulls left out) as canonical JSON."""
    canonical = json.dumps(_without_nulls(policy), sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return "sha256:" + hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def compact_policy(policy: dict[str, Any], task_type: str | None, directory: Path) -> dict[str, Any]:
    """The header's ``policy`` for a run of ``task_type`` whose trace goes into ``directory``, the whole policy written
    there once (``policy-<digest>.toml``). ``policy`` itself when the file cannot be written (it is then in the header,
    as before). A policy with no table is short: kept whole."""
    if not any(isinstance(v, (dict, list)) for v in policy.values()):
        return policy
    digest = _digest_once(policy)
    name = f"policy-{digest.removeprefix('sha256:')[:16]}.toml"
    try:
        _write_once(directory / name, policy)
    except (OSError, ValueError, TypeError):
        return policy
    header: dict[str, Any] = {"digest": digest, "file": name}
    header.update({k: v for k, v in policy.items() if not isinstance(v, (dict, list)) and len(repr(v)) <= 200})
    stop = policy.get("stop")
    if stop is not None and len(json.dumps(stop)) <= _STOP_IN_HEADER_BYTES:
        header["stop"] = stop
    own = (policy.get("task_types") or {}).get(task_type) if task_type is not None else None
    if isinstance(own, dict):
        header["task_type"] = own
    return header


def _digest_once(policy: dict[str, Any]) -> str:
    """:func:`policy_digest`, computed once for the policy whose top-level values are these very objects (the dump
    :func:`dumped_policy` shares between runs; a header's ``policy`` is a shallow copy of it)."""
    values = tuple(policy.values())
    for known, digest in _digests:
        if len(known) == len(values) and all(a is b for a, b in zip(known, values, strict=True)):
            return digest
    digest = policy_digest(policy)
    _digests.insert(0, (values, digest))
    del _digests[4:]
    return digest


def _write_once(path: Path, policy: dict[str, Any]) -> None:
    """Write the policy's TOML at ``path`` unless this process wrote it or it is there (its name is its digest);
    written to a temporary name first, then renamed: a reader never sees half a file."""
    key = (str(path.parent.resolve()), path.name)
    if key in _written or path.is_file():
        _written.add(key)
        return
    import tomli_w

    text = tomli_w.dumps(_without_nulls(policy))
    temporary = path.with_name(f".{path.name}.{uuid.uuid4().hex[:8]}.tmp")
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(temporary, path)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise
    _written.add(key)


def full_policy(header: dict[str, Any] | None, trace: str) -> dict[str, Any] | None:
    """The whole policy a header's ``file`` names, read from beside ``trace`` and checked against its digest; the header
    itself when it names none, or when the file is missing or does not match (with a warning). A policy file is read
    once per process while it is unchanged: every run that names it shares the one dict (a folder of a thousand
    traces of a 10 MB policy holds it once)."""
    if not isinstance(header, dict) or not isinstance(header.get("file"), str) or "digest" not in header:
        return header
    name = header["file"]
    if not _FILE.match(name) or trace.startswith("<"):
        return header
    path = Path(trace).parent / name
    try:
        info = path.stat()
    except OSError:
        warnings.warn(
            TraceWarning(f"{path}: the policy file the trace headers name is missing; they keep its digest only"),
            stacklevel=3,
        )
        return header
    policy = _read_policy(str(path), info.st_mtime_ns, info.st_size, str(header["digest"]))
    return policy if policy is not None else header


@functools.lru_cache(maxsize=8)
def _read_policy(path: str, mtime_ns: int, size: int, digest: str) -> dict[str, Any] | None:
    """The policy at ``path`` if its digest is ``digest`` (keyed by its modification time and size too: an edited
    file is read again), else None with a warning."""

    try:
        policy = read_toml_safely(path)
    except ConfigError as exc:
        warnings.warn(TraceWarning(f"{exc}; the trace headers keep the policy's digest only"), stacklevel=4)
        return None
    if policy_digest(policy) != digest:
        warnings.warn(
            TraceWarning(f"{path}: the policy file does not match the digest the trace headers record ({digest})"),
            stacklevel=4,
        )
        return None
    return policy
