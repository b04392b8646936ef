"""Finding a JDK and the bridge jars, and starting the JVM once per process.

Nothing here runs at import time: :func:`start_jvm` is the explicit call that starts the JVM. ``jpype`` is
imported inside the functions, so ``import pyguard.jvm`` stays cheap and JVM-free.

The classpath is pyguard's jars (``pyguard/_jars``: the bridge and the LangChain4j it is built on), then the user's
entries; two versions of one artifact on it are warned about (:mod:`pyguard.jvm.classpath`), and
``user_classpath_first=True`` (or ``PYGUARD_USER_CLASSPATH_FIRST=1``) lets the user's jars win.
"""

from __future__ import annotations

import os
import shutil
import sys
import threading
import warnings
from collections.abc import Sequence
from pathlib import Path

from pyguard.base.errors import JvmError
from pyguard.jvm.classpath import ClasspathConflictWarning, Conflict, order_classpath, user_classpath_first_from_env

__all__: list[str] = []

BUILD_COMMAND = "mvn -q -f java/pom.xml package"
"""The command (run in a pyguard checkout) that builds the bridge jar and copies its dependencies into pyguard/_jars."""

_PROBE_CLASS = "dev.pyguard.bridge.GuardedChatModel"
JVM_SHUT_DOWN = (
    "The JVM of this process was shut down (jpype.shutdownJVM()) and cannot be restarted in the same process: JPype"
    " allows one JVM per process, once. Start a new Python process to run guarded agents again."
)
NOT_STARTED = (
    "the JVM is not running: call pyguard.jvm.start_jvm() first (once per process; classpath=[...] adds your agent's"
    " jars), before any Java class is used, jpype.JClass included (a module-level JClass runs at import: move it into"
    " a function or fixture, or start the JVM before the import). `pyguard demo`, `pyguard calibrate --live` and the"
    " pytest plugin's pyguard_jvm fixture (which pyguard_guard uses) start it for you."
)
"""What :func:`check_jvm` (so every pyguard call into Java) says before the JVM is started."""
FREEZE_GC_ENV = "PYGUARD_FREEZE_GC"
"""``0`` turns off :func:`start_jvm`'s default freeze of the start-up (``start_jvm(freeze_gc=None)``)."""
_LOCK = threading.Lock()
_STARTED: JvmInfo | None = None


class JvmInfo:
    """What :func:`start_jvm` started: the JDK, the libjvm, the full classpath in order, and the artifacts found on
    it in two versions (read-only)."""

    def __init__(
        self,
        java_home: Path,
        jvm_path: Path,
        classpath: tuple[str, ...],
        jvm_args: tuple[str, ...],
        conflicts: tuple[Conflict, ...] = (),
        user_classpath_first: bool = False,
    ):
        self.java_home = java_home
        self.jvm_path = jvm_path
        self.classpath = classpath
        self.jvm_args = jvm_args
        self.conflicts = conflicts
        self.user_classpath_first = user_classpath_first

    def __repr__(self) -> str:
        return f"JvmInfo(java_home={str(self.java_home)!r}, jars={len(self.classpath)})"


def jars_dir() -> Path:
    """Where the bridge jars live: ``$PYGUARD_JARS`` if set, else ``pyguard/_jars`` next to this package."""
    env = os.environ.get("PYGUARD_JARS")
    return Path(env) if env else Path(__file__).resolve().parent.parent / "_jars"


def bridge_jars() -> list[Path]:
    """The bridge jar and its runtime dependencies. Raises :class:`JvmError` with the build command if absent."""
    d = jars_dir()
    jars = sorted(d.glob("*.jar")) if d.is_dir() else []
    if not any(j.name.startswith("pyguard-bridge") for j in jars):
        raise JvmError(
            f"pyguard's bridge jars are not built: no pyguard-bridge-*.jar in {d}. "
            f"Build them from the pyguard checkout with `{BUILD_COMMAND}` (needs JDK 17+ and Maven), "
            "or point PYGUARD_JARS at a directory that holds them."
        )
    return jars


def _libjvm(home: Path) -> Path | None:
    names = {"linux": "libjvm.so", "darwin": "libjvm.dylib", "win32": "jvm.dll"}
    name = names.get(sys.platform, "libjvm.so")
    for sub in ("lib/server", "jre/lib/server", "lib/amd64/server", "jre/lib/amd64/server", "bin/server", "lib"):
        p = home / sub / name
        if p.exists():
            return p
    return None


