"""JVM bootstrap: explicit start, clear errors. Error paths run in subprocesses (a JVM starts once per process)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

from pyguard.base.errors import JvmError


def run_py(code: str, env: dict | None = None) -> subprocess.CompletedProcess:
    full_env = {**os.environ, **(env or {})}
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, env=full_env, timeout=600
    )


def test_importing_pyguard_and_pyguard_jvm_starts_no_jvm():
    out = run_py("""
        import json, sys
        import pyguard, pyguard.jvm
        from pyguard.jvm import jvm_started
        print(json.dumps({"jpype": any(m.split('.')[0] in ('jpype', '_jpype') for m in sys.modules),
                          "started": jvm_started()}))
    """)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout) == {"jpype": False, "started": False}


def test_no_jdk_found():
    out = run_py(
        """
        from pyguard.jvm import start_jvm
        from pyguard.base.errors import JvmError
        try:
            start_jvm()
        except JvmError as e:
            print("JVMERROR", e)
    """,
        env={"JAVA_HOME": "", "PATH": os.path.dirname(sys.executable)},
    )
    assert "JVMERROR No JDK found" in out.stdout and "JAVA_HOME" in out.stdout, out.stdout + out.stderr


def test_bad_java_home_is_named():
    from pyguard.jvm import find_java_home

    with pytest.raises(JvmError, match=r"No JDK found \(java_home argument=/nonexistent/jdk \(no libjvm under it\)\)"):
        find_java_home("/nonexistent/jdk")


def test_jars_not_built_gives_the_build_command(tmp_path):
    out = run_py(
        """
        from pyguard.jvm import start_jvm
        from pyguard.base.errors import JvmError
        try:
            start_jvm()
        except JvmError as e:
            print("JVMERROR", e)
    """,
        env={"PYGUARD_JARS": str(tmp_path)},
    )
    assert "JVMERROR pyguard's bridge jars are not built" in out.stdout
    assert "mvn -q -f java/pom.xml package" in out.stdout


def test_jvm_started_elsewhere_without_the_jars():
    out = run_py("""
        import jpype
        jpype.startJVM()
        from pyguard.jvm import start_jvm
        from pyguard.base.errors import JvmError
        try:
            start_jvm()
        except JvmError as e:
            print("JVMERROR", e)
    """)
    assert "JVMERROR A JVM was already started in this process without pyguard's bridge jars" in out.stdout, out.stderr


def test_start_is_idempotent_and_refuses_late_classpath(jvm, tmp_path):
    from pyguard.jvm import start_jvm

    assert start_jvm() is jvm
    extra = tmp_path / "agent.jar"
    extra.write_bytes(b"")
    with pytest.raises(JvmError, match="already running, without"):
        start_jvm(classpath=[extra])


def compile_hello(tmp_path) -> os.PathLike[str]:
    """A tiny user class, acme.Hello, compiled into tmp_path/classes."""
    src = tmp_path / "src" / "acme"
    src.mkdir(parents=True)
    (src / "Hello.java").write_text('package acme; public class Hello { public static String hi() { return "hi"; } }')
    classes = tmp_path / "classes"
    subprocess.run(["javac", "-d", str(classes), str(src / "Hello.java")], check=True, timeout=120)
    return classes


def test_user_classpath_entry_is_used(tmp_path):
    classes = compile_hello(tmp_path)
    out = run_py(f"""
        from pyguard.jvm import start_jvm
        import jpype
        start_jvm(classpath=[{str(classes)!r}])
        print(jpype.JClass("acme.Hello").hi(), jpype.JClass("dev.pyguard.bridge.GuardedChatModel").__name__)
    """)
    assert out.stdout.split() == ["hi", "dev.pyguard.bridge.GuardedChatModel"], out.stderr


def test_classpath_wildcards_expand_to_the_jars_they_match(tmp_path):
    classes = compile_hello(tmp_path)
    libs = tmp_path / "dependency"
    libs.mkdir()
    subprocess.run(["jar", "cf", str(libs / "hello.jar"), "-C", str(classes), "."], check=True, timeout=120)
    out = run_py(f"""
        from pyguard.jvm import start_jvm
        import jpype
        info = start_jvm(classpath=[{str(libs / "*.jar")!r}])
        print(jpype.JClass("acme.Hello").hi(), sum(p.endswith("hello.jar") for p in info.classpath))
    """)
    assert out.stdout.split() == ["hi", "1"], out.stderr


def test_classpath_wildcard_matching_nothing_names_the_entry(tmp_path):
    out = run_py(f"""
        from pyguard.jvm import start_jvm
        start_jvm(classpath=[{str(tmp_path / "target" / "*.jar")!r}])
    """)
    assert out.returncode != 0
    assert f"classpath entry {tmp_path / 'target' / '*.jar'} matches no file" in out.stderr


def test_after_shutdown_the_jvm_cannot_restart_and_says_so():
    r = run_py(
        """
        import jpype
        from pyguard.base.errors import JvmError
        from pyguard.live.guard import Guard
        from pyguard.jvm import start_jvm
        start_jvm()
        jpype.shutdownJVM()
        for attempt in (lambda: start_jvm(), lambda: Guard().run_scenario("convergent", "do the task")):
            try:
                attempt()
                print("NO ERROR")
            except JvmError as e:
                print("JvmError:", e)
        """
    )
    assert r.returncode == 0, r.stderr
    lines = r.stdout.strip().splitlines()
    assert len(lines) == 2 and all("cannot be restarted in the same process" in line for line in lines), r.stdout
    assert "JVMNotRunning" not in r.stdout + r.stderr


def test_the_first_start_freezes_the_startup_out_of_full_collections_once():
    out = run_py("""
        import gc, json
        from pyguard.jvm import start_jvm, run_agent, scripted_model
        start_jvm()
        frozen = gc.get_freeze_count()
        kept = [[] for _ in range(5000)]  # made after the start: a later start_jvm() must not freeze them
        start_jvm()
        again = gc.get_freeze_count()
        res = run_agent("aiservices", scripted_model("convergent"), "Where is order 34567?", callback=lambda e: None)
        gc.collect()
        print(json.dumps({"frozen": frozen, "again": again, "tracked": len(gc.get_objects()), "status": res.status}))
    """)
    assert out.returncode == 0, out.stderr
    got = json.loads(out.stdout.strip().splitlines()[-1])
    assert got["frozen"] > 20_000 and got["tracked"] < got["frozen"] / 10, got
    assert got["again"] == got["frozen"], "a second start_jvm() froze again"
    assert got["status"] == "answered"


@pytest.mark.parametrize("how", ["argument", "environment"])
def test_freeze_gc_false_or_the_environment_leaves_the_collector_alone_until_asked(how):
    out = run_py(
        f"""
        import gc, json
        from pyguard.jvm import start_jvm
        start_jvm({"freeze_gc=False" if how == "argument" else ""})
        plain = gc.get_freeze_count()
        start_jvm(freeze_gc=True)  # on the running JVM: freezes now
        print(json.dumps({{"plain": plain, "frozen": gc.get_freeze_count()}}))
    """,
        env={"PYGUARD_FREEZE_GC": "0"} if how == "environment" else None,
    )
    assert out.returncode == 0, out.stderr
    got = json.loads(out.stdout.strip().splitlines()[-1])
    assert got["plain"] == 0, "the collector was frozen although the caller said not to"
    assert got["frozen"] > 20_000, got
