"""[tool.pyguard] found automatically: the nearest pyguard.toml or pyproject.toml with the table, from the current
directory up to the repository root, used by replay, check and tune when no --config is given, and named."""

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from pyguard.base.config_search import find_config_file
from pyguard.base.errors import ConfigError
from pyguard.check.synthetic import synth_runs
from pyguard.cli import main
from pyguard.engine import PolicyConfig
from pyguard.trace import write_runs

TRACE = Path(__file__).parents[1] / "data" / "recordings" / "pyguard_trace.jsonl"
MIXED = Path(__file__).parents[1] / "data" / "mixed_runs.jsonl"


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """tmp/repo (a repository root: .git) / pkg / sub, with a pyguard.toml above the repository."""
    (tmp_path / "pyguard.toml").write_text("base_budget = 99\n")  # outside the repository: never found from inside
    sub = tmp_path / "repo" / "pkg" / "sub"
    sub.mkdir(parents=True)
    (tmp_path / "repo" / ".git").mkdir()
    return tmp_path / "repo"


def test_nothing_inside_the_repository_is_none_and_the_search_stops_at_dot_git(repo: Path):
    assert find_config_file(repo / "pkg" / "sub") is None
    (repo / ".git").rmdir()
    (repo / ".git").write_text("gitdir: /elsewhere\n")  # a worktree's .git is a file: still the root
    assert find_config_file(repo / "pkg" / "sub") is None


def test_a_pyproject_without_the_table_is_passed_over_for_a_parents(repo: Path):
    (repo / "pkg" / "pyproject.toml").write_text("[project]\nname = 'pkg'\n[tool.ruff]\nline-length = 100\n")
    (repo / "pyproject.toml").write_text("[tool.pyguard]\nbase_budget = 5\n")
    assert find_config_file(repo / "pkg" / "sub") == (repo / "pyproject.toml").resolve()


def test_the_nearest_wins_and_pyguard_toml_before_pyproject_in_one_folder(repo: Path):
    (repo / "pyproject.toml").write_text("[tool.pyguard]\nbase_budget = 5\n")
    (repo / "pkg" / "pyproject.toml").write_text("[tool.pyguard]\nbase_budget = 6\n")
    assert find_config_file(repo / "pkg" / "sub") == (repo / "pkg" / "pyproject.toml").resolve()
    (repo / "pkg" / "pyguard.toml").write_text("base_budget = 7\n")
    assert find_config_file(repo / "pkg" / "sub") == (repo / "pkg" / "pyguard.toml").resolve()
    assert find_config_file(repo) == (repo / "pyproject.toml").resolve()


def test_the_default_start_is_the_current_directory(repo: Path, monkeypatch: pytest.MonkeyPatch):
    (repo / "pyguard.toml").write_text("base_budget = 5\n")
    monkeypatch.chdir(repo / "pkg" / "sub")
    assert find_config_file() == (repo / "pyguard.toml").resolve()
    config, path = PolicyConfig.discover()
    assert path == (repo / "pyguard.toml").resolve() and config.base_budget == 5


def test_without_a_repository_the_search_reaches_the_filesystem_root(tmp_path: Path):
    (tmp_path / "pyguard.toml").write_text("base_budget = 3\n")
    (tmp_path / "a" / "b").mkdir(parents=True)
    assert find_config_file(tmp_path / "a" / "b") == (tmp_path / "pyguard.toml").resolve()


def test_discover_without_a_file_is_the_defaults(repo: Path):
    assert PolicyConfig.discover(repo / "pkg") == (PolicyConfig(), None)


def test_a_broken_pyproject_is_a_config_error_naming_it(repo: Path):
    (repo / "pkg" / "pyproject.toml").write_text("[tool.pyguard\nbase_budget = 5\n")
    with pytest.raises(ConfigError, match=r"pyproject\.toml.*is not valid TOML"):
        find_config_file(repo / "pkg" / "sub")


def _cli(*args: str):
    return CliRunner().invoke(main, list(args))


