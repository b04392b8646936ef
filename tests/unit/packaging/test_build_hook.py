"""setup.py's build step: a wheel gets the bridge jars, built by Maven when missing or stale, or the build stops
saying what to run. Maven is replaced by a small script that records its arguments and writes a jar."""

from __future__ import annotations

import importlib.util
import os
import shutil
import stat
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]


def _load_setup():
    spec = importlib.util.spec_from_file_location("pyguard_setup_under_test", ROOT / "setup.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)  # not __main__: setup() is not called
    return module


setup_py = _load_setup()


def _checkout(tmp_path: Path, *, sources: bool = True) -> Path:
    root = tmp_path / "checkout"
    (root / "pyguard" / "_jars").mkdir(parents=True)
    if sources:
        (root / "java" / "src" / "main").mkdir(parents=True)
        (root / "java" / "pom.xml").write_text("<project/>")
        (root / "java" / "src" / "main" / "Bridge.java").write_text("class Bridge {}")
        (root / "scripts").mkdir()
        shutil.copy(ROOT / "scripts" / "mvnq", root / "scripts" / "mvnq")
    return root


def _path_with(tmp_path: Path, mvn_script: str | None) -> str:
    """A PATH with bash and sed (for scripts/mvnq) and, when given, a fake mvn first; never the real mvn."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    for tool in ("bash", "sed"):
        real = shutil.which(tool)
        assert real is not None
        (bin_dir / tool).symlink_to(os.path.realpath(real))
    if mvn_script is not None:
        mvn = bin_dir / "mvn"
        mvn.write_text("#!/bin/sh\n" + mvn_script)
        mvn.chmod(mvn.stat().st_mode | stat.S_IEXEC)
    return str(bin_dir)


FAKE_MAVEN = 'echo "$@" >> "$PWD/mvn.log"\n: > "$PWD/pyguard/_jars/pyguard-bridge-0.1.0.jar"\n'


def test_missing_jars_are_built_with_maven(tmp_path, monkeypatch):
    root = _checkout(tmp_path)
    monkeypatch.setenv("PATH", _path_with(tmp_path, FAKE_MAVEN))
    logged: list[str] = []
    jar = setup_py.ensure_jars(root, log=logged.append)
    assert jar == root / "pyguard" / "_jars" / "pyguard-bridge-0.1.0.jar" and jar.is_file()
    assert (root / "mvn.log").read_text().split() == ["-q", "-B", "-f", "java/pom.xml", "package", "-DskipTests"]
    assert logged == [
        "pyguard build: the bridge jars are missing; building them: bash scripts/mvnq -f java/pom.xml package -DskipTests"
    ]


def test_present_jars_are_used_and_stale_ones_rebuilt(tmp_path, monkeypatch):
    root = _checkout(tmp_path)
    jar = root / "pyguard" / "_jars" / "pyguard-bridge-0.1.0.jar"
    jar.write_bytes(b"")
    source = root / "java" / "src" / "main" / "Bridge.java"
    os.utime(source, (1_000_000, 1_000_000))
    os.utime(root / "java" / "pom.xml", (1_000_000, 1_000_000))
    monkeypatch.setenv("PATH", _path_with(tmp_path, FAKE_MAVEN))
    assert setup_py.ensure_jars(root, log=lambda _: None) == jar
    assert not (root / "mvn.log").exists()  # up to date: Maven is not run
    os.utime(source, (jar.stat().st_mtime + 10, jar.stat().st_mtime + 10))
    logged: list[str] = []
    setup_py.ensure_jars(root, log=logged.append)
    assert (root / "mvn.log").exists() and "older than the Java sources" in logged[0]


def test_without_maven_the_build_stops_and_says_what_to_run(tmp_path, monkeypatch):
    root = _checkout(tmp_path)
    monkeypatch.setenv("PATH", _path_with(tmp_path, None))
    with pytest.raises(setup_py.JarsNotBuilt) as info:
        setup_py.ensure_jars(root)
    message = str(info.value)
    assert "the wheel needs the Java bridge jars in pyguard/_jars, which are not built" in message
    assert "Install Maven 3.8+ and a JDK 17+" in message
    assert "`make setup`" in message and "`bash scripts/mvnq -f java/pom.xml package -DskipTests`" in message
    assert isinstance(info.value, SystemExit)  # the build ends with the message, not a traceback


def test_a_stale_jar_without_maven_is_kept_with_a_note(tmp_path, monkeypatch):
    root = _checkout(tmp_path)
    jar = root / "pyguard" / "_jars" / "pyguard-bridge-0.1.0.jar"
    jar.write_bytes(b"")
    os.utime(jar, (1_000_000, 1_000_000))
    monkeypatch.setenv("PATH", _path_with(tmp_path, None))
    logged: list[str] = []
    assert setup_py.ensure_jars(root, log=logged.append) == jar
    assert logged == [
        "pyguard build: the bridge jars in pyguard/_jars are older than the Java sources, and Maven is not on PATH"
        " to rebuild them"
    ]


def test_a_tree_without_java_sources_or_jars_names_the_checkout(tmp_path, monkeypatch):
    root = _checkout(tmp_path, sources=False)
    monkeypatch.setenv("PATH", _path_with(tmp_path, FAKE_MAVEN))
    with pytest.raises(setup_py.JarsNotBuilt, match="has no java/ sources to build them from: build the wheel from"):
        setup_py.ensure_jars(root)


def test_a_failing_maven_build_is_reported_with_its_exit_code(tmp_path, monkeypatch):
    root = _checkout(tmp_path)
    monkeypatch.setenv("PATH", _path_with(tmp_path, "echo 'BUILD FAILURE' >&2\nexit 3\n"))
    with pytest.raises(setup_py.JarsNotBuilt, match=r"failed \(exit 3\); its output is above"):
        setup_py.ensure_jars(root, log=lambda _: None)
