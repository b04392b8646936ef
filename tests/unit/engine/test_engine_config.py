import pytest

from pyguard.base.errors import ConfigError
from pyguard.engine.config import (
    BudgetSettings,
    CapsConfig,
    EscalationConfig,
    NoveltyConfig,
    PolicyConfig,
    Price,
    ReflectionConfig,
    StallConfig,
    TaskTypeConfig,
)

FULL = PolicyConfig(
    base_budget=5,
    hard_cap=30,
    extension=2,
    escalation=EscalationConfig(on_stall="escalate"),
    stall=StallConfig(low_gain_streak=4),
    novelty=NoveltyConfig(shingle_size=6),
    caps=CapsConfig(
        max_model_calls=20,
        max_tool_calls_per_tool={"send_email": 2},
        max_cost=1.5,
        prices={"gpt-4o": Price(input_per_mtok=2.5, output_per_mtok=10)},
        max_wall_s=60,
    ),
    reflection=ReflectionConfig(max_quote_chars=50),
    task_types={"lookup": TaskTypeConfig(base_budget=3, hard_cap=6)},
)

ALL_MODELS = [
    Price(input_per_mtok=1, output_per_mtok=2),
    CapsConfig(),
    FULL.caps,
    NoveltyConfig(),
    StallConfig(),
    ReflectionConfig(),
    TaskTypeConfig(),
    TaskTypeConfig(base_budget=2),
    BudgetSettings(base_budget=1, hard_cap=2, extension=0, earn_threshold=0.1, earn_per_iteration=1),
    PolicyConfig(),
    FULL,
]


@pytest.mark.parametrize("model", ALL_MODELS, ids=lambda m: type(m).__name__)
def test_every_config_round_trips(model):
    assert type(model).model_validate(model.model_dump()) == model
    assert type(model).model_validate_json(model.model_dump_json()) == model


def test_toml_round_trip(tmp_path):
    path = tmp_path / "policy.toml"
    path.write_text(FULL.to_toml())
    assert PolicyConfig.from_toml(path) == FULL


def test_pyproject_table(tmp_path):
    path = tmp_path / "pyproject.toml"
    path.write_text(
        '[project]\nname = "x"\n\n[tool.pyguard]\nbase_budget = 4\n\n[tool.pyguard.check]\nmin_success = 0.9\n'
        "\n[tool.pyguard.task_types.lookup]\nhard_cap = 9\n"
    )
    cfg = PolicyConfig.from_toml(path)
    assert cfg.base_budget == 4 and cfg.budget_for("lookup").hard_cap == 9


def test_pyproject_policy_subtable(tmp_path):
    path = tmp_path / "pyproject.toml"
    path.write_text("[tool.pyguard.policy]\nhard_cap = 12\n")
    assert PolicyConfig.from_toml(path).hard_cap == 12


def test_pyproject_without_table(tmp_path):
    path = tmp_path / "pyproject.toml"
    path.write_text('[project]\nname = "x"\n')
    with pytest.raises(ConfigError, match=r"no \[tool.pyguard\] table"):
        PolicyConfig.from_toml(path)


@pytest.mark.parametrize(
    "toml, key, value",
    [
        ("base_budget = 0", "base_budget", "0"),
        ("[stall]\nlow_gain_threshold = 1.5", "stall.low_gain_threshold", "1.5"),
        ("[stall]\nlow_gain_treshold = 0.2", "stall.low_gain_treshold", "0.2"),
        ("[caps]\nmax_cost = -1", "caps.max_cost", "-1"),
        ('stall_outcome = "gave_up"', "stall_outcome", "'gave_up'"),
        ("[caps.prices.m]\ninput_per_mtok = 1", "caps.prices.m.output_per_mtok", ""),
    ],
)
def test_errors_name_key_value_and_file(tmp_path, toml, key, value):
    path = tmp_path / "bad.toml"
    path.write_text(toml + "\n")
    with pytest.raises(ConfigError) as info:
        PolicyConfig.from_toml(path)
    msg = str(info.value)
    assert repr(key) in msg and value in msg and str(path) in msg and "Fix" in msg


def test_cross_field_errors():
    with pytest.raises(ConfigError, match="base_budget 50 exceeds hard_cap 40"):
        PolicyConfig(base_budget=50, hard_cap=40)
    with pytest.raises(ConfigError, match="task_types.lookup: base_budget 8 exceeds hard_cap 3"):
        PolicyConfig(task_types={"lookup": {"hard_cap": 3}})
    with pytest.raises(ConfigError, match="max_tool_calls_per_tool"):
        CapsConfig(max_tool_calls_per_tool={"x": 0})


def test_bad_files(tmp_path):
    with pytest.raises(ConfigError, match="cannot read"):
        PolicyConfig.from_toml(tmp_path / "missing.toml")
    bad = tmp_path / "bad.toml"
    bad.write_text("base_budget = = 3")
    with pytest.raises(ConfigError, match="not valid TOML"):
        PolicyConfig.from_toml(bad)


def test_config_is_a_value_error_from_pyguard():
    with pytest.raises(ValueError):
        StallConfig(low_gain_streak=0)
