"""The plugin's options and ini keys: registered in their own group, read into PluginSettings, bad values refused."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from pyguard.base.errors import JvmError
from pyguard.pytest_plugin.settings import DEFAULT_LIVE_IMAGE, DEFAULT_LIVE_MODEL, PluginSettings

SHOW_SETTINGS = """
import json
from pyguard.pytest_plugin import settings

def test_show(request):
    s = settings(request.config)
    print("SETTINGS=" + s.model_dump_json())
"""


def read_settings(result: pytest.RunResult) -> PluginSettings:
    line = next(line for line in result.outlines if "SETTINGS=" in line)
    return PluginSettings.model_validate_json(line.split("SETTINGS=", 1)[1])


def test_help_lists_the_pyguard_group_and_ini_keys(pytester: pytest.Pytester):
    result = pytester.runpytest("--help")
    text = result.stdout.str()
    assert "pyguard: guarded Java LangChain4j agents:" in text
    for option in (
        "--pyguard-classpath",
        "--pyguard-trace-dir",
        "--pyguard-policy",
        "--pyguard-keep-traces",
        "--pyguard-live-image",
        "--pyguard-live-model",
    ):
        assert option in text
    for key in ("pyguard_classpath", "pyguard_trace_dir", "pyguard_policy", "pyguard_keep_traces"):
        assert key in text


def test_defaults(pytester: pytest.Pytester):
    pytester.makepyfile(SHOW_SETTINGS)
    s = read_settings(pytester.runpytest("-s"))
    assert s == PluginSettings()
    assert (s.keep_traces, s.live_image, s.live_model) == ("failed", DEFAULT_LIVE_IMAGE, DEFAULT_LIVE_MODEL)


def test_ini_keys_resolve_against_the_ini_folder_and_the_command_line_wins(pytester: pytest.Pytester):
    (pytester.path / "policy.toml").write_text("")
    (pytester.path / "other.toml").write_text("")
    pytester.makefile(
        ".ini",
        pytest=f"""
        [pytest]
        pyguard_classpath =
            agent/target/agent.jar
            lib/a.jar{os.pathsep}lib/b.jar
        pyguard_trace_dir = traces
        pyguard_policy = policy.toml
        pyguard_keep_traces = all
        pyguard_live_model = tiny:1b
        """,
    )
    pytester.makepyfile(SHOW_SETTINGS)
    root = pytester.path
    s = read_settings(pytester.runpytest("-s"))
    assert s.classpath == tuple(str(root / p) for p in ("agent/target/agent.jar", "lib/a.jar", "lib/b.jar"))
    assert (s.trace_dir, s.policy, s.keep_traces, s.live_model) == (
        root / "traces",
        root / "policy.toml",
        "all",
        "tiny:1b",
    )

    s = read_settings(
        pytester.runpytest(
            "-s",
            "--pyguard-classpath",
            f"x.jar{os.pathsep}y.jar",
            "--pyguard-classpath=/abs/z.jar",
            "--pyguard-trace-dir",
            "/tmp/elsewhere",
            "--pyguard-policy",
            "other.toml",
            "--pyguard-keep-traces",
            "none",
            "--pyguard-live-image",
            "ollama/ollama:0.6.0",
        )
    )
    # the classpath adds up (ini first); the other settings are replaced by the command line
    assert s.classpath[3:] == (str(root / "x.jar"), str(root / "y.jar"), "/abs/z.jar")
    assert (s.trace_dir, s.policy, s.keep_traces) == (Path("/tmp/elsewhere"), root / "other.toml", "none")
    assert (s.live_image, s.live_model) == ("ollama/ollama:0.6.0", "tiny:1b")


def test_a_bad_keep_value_is_a_usage_error(pytester: pytest.Pytester):
    pytester.makefile(".ini", pytest="[pytest]\npyguard_keep_traces = sometimes\n")
    pytester.makepyfile("def test_x(): pass")
    result = pytester.runpytest()
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*pyguard_keep_traces = 'sometimes' is not valid: use one of failed, all, none*"])

    result = pytester.runpytest("--pyguard-keep-traces=never")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--pyguard-keep-traces: invalid choice: 'never'*"])


def test_a_missing_policy_file_is_a_usage_error(pytester: pytest.Pytester):
    pytester.makepyfile("def test_x(): pass")
    result = pytester.runpytest("--pyguard-policy", "nope.toml")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*pyguard policy file '*nope.toml' does not exist: fix --pyguard-policy*"])


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[stall]\nlow_gain_streek = 2\n", "*'stall.low_gain_streek'*unknown key*"),
        ("base_budget = [\n", "*"),
    ],
)
def test_a_policy_pyguard_cannot_use_stops_the_session_with_one_line(pytester: pytest.Pytester, text, message):
    (pytester.path / "pyguard.toml").write_text(text)
    pytester.makepyfile("def test_x(): pass\ndef test_y(): pass")
    result = pytester.runpytest()
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    errors = [line for line in result.stderr.lines if line.startswith("ERROR:")]
    assert len(errors) == 1, result.stderr.str()
    assert "pyguard policy '" in errors[0] and "pyguard.toml' cannot be used: " in errors[0]
    result.stderr.fnmatch_lines([f"ERROR: pyguard policy *{message}"])
    assert "Traceback" not in result.stderr.str() + result.stdout.str()


def test_classpath_globs_expand_and_missing_entries_name_themselves(tmp_path: Path):
    (tmp_path / "dep").mkdir()
    for name in ("b.jar", "a.jar"):
        (tmp_path / "dep" / name).write_text("")
    s = PluginSettings(classpath=(str(tmp_path / "dep" / "*.jar"), str(tmp_path / "dep")))
    assert s.resolved_classpath() == [
        str(tmp_path / "dep" / "a.jar"),
        str(tmp_path / "dep" / "b.jar"),
        str(tmp_path / "dep"),
    ]
    with pytest.raises(JvmError, match=r"entry '.*/none/\*\.jar' matches no file: build the agent first"):
        PluginSettings(classpath=(str(tmp_path / "none" / "*.jar"),)).resolved_classpath()
    with pytest.raises(JvmError, match=r"entry '.*/agent\.jar' does not exist"):
        PluginSettings(classpath=(str(tmp_path / "agent.jar"),)).resolved_classpath()


def test_without_pyguard_policy_the_nearest_tool_pyguard_is_the_session_policy(pytester: pytest.Pytester):
    pytester.makepyprojecttoml("[tool.pyguard]\nbase_budget = 5\n")
    pytester.makepyfile(SHOW_SETTINGS)
    result = pytester.runpytest("-s")
    found = pytester.path / "pyproject.toml"
    assert read_settings(result).policy == found
    result.stdout.fnmatch_lines([f"pyguard policy: {found}"])
    (pytester.path / "given.toml").write_text("")
    assert (
        read_settings(pytester.runpytest("-s", "--pyguard-policy", "given.toml")).policy == pytester.path / "given.toml"
    )


def test_the_header_names_the_classpath_and_a_missing_class_shows_it(pytester: pytest.Pytester):
    jar = pytester.path / "agent.jar"
    jar.write_text("")
    pytester.makepyfile(
        """
        def test_agent():
            # what jpype.JClass raises for a class that is not on the classpath
            raise TypeError("Class com.acme.MissingAgent is not found")
        """
    )
    result = pytester.runpytest("--pyguard-classpath", str(jar), "--junitxml", str(pytester.path / "junit.xml"))
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            f"pyguard classpath: {jar}",
            "*- pyguard classpath -*",
            "Class com.acme.MissingAgent is not found",
            "The agent's classpath (--pyguard-classpath / pyguard_classpath, after pyguard's own jars):",
            f"  {jar}",
            "Check the class's full name, that its jar is built*",
        ]
    )
    assert f"  {jar}" in (pytester.path / "junit.xml").read_text()
