"""Which Maven artifacts a JVM classpath holds, and two versions of one artifact on it.

pyguard bundles LangChain4j (and its other runtime dependencies) in ``pyguard/_jars``. A user's agent built on
another LangChain4j version brings its own jars; the JVM loads each class from the first classpath entry that has
it, so by default (pyguard's jars first) the agent silently runs on pyguard's version. :func:`start_jvm
<pyguard.jvm.bootstrap.start_jvm>` therefore reads the artifacts of every classpath jar and warns
(:class:`ClasspathConflictWarning`) about each artifact present in two versions, saying which one wins and what to
do. ``start_jvm(user_classpath_first=True)`` (or ``PYGUARD_USER_CLASSPATH_FIRST=1``) lets the user's jars win: they
come first, and pyguard's jars of an artifact the user brings in another version are left out.

An artifact is read from ``META-INF/maven/<group>/<artifact>/pom.properties`` inside a jar (a shaded jar holds
several), else from a file name ``<artifact>-<version>.jar``. Directories and unversioned names are not read. No JVM
is needed for any of this.
"""

from __future__ import annotations

import os
import re
import zipfile
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from pyguard.base.errors import JvmError

__all__: list[str] = []

USER_FIRST_ENV = "PYGUARD_USER_CLASSPATH_FIRST"
"""Environment variable read when ``start_jvm(user_classpath_first=None)``: ``1``/``true``/``yes`` or
``0``/``false``/``no`` (for the pytest plugin and the CLI, which call ``start_jvm`` for you)."""

_NAME = re.compile(r"^(?P<artifact>[A-Za-z][\w.]*(?:-[A-Za-z][\w.]*)*)-(?P<version>\d[\w.+-]*)\.jar$")
_POM = re.compile(r"^META-INF/maven/(?P<group>[^/]+)/(?P<artifact>[^/]+)/pom\.properties$")


class ClasspathConflictWarning(UserWarning):
    """Two versions of one Maven artifact are on the JVM classpath (the message names both and what to do)."""


@dataclass(frozen=True)
class Artifact:
    """One Maven artifact found in a classpath jar (``group`` is None when read from the file name only)."""

    group: str | None
    artifact: str
    version: str
    jar: str
    bundled: bool
    """True for a jar of pyguard's own (``pyguard/_jars``)."""

    @property
    def coordinates(self) -> str:
        return f"{self.group}:{self.artifact}" if self.group else self.artifact


@dataclass(frozen=True)
class Conflict:
    """One artifact in two or more versions; ``found`` in classpath order, so ``found[0]`` is the one that wins."""

    coordinates: str
    found: tuple[Artifact, ...]

    @property
    def winner(self) -> Artifact:
        return self.found[0]

    @property
    def shadowed(self) -> tuple[Artifact, ...]:
        """The entries of another version than the winner's (their classes are loaded only where the winner has none)."""
        return tuple(a for a in self.found if a.version != self.winner.version)

    def message(self) -> str:
        """What happens, in words, and what to do."""
        win = self.winner
        ours = next((a for a in self.found if a.bundled), None)
        theirs = next((a for a in self.shadowed if not a.bundled), None)
        head = f"two versions of {self.coordinates} on the JVM classpath: "
        if ours is not None and win is ours and theirs is not None:
            return head + (
                f"pyguard's {ours.version} ({ours.jar}) comes first and is the one loaded; yours, {theirs.version}"
                f" ({theirs.jar}), is shadowed, so your agent runs on {ours.version}. Build your agent on"
                f" {ours.version}, or let your jars win with start_jvm(..., user_classpath_first=True) or"
                f" {USER_FIRST_ENV}=1 (pyguard's bridge is built on {ours.version}: run your tests on yours)."
            )
        if ours is not None and not win.bundled and ours.version != win.version:
            return head + (
                f"yours, {win.version} ({win.jar}), comes first (user_classpath_first) and pyguard's {ours.version}"
                f" ({ours.jar}) is left out. pyguard's bridge, built on {ours.version}, runs on your {win.version};"
                f" if it fails (NoSuchMethodError, NoClassDefFoundError), build your agent on {ours.version} instead."
            )
        others = ", ".join(f"{a.version} ({a.jar})" for a in self.shadowed)
        return head + (
            f"{win.version} ({win.jar}) comes first and is the one loaded; {others} is shadowed. Keep one version of"
            " it on the classpath you pass to start_jvm (`mvn dependency:tree` shows where each comes from)."
        )


