"""One build step on top of pyproject.toml: a wheel carries pyguard's Java bridge jars.

The jars (pyguard/_jars: the bridge jar and its runtime dependencies) are built by Maven and are not in git. When a
wheel is built (``pip wheel .``, ``python -m build``) and they are missing or older than the Java sources, this runs
``bash scripts/mvnq -f java/pom.xml package -DskipTests`` first; without Maven on PATH it stops with a message saying
what to run. An editable install (``pip install -e .``, as scripts/setup.sh does) skips the step: setup.sh builds the
jars itself, and pyguard finds them in the checkout.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

ROOT = Path(__file__).resolve().parent
MAVEN_BUILD = ["bash", "scripts/mvnq", "-f", "java/pom.xml", "package", "-DskipTests"]


class JarsNotBuilt(SystemExit):
    """The wheel would have no bridge jars and they cannot be built here (the message says what to run)."""


def bridge_jar(root: Path) -> Path | None:
    """The bridge jar in ``root``/pyguard/_jars, or None."""
    found = sorted((root / "pyguard" / "_jars").glob("pyguard-bridge-*.jar"))
    return found[-1] if found else None


def java_sources_newer(root: Path, jar: Path) -> bool:
    """True when java/pom.xml or a file under java/src changed after ``jar`` was built."""
    java = root / "java"
    sources = [java / "pom.xml", *(p for p in (java / "src").rglob("*") if p.is_file())]
    built = jar.stat().st_mtime
    return any(p.exists() and p.stat().st_mtime > built for p in sources)


def ensure_jars(root: Path = ROOT, log=print) -> Path:  # noqa: ANN001 - log is print or a test's collector
    """Make sure ``root``/pyguard/_jars holds the bridge jar, running Maven when it is missing or stale.

    Raises :class:`JarsNotBuilt` naming the command to run when the jars are missing and Maven is not on PATH (or
    the Java sources are not there, as in an sdist made without them)."""
    jar = bridge_jar(root)
    has_sources = (root / "java" / "pom.xml").is_file() and (root / "scripts" / "mvnq").is_file()
    if jar is not None and not (has_sources and java_sources_newer(root, jar)):
        return jar
    why = "missing" if jar is None else "older than the Java sources"
    if not has_sources or shutil.which("mvn") is None:
        if jar is not None:  # stale, but usable: say so and go on
            log(f"pyguard build: the bridge jars in pyguard/_jars are {why}, and Maven is not on PATH to rebuild them")
            return jar
        raise JarsNotBuilt(
            "pyguard build: the wheel needs the Java bridge jars in pyguard/_jars, which are not built (they are made "
            "by Maven and are not in git). "
            + (
                "Install Maven 3.8+ and a JDK 17+ and build again, or run `make setup` (or "
                f"`{' '.join(MAVEN_BUILD)}`) in the checkout first."
                if has_sources
                else "This source tree has no java/ sources to build them from: build the wheel from a pyguard checkout."
            )
        )
    log(f"pyguard build: the bridge jars are {why}; building them: {' '.join(MAVEN_BUILD)}")
    done = subprocess.run(MAVEN_BUILD, cwd=root, check=False, env={**os.environ})
    jar = bridge_jar(root)
    if done.returncode != 0 or jar is None:
        raise JarsNotBuilt(
            f"pyguard build: `{' '.join(MAVEN_BUILD)}` failed (exit {done.returncode}); its output is above. Fix it "
            "and build again."
        )
    return jar


class BuildPyWithJars(build_py):
    """build_py that puts freshly built bridge jars (and no stale ones) into a wheel; editable installs skip it."""

    def run(self) -> None:
        if not self.editable_mode:
            ensure_jars()
            self.__dict__.pop("data_files", None)  # the package-data glob sees the jars just built
            shutil.rmtree(Path(self.build_lib) / "pyguard" / "_jars", ignore_errors=True)  # no jar of a past build
        super().run()


if __name__ == "__main__":  # setuptools' build backend runs this file as __main__; a test imports it by path
    setup(cmdclass={"build_py": BuildPyWithJars})