def find_java_home(java_home: str | os.PathLike[str] | None = None) -> tuple[Path, Path]:
    """Return ``(java_home, libjvm path)``: the argument, else ``$JAVA_HOME``, else the ``java`` found on ``PATH``.

    Raises :class:`JvmError` naming what was tried when no usable JDK is found.
    """
    tried: list[str] = []
    candidates: list[tuple[str, Path]] = []
    if java_home is not None:
        candidates.append(("java_home argument", Path(java_home)))
    elif os.environ.get("JAVA_HOME"):
        candidates.append(("JAVA_HOME", Path(os.environ["JAVA_HOME"])))
    else:
        java = shutil.which("java")
        if java:
            candidates.append(("java on PATH", Path(os.path.realpath(java)).parent.parent))
    for source, home in candidates:
        lib = _libjvm(home)
        if lib is not None:
            _check_version(home)
            return home, lib
        tried.append(f"{source}={home} (no libjvm under it)")
    detail = "; ".join(tried) if tried else "JAVA_HOME is not set and no `java` is on PATH"
    raise JvmError(
        f"No JDK found ({detail}). Install a JDK 17 or newer and set JAVA_HOME to it "
        "(or put its bin/ on PATH), e.g. `export JAVA_HOME=/usr/lib/jvm/java-17-openjdk-amd64`."
    )


def _check_version(home: Path) -> None:
    release = home / "release"
    if not release.is_file():
        return
    for line in release.read_text(errors="replace").splitlines():
        if line.startswith("JAVA_VERSION="):
            version = line.split("=", 1)[1].strip().strip('"')
            major = version.split(".")[0]
            if major == "1":
                major = version.split(".")[1]
            if major.isdigit() and int(major) < 17:
                raise JvmError(
                    f"The JDK at {home} is Java {version}; pyguard needs Java 17 or newer. Set JAVA_HOME to a newer JDK."
                )
            return


def _expand_classpath(classpath: Sequence[str | os.PathLike[str]]) -> tuple[str, ...]:
    """Resolve classpath entries; an entry with a wildcard (``target/dependency/*.jar``) stands for the files it
    matches, in sorted order, and must match at least one."""
    import glob

    out: list[str] = []
    for entry in classpath:
        text = str(entry)
        if glob.has_magic(text):
            matches = sorted(glob.glob(text))
            if not matches:
                raise JvmError(f"classpath entry {text} matches no file; build your agent first (e.g. `mvn package`)")
            out.extend(str(Path(m).resolve()) for m in matches)
        else:
            out.append(str(Path(text).resolve()))
    return tuple(dict.fromkeys(out))


def jvm_started() -> bool:
    """True once a JVM runs in this process (started by pyguard or by anyone else)."""
    if "jpype" not in sys.modules:
        return False
    import jpype

    return bool(jpype.isJVMStarted())


def check_jvm() -> None:
    """Raise :class:`JvmError` unless the JVM runs: saying plainly when it was shut down (it cannot restart)."""
    if jvm_started():
        return
    import jpype  # noqa: F401 - present when a JVM ever ran

    if _STARTED is not None or _jvm_was_shut_down():
        raise JvmError(JVM_SHUT_DOWN)
    raise JvmError(NOT_STARTED)


def _jvm_was_shut_down() -> bool:
    if "jpype" not in sys.modules:
        return False
    import jpype

    try:
        return not jpype.isJVMStarted() and bool(getattr(jpype._core, "_JVM_started", False))
    except Exception:  # pragma: no cover - private JPype state
        return False


def _has_bridge() -> bool:
    import jpype

    try:
        jpype.JClass(_PROBE_CLASS)
        return True
    except Exception:
        return False


def _adopt_running_jvm(extra: tuple[str, ...], jvm_args: Sequence[str]) -> JvmInfo:
    """The JVM someone else started in this process, if it has pyguard's bridge jars."""
    import jpype  # lazy: jpype only once a JVM is wanted (import pyguard.jvm stays JVM-free)

    if not _has_bridge():
        raise JvmError(
            "A JVM was already started in this process without pyguard's bridge jars "
            f"({_PROBE_CLASS} is not on its classpath). Call pyguard.jvm.start_jvm() before anything else "
            "starts the JVM, or add the jars from pyguard.jvm.bridge_jars() to that JVM's classpath."
        )
    return JvmInfo(Path(os.environ.get("JAVA_HOME", "")), Path(jpype.getDefaultJVMPath()), extra, tuple(jvm_args))