def _from_name(path: Path, bundled: bool) -> list[Artifact]:
    m = _NAME.match(path.name)
    if m is None:
        return []
    return [Artifact(None, m["artifact"], m["version"], str(path), bundled)]


def _read_properties(text: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith(("#", "!")) or "=" not in line:
            continue
        key, _, value = line.partition("=")
        out[key.strip()] = value.strip()
    return out


def jar_artifacts(path: str | os.PathLike[str], *, bundled: bool = False) -> list[Artifact]:
    """The Maven artifacts a jar holds: from its ``pom.properties`` files, else from its file name; [] for a
    directory, a file that is not a readable jar and has no versioned name, or an unversioned name."""
    p = Path(path)
    if not p.is_file():
        return []
    try:
        with zipfile.ZipFile(p) as jar:
            found = []
            for name in jar.namelist():
                m = _POM.match(name)
                if m is None:
                    continue
                props = _read_properties(jar.read(name).decode("utf-8", errors="replace"))
                version = props.get("version")
                if version:
                    group = props.get("groupId") or m["group"]
                    found.append(Artifact(group, props.get("artifactId") or m["artifact"], version, str(p), bundled))
    except (zipfile.BadZipFile, OSError):
        return _from_name(p, bundled)
    return found or _from_name(p, bundled)


def _same(a: Artifact, b: Artifact) -> bool:
    return a.artifact == b.artifact and (a.group is None or b.group is None or a.group == b.group)


def find_conflicts(artifacts: Iterable[Artifact]) -> list[Conflict]:
    """Artifacts present in two or more versions, each with its entries in the given (classpath) order.

    Two entries are the same artifact when their artifact ids match and their groups do too (an entry read from a
    file name has no group and matches any)."""
    items = list(artifacts)
    conflicts: list[Conflict] = []
    taken: set[int] = set()
    for i, a in enumerate(items):
        if i in taken:
            continue
        same = [j for j in range(i, len(items)) if j not in taken and _same(a, items[j])]
        taken.update(same)
        found = tuple(items[j] for j in same)
        if len({f.version for f in found}) > 1:
            group = next((f.group for f in found if f.group), None)
            conflicts.append(Conflict(f"{group}:{a.artifact}" if group else a.artifact, found))
    return conflicts


def order_classpath(
    bundled: Sequence[str], user: Sequence[str], user_first: bool
) -> tuple[tuple[str, ...], list[Conflict]]:
    """The JVM classpath and the version conflicts on it.

    pyguard's jars first by default. With ``user_first``, the user's entries come first and a bundled jar is left
    out when the user brings one of its artifacts in another version (so no class of that artifact comes from two
    versions); the conflicts are still returned, so the choice can be reported."""
    read = {entry: jar_artifacts(entry, bundled=entry in bundled) for entry in (*bundled, *user)}
    order = (*user, *bundled) if user_first else (*bundled, *user)
    conflicts = find_conflicts(a for entry in order for a in read[entry])
    if not user_first:
        return tuple(order), conflicts
    dropped = {a.jar for c in conflicts if not c.winner.bundled for a in c.found if a.bundled}
    return tuple(e for e in order if e not in dropped), conflicts


def user_classpath_first_from_env(value: bool | None) -> bool:
    """``value`` when given, else ``$PYGUARD_USER_CLASSPATH_FIRST`` (unset: False); a value that is not a yes or a no
    raises :class:`JvmError` naming it."""
    if value is not None:
        return value
    raw = os.environ.get(USER_FIRST_ENV, "").strip().lower()
    if raw in ("", "0", "false", "no", "off"):
        return False
    if raw in ("1", "true", "yes", "on"):
        return True
    raise JvmError(f"{USER_FIRST_ENV}={os.environ[USER_FIRST_ENV]!r} is not a yes or a no: set it to 1 or 0")
