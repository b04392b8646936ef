"""Scenario lint, kept at this path: it lives in :mod:`pyguard.jvm.scenario_lint`, beside the scenario files it checks
(:mod:`pyguard.jvm.scenarios`), so that the JVM edge reading a Java agent's tools into :class:`ToolSpec` values does not
import the testing helpers above it. Pure Python, like there."""

from __future__ import annotations

from pyguard.jvm.scenario_lint import (
    JsonType,
    LintProblem,
    ScenarioLintError,
    ToolParam,
    ToolSpec,
    check_scenario,
    lint_scenario,
)

__all__ = ["JsonType", "ToolParam", "ToolSpec", "LintProblem", "ScenarioLintError", "lint_scenario", "check_scenario"]