def _launch(
    extra: tuple[str, ...], jvm_args: Sequence[str], java_home: str | os.PathLike[str] | None, user_first: bool
) -> tuple[Path, Path, tuple[str, ...], list[Conflict]]:
    """Start the JVM: a JDK found, the classpath ordered (conflicts warned about), slf4j quiet, Ctrl-C left to
    Python. Returns the JDK's home, its libjvm, the classpath and the conflicts on it."""
    import jpype  # lazy: jpype only once a JVM is wanted (import pyguard.jvm stays JVM-free)

    for p in extra:
        if not Path(p).exists():
            raise JvmError(f"classpath entry {p} does not exist; pass existing jar files or directories")
    home, lib = find_java_home(java_home)
    cp, conflicts = order_classpath(tuple(str(j) for j in bridge_jars()), extra, user_first)
    for conflict in conflicts:
        warnings.warn(conflict.message(), ClasspathConflictWarning, stacklevel=3)  # start_jvm's caller
    args = list(jvm_args)
    if not any(a.startswith("-Dslf4j.internal.verbosity") for a in args):
        args.append("-Dslf4j.internal.verbosity=ERROR")  # silence "No SLF4J providers" (LangChain4j logs via slf4j)
    try:
        # interrupt=False: Ctrl-C reaches Python (KeyboardInterrupt: runs cancelled, traces closed), not the JVM's exit
        jpype.startJVM(str(lib), *args, classpath=list(cp), convertStrings=False, interrupt=False)
    except OSError as e:
        if "restart" in str(e).lower() or _STARTED is not None:
            raise JvmError(JVM_SHUT_DOWN) from None
        raise JvmError(f"the JVM at {lib} failed to start with args {list(jvm_args)}: {e}") from e
    except Exception as e:  # pragma: no cover - depends on the machine
        raise JvmError(f"the JVM at {lib} failed to start with args {list(jvm_args)}: {e}") from e
    return home, lib, cp, conflicts


def start_jvm(
    classpath: Sequence[str | os.PathLike[str]] = (),
    jvm_args: Sequence[str] = (),
    java_home: str | os.PathLike[str] | None = None,
    user_classpath_first: bool | None = None,
    freeze_gc: bool | None = None,
) -> JvmInfo:
    """Start the JVM with pyguard's jars plus ``classpath`` (a user's agent jar, `target/dependency/*.jar`); idempotent.

    At the JVM's first start (``freeze_gc=None``, the default) pyguard loads its engine (its compiled novelty kernel
    included), collects and calls ``gc.freeze()``: what is alive then (modules, classes, pydantic schemas, numba's
    compiled kernel) is left out of Python's later full collections, which otherwise walk all of it while every
    thread waits for the GIL: at 64 agents on a 0.5 s model that took the guard's p99 from 64 ms to under 2 ms.
    Nothing else about the collector changes (thresholds, ``gc.enable``); what is frozen is still freed when nothing
    refers to it, only a reference cycle among objects alive at start-up is never collected. ``freeze_gc=False``
    (or ``PYGUARD_FREEZE_GC=0``) leaves the collector alone; ``freeze_gc=True`` freezes now, on a running JVM too
    (after your own start-up). docs/performance.md ("Python's garbage collector") has the figures.

    pyguard's jars come first: where ``classpath`` brings another version of an artifact pyguard bundles (your
    agent on another LangChain4j), the JVM loads pyguard's, and a :class:`ClasspathConflictWarning` names both
    versions and what to do. ``user_classpath_first=True`` puts ``classpath`` first and leaves out pyguard's jars of
    the artifacts it brings in another version (pyguard's bridge then runs on your version); None reads
    ``PYGUARD_USER_CLASSPATH_FIRST`` (``1``/``0``, default 0), for the pytest plugin and the CLI.

    A second call returns the running JVM's :class:`JvmInfo`; it raises :class:`JvmError` if it asks for classpath
    entries the running JVM does not have (a JVM cannot be restarted in one process), or if a JVM was started by
    someone else without pyguard's jars.
    """
    global _STARTED
    extra = _expand_classpath(classpath)
    user_first = user_classpath_first_from_env(user_classpath_first)
    with _LOCK:
        if (_STARTED is not None and not jvm_started()) or _jvm_was_shut_down():
            raise JvmError(JVM_SHUT_DOWN)
        if _STARTED is not None:
            missing = [p for p in extra if p not in _STARTED.classpath]
            if missing:
                raise JvmError(
                    f"The JVM is already running, without {missing}: a JVM starts once per process. "
                    "Pass every classpath entry to the first start_jvm() call (or start a new process)."
                )
            if freeze_gc:  # asked for on a running JVM: now (None: at the first start only)
                freeze_startup()
            return _STARTED
        import jpype

        if jpype.isJVMStarted():
            _STARTED = _adopt_running_jvm(extra, jvm_args)
            return _STARTED
        home, lib, cp, conflicts = _launch(extra, jvm_args, java_home, user_first)
        if not _has_bridge():  # pragma: no cover - a broken jar directory
            raise JvmError(
                f"the JVM started but {_PROBE_CLASS} is missing from {jars_dir()}; rebuild with `{BUILD_COMMAND}`"
            )
        _give_python_its_signal_defaults()
        _STARTED = JvmInfo(home, lib, cp, tuple(jvm_args), tuple(conflicts), user_first)
        if freeze_gc or (freeze_gc is None and os.environ.get(FREEZE_GC_ENV, "1").strip() != "0"):
            freeze_startup()
        return _STARTED


