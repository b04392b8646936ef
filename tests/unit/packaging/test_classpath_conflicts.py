"""Two versions of one Maven artifact on the JVM classpath (pyguard.jvm.classpath): read from small fake jars, no JVM."""

from __future__ import annotations

import zipfile
from pathlib import Path

import pytest

from pyguard.base.errors import JvmError
from pyguard.jvm.classpath import (
    USER_FIRST_ENV,
    find_conflicts,
    jar_artifacts,
    order_classpath,
    user_classpath_first_from_env,
)


def _jar(path: Path, *poms: tuple[str, str, str]) -> str:
    """A jar at ``path`` holding one pom.properties per (group, artifact, version) and a class file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("META-INF/MANIFEST.MF", "Manifest-Version: 1.0\n")
        for group, artifact, version in poms:
            z.writestr(
                f"META-INF/maven/{group}/{artifact}/pom.properties",
                f"#Created by Apache Maven\nartifactId={artifact}\ngroupId={group}\nversion={version}\n",
            )
        z.writestr("dev/example/Thing.class", b"\xca\xfe\xba\xbe")
    return str(path)


@pytest.fixture
def bundled(tmp_path):
    d = tmp_path / "pyguard" / "_jars"
    return (
        _jar(d / "langchain4j-core-1.19.0.jar", ("dev.langchain4j", "langchain4j-core", "1.19.0")),
        _jar(d / "pyguard-bridge-0.1.0.jar", ("dev.pyguard", "pyguard-bridge", "0.1.0")),
        _jar(d / "slf4j-api-2.0.18.jar", ("org.slf4j", "slf4j-api", "2.0.18")),
    )


def test_artifacts_are_read_from_pom_properties_else_from_the_file_name(tmp_path):
    shaded = _jar(
        tmp_path / "agent-all.jar",
        ("com.example", "agent", "2.1"),
        ("dev.langchain4j", "langchain4j-core", "1.10.0"),
    )
    assert [(a.coordinates, a.version) for a in jar_artifacts(shaded)] == [
        ("com.example:agent", "2.1"),
        ("dev.langchain4j:langchain4j-core", "1.10.0"),
    ]
    bare = tmp_path / "langchain4j-agentic-1.19.0-beta29.jar"
    with zipfile.ZipFile(bare, "w") as z:
        z.writestr("a/B.class", b"")
    (tmp_path / "jackson-annotations-2.22.jar").write_bytes(b"not a zip")
    assert [(a.group, a.artifact, a.version) for a in jar_artifacts(bare)] == [
        (None, "langchain4j-agentic", "1.19.0-beta29")
    ]
    assert [(a.artifact, a.version) for a in jar_artifacts(tmp_path / "jackson-annotations-2.22.jar")] == [
        ("jackson-annotations", "2.22")
    ]
    (tmp_path / "classes").mkdir()
    (tmp_path / "my-agent.jar").write_bytes(b"")
    assert jar_artifacts(tmp_path / "classes") == []  # a directory
    assert jar_artifacts(tmp_path / "my-agent.jar") == []  # no version in the name, not a jar
    assert jar_artifacts(tmp_path / "missing-1.0.jar") == []


def test_another_langchain4j_of_the_user_is_shadowed_and_the_warning_says_what_to_do(tmp_path, bundled):
    user = _jar(
        tmp_path / "target" / "dependency" / "langchain4j-core-1.10.0.jar",
        ("dev.langchain4j", "langchain4j-core", "1.10.0"),
    )
    agent = _jar(tmp_path / "target" / "agent-1.0.jar", ("com.example", "agent", "1.0"))
    cp, conflicts = order_classpath(bundled, (agent, user), user_first=False)
    assert cp == (*bundled, agent, user)
    assert len(conflicts) == 1
    c = conflicts[0]
    assert c.coordinates == "dev.langchain4j:langchain4j-core"
    assert (c.winner.version, c.winner.bundled) == ("1.19.0", True)
    assert [(a.version, a.bundled) for a in c.shadowed] == [("1.10.0", False)]
    assert c.message() == (
        "two versions of dev.langchain4j:langchain4j-core on the JVM classpath: pyguard's 1.19.0"
        f" ({bundled[0]}) comes first and is the one loaded; yours, 1.10.0 ({user}), is shadowed, so your agent"
        " runs on 1.19.0. Build your agent on 1.19.0, or let your jars win with start_jvm(...,"
        f" user_classpath_first=True) or {USER_FIRST_ENV}=1 (pyguard's bridge is built on 1.19.0: run your tests on"
        " yours)."
    )


def test_user_classpath_first_puts_the_users_jars_first_and_leaves_out_pyguards_other_version(tmp_path, bundled):
    user = _jar(tmp_path / "langchain4j-core-1.10.0.jar", ("dev.langchain4j", "langchain4j-core", "1.10.0"))
    cp, conflicts = order_classpath(bundled, (user,), user_first=True)
    assert cp == (user, bundled[1], bundled[2])  # pyguard's langchain4j-core 1.19.0 is left out
    assert [c.winner.version for c in conflicts] == ["1.10.0"]
    message = conflicts[0].message()
    assert f"yours, 1.10.0 ({user}), comes first (user_classpath_first)" in message
    assert f"pyguard's 1.19.0 ({bundled[0]}) is left out" in message
    assert "NoSuchMethodError" in message


def test_the_same_version_twice_or_another_group_is_no_conflict(tmp_path, bundled):
    same = _jar(tmp_path / "a" / "langchain4j-core-1.19.0.jar", ("dev.langchain4j", "langchain4j-core", "1.19.0"))
    other_group = _jar(tmp_path / "core-9.jar", ("org.other", "slf4j-api", "9.0"))
    cp, conflicts = order_classpath(bundled, (same, other_group), user_first=True)
    assert conflicts == []
    assert cp == (same, other_group, *bundled)  # nothing is left out when nothing conflicts


def test_a_jar_known_by_name_only_matches_any_group_and_two_user_versions_are_reported(tmp_path):
    a = tmp_path / "guava-31.0-jre.jar"
    a.write_bytes(b"")
    b = _jar(tmp_path / "lib" / "guava-33.1-jre.jar", ("com.google.guava", "guava", "33.1-jre"))
    conflicts = find_conflicts([*jar_artifacts(a), *jar_artifacts(b)])
    assert [(c.coordinates, c.winner.version) for c in conflicts] == [("com.google.guava:guava", "31.0-jre")]
    assert conflicts[0].message() == (
        f"two versions of com.google.guava:guava on the JVM classpath: 31.0-jre ({a}) comes first and is the one"
        f" loaded; 33.1-jre ({b}) is shadowed. Keep one version of it on the classpath you pass to start_jvm"
        " (`mvn dependency:tree` shows where each comes from)."
    )


def test_the_environment_variable_decides_when_the_argument_does_not(monkeypatch):
    monkeypatch.delenv(USER_FIRST_ENV, raising=False)
    assert user_classpath_first_from_env(None) is False
    for raw, expected in (("1", True), ("true", True), ("YES", True), ("0", False), ("no", False), ("", False)):
        monkeypatch.setenv(USER_FIRST_ENV, raw)
        assert user_classpath_first_from_env(None) is expected, raw
    monkeypatch.setenv(USER_FIRST_ENV, "1")
    assert user_classpath_first_from_env(False) is False  # the argument wins
    monkeypatch.setenv(USER_FIRST_ENV, "sometimes")
    with pytest.raises(JvmError, match=f"{USER_FIRST_ENV}='sometimes' is not a yes or a no: set it to 1 or 0"):
        user_classpath_first_from_env(None)