def test_replay_uses_the_found_policy_and_names_it(repo: Path, monkeypatch: pytest.MonkeyPatch):
    found = repo / "pyproject.toml"
    found.write_text("[project]\nname = 'agent'\n\n[tool.pyguard]\nbase_budget = 1\nhard_cap = 2\nextension = 0\n")
    runs = MIXED  # runs of every kind, 13 of 84 stopped by the defaults
    monkeypatch.chdir(repo / "pkg")
    tight = json.loads(_cli("replay", str(runs), "--json", "--backend", "serial").output)
    assert tight["config"] == str(found.resolve())
    human = _cli("replay", str(runs), "--backend", "serial")
    assert human.exit_code == 0, human.output
    assert human.output.splitlines()[0] == f"policy: {found.resolve()} [tool.pyguard] (found automatically)"
    # --config wins over the found file; the defaults stop fewer runs than a budget of 1
    default = repo / "default.toml"
    default.write_text("")
    given = json.loads(_cli("replay", str(runs), "--json", "--backend", "serial", "--config", str(default)).output)
    assert given["config"] == str(default)
    assert tight["summary"]["stopped"] > given["summary"]["stopped"]


def test_without_a_file_the_commands_say_the_defaults(repo: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.chdir(repo / "pkg")
    data = json.loads(_cli("replay", str(TRACE), "--json", "--backend", "serial").output)
    assert data["config"] is None
    assert _cli("replay", str(TRACE), "--backend", "serial").output.startswith("policy: the defaults")


def test_check_names_the_found_policy(repo: Path, monkeypatch: pytest.MonkeyPatch):
    (repo / "pyguard.toml").write_text("base_budget = 4\n")
    runs = repo / "runs.jsonl"
    write_runs(runs, synth_runs(50, seed=3))
    monkeypatch.chdir(repo / "pkg" / "sub")
    res = _cli("check", str(runs), "--json")
    assert res.exit_code == 0, res.output
    assert json.loads(res.output)["config"] == str((repo / "pyguard.toml").resolve())


@pytest.mark.parametrize("command", [["replay"], ["check"], ["tune"]])
def test_a_bad_found_policy_is_exit_2_naming_the_file(repo: Path, monkeypatch: pytest.MonkeyPatch, command):
    (repo / "pyguard.toml").write_text("base_budgett = 4\n")
    monkeypatch.chdir(repo / "pkg")
    # check reads the policy only to replay recordings: give it one (OpenAI messages)
    runs = Path(__file__).parents[1] / "data" / "recordings" / ("openai_runs.jsonl" if command == ["check"] else "")
    res = _cli(*command, str(runs if command == ["check"] else TRACE))
    assert res.exit_code == 2, (res.output, res.exception)
    assert "base_budgett" in res.stderr and "pyguard.toml" in res.stderr


def test_one_way_to_a_policy_named_or_not(repo: Path, monkeypatch: pytest.MonkeyPatch):
    """Issue 24: "from_toml if a path, else the default" was written out in five places; PolicyConfig.from_file is
    the one, PolicyConfig.discover (advertised in the README) is the CLI's no-config path, and the TOML and its
    [tool.pyguard] table are read by config_search alone."""
    from pyguard.cli._policy import load_policy

    assert PolicyConfig.from_file(None) == PolicyConfig()
    (repo / "pyproject.toml").write_text("[tool.pyguard]\nbase_budget = 7\n")
    monkeypatch.chdir(repo / "pkg" / "sub")
    config, found = PolicyConfig.discover()
    assert config.base_budget == 7 and found == (repo / "pyproject.toml").resolve()
    assert load_policy(None) == (config, found)
    named = repo / "named.toml"
    named.write_text("base_budget = 3\n")
    assert (
        load_policy(named) == (PolicyConfig.from_toml(named), named) and PolicyConfig.from_file(named).base_budget == 3
    )
    (repo / "pyproject.toml").write_text("[tool]\nother = 1\n")
    with pytest.raises(ConfigError, match="has no \\[tool.pyguard\\] table"):
        PolicyConfig.from_toml(repo / "pyproject.toml")