def _give_python_its_signal_defaults() -> list[str]:
    """Give SIGINT and SIGTERM back the disposition Python had for them where it is the default or ignore; returns
    the signals given back (``["TERM"]`` in a plain program).

    With ``interrupt=False`` JPype's handlers take over SIGINT and SIGTERM in the JVM and pass each signal on to
    Python (``PyErr_SetInterruptEx``) from a Java thread. Where Python has a handler of its own (SIGINT's
    ``KeyboardInterrupt``, a program's ``signal.signal``) that is how it runs. Where Python has none (SIGTERM's
    default, or ``signal.SIG_DFL``/``SIG_IGN``), CPython compares the handler with ``SIG_DFL`` without a thread
    state and the process dies in that Java thread with SIGSEGV (an ``hs_err_pid*.log``) instead of ending (or
    ignoring the signal) as a Python program does. Such a signal is set back to what Python had; the JVM's own
    handling stays (unlike ``-Xrs``, which also leaves SIGQUIT to its default: a ``jstack`` would end the process)."""
    import signal

    import jpype

    sun_signal, handler = jpype.JClass("sun.misc.Signal"), jpype.JClass("sun.misc.SignalHandler")
    given_back = []
    for name in ("INT", "TERM"):
        python = signal.getsignal(getattr(signal, f"SIG{name}"))
        if python not in (signal.SIG_DFL, signal.SIG_IGN):
            continue  # Python's own handler (or one set outside Python): JPype passes the signal to it
        try:
            sun_signal.handle(sun_signal(name), handler.SIG_DFL if python == signal.SIG_DFL else handler.SIG_IGN)
        except jpype.JException:  # the JVM does not handle it (-Xrs): it already has Python's disposition
            continue
        given_back.append(name)
    return given_back


def freeze_startup() -> int:
    """Load what every guarded run uses (the engine and its compiled novelty kernel, which a run otherwise loads on a
    thread of its own once numpy has scored enough text to pay for it), collect, and ``gc.freeze()`` everything alive: what
    :func:`start_jvm` does at the JVM's first start (unless ``freeze_gc=False``). Returns
    the number of objects frozen (``gc.get_freeze_count()``). Call it again after your application's own start-up
    to leave that out of full collections too; ``gc.unfreeze()`` undoes it."""
    import gc

    # lazy: the JVM edge loads no engine at import; freeze_startup loads it on purpose, to freeze it
    from pyguard.engine import PolicyConfig, shingles
    from pyguard.engine.novelty import make_estimator

    shingles.backend()  # the kernel now, built or read and run once (a run would load it on a thread of its own)
    make_estimator(PolicyConfig().novelty).observe(" ".join(f"warm-up {k}" for k in range(800)))
    gc.collect()
    gc.freeze()
    return gc.get_freeze_count()
