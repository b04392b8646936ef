"""The task file's user-agent tasks (factory, model source, classpath): parsed, resolved and refused without a JVM."""

from __future__ import annotations

import pytest

from pyguard.base.errors import InputError
from pyguard.live.calibration import PlannedRun, parse_tasks
from pyguard.live.calibration.runners import DEFAULT_ENV_MODEL, env_model_settings

FACTORY = {"class": "com.acme.Agents", "method": "create"}


def task(**extra) -> dict:
    return {"id": "t", "task_type": "lookup", "task": "Where is order 12345?", **extra}


def test_a_factory_task_defaults_to_the_local_server_and_resolves_the_classpath(tmp_path):
    ts = parse_tasks(
        {"classpath": ["target/classes", "/abs/lib/*.jar"], "tasks": [task(factory=FACTORY, scenario="convergent")]},
        base_dir=tmp_path,
    )
    t = ts.tasks[0]
    assert t.model == "server" and t.factory is not None
    assert (t.factory.class_name, t.factory.method, t.factory.call) == ("com.acme.Agents", "create", "chat")
    assert t.factory.classpath == (str(tmp_path / "target" / "classes"), "/abs/lib/*.jar")
    fp = PlannedRun(task=t, rep=1, cap=10).fingerprint()
    assert fp["factory"] == "com.acme.Agents.create:chat" and fp["model"] == "server"


def test_pyguard_agents_keep_their_old_fingerprint_keys_as_none():
    t = parse_tasks({"tasks": [task(scenario="convergent")]}).tasks[0]
    fp = PlannedRun(task=t, rep=1, cap=10).fingerprint()
    assert fp["factory"] is None and fp["model"] is None  # traces written before factories existed still match


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        ({"factory": FACTORY}, "needs a scenario to play"),
        ({"factory": FACTORY, "model": "env", "scenario": "convergent"}, "scenario is not used with model = 'env'"),
        ({"model": "env", "scenario": "convergent"}, "model = 'env' is for a factory task"),
        ({"factory": {"class": "not a class"}, "scenario": "convergent"}, "'not a class' is not a Java class name"),
        ({"factory": {"class": "a.B", "method": "new-agent"}, "scenario": "convergent"}, "is not a Java method name"),
        (
            {"factory": {"class": "a.B", "jar": "x.jar"}, "scenario": "convergent"},
            "a factory takes class, method, call",
        ),
        ({"factory": FACTORY, "model": "cloud", "scenario": "convergent"}, "model"),
        ({}, "scenario is required"),
    ],
)
def test_bad_factory_tasks_are_refused_naming_the_task_and_what_to_do(extra, message):
    with pytest.raises(InputError, match="task 1 \\('t'\\)") as info:
        parse_tasks({"tasks": [task(**extra)]}, source="tasks.toml")
    assert message in str(info.value)


def test_a_classpath_that_is_not_a_list_of_paths_is_refused():
    with pytest.raises(InputError, match="classpath must be a list of paths"):
        parse_tasks({"classpath": [1], "tasks": [task(scenario="convergent")]})


def test_the_env_model_reads_the_openai_variables():
    assert env_model_settings({"OPENAI_API_KEY": "k"}) == ("https://api.openai.com/v1", "k", DEFAULT_ENV_MODEL)
    env = {"OPENAI_API_KEY": "k", "OPENAI_BASE_URL": "http://127.0.0.1:9/v1", "OPENAI_MODEL": "m"}
    assert env_model_settings(env) == ("http://127.0.0.1:9/v1", "k", "m")
    with pytest.raises(InputError, match="needs OPENAI_API_KEY"):
        env_model_settings({})
