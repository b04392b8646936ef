"""@pytest.mark.pyguard: registered, arguments checked at collection (a clear usage error naming the bad one), merged."""

from __future__ import annotations

import pytest


def run_with_marker(pytester: pytest.Pytester, marker_args: str, *args: str) -> pytest.RunResult:
    pytester.makepyfile(
        f"""
        import pytest

        @pytest.mark.pyguard({marker_args})
        def test_agent():
            pass

        def test_other():
            pass
        """
    )
    return pytester.runpytest("--strict-markers", *args)


def test_the_marker_is_registered_with_its_arguments(pytester: pytest.Pytester):
    result = pytester.runpytest("--markers")
    result.stdout.fnmatch_lines(["@pytest.mark.pyguard(task_type=None, policy=None, max_iterations=None):*"])
    assert run_with_marker(pytester, 'task_type="lookup", max_iterations=8').ret == pytest.ExitCode.OK


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            "max_iter=3",
            "got unknown argument 'max_iter' (did you mean 'max_iterations'?): the arguments are task_type, policy, "
            "max_iterations",
        ),
        ("colour=3", "got unknown argument 'colour': the arguments are task_type, policy, max_iterations"),
        (
            '"lookup"',
            "takes keyword arguments only, got positional ('lookup',); write e.g. "
            "@pytest.mark.pyguard(task_type='lookup')",
        ),
        ("max_iterations=0", "max_iterations=0 must be an integer >= 1"),
        ('max_iterations="8"', "max_iterations='8' must be an integer >= 1"),
        ("max_iterations=True", "max_iterations=True must be an integer >= 1"),
        ("task_type=3", "task_type=3 must be a non-empty string such as 'lookup'"),
        ('task_type=" "', "task_type=' ' must be a non-empty string such as 'lookup'"),
        (
            'policy="missing.toml"',
            "policy='missing.toml' is not a file (looked for '*missing.toml'): give a TOML policy file",
        ),
        (
            'policy={"base_budget": 0, "stall": {"low_gain_streek": 2}}',
            "policy has bad fields: 'base_budget' = 0: Input should be greater than or equal to 1; "
            "'stall.low_gain_streek' = 2: unknown key; remove it or check its spelling",
        ),
        ("policy=42", "policy=42 must be a TOML file path, a dict of PolicyConfig fields or a PolicyConfig, not int"),
    ],
)
def test_a_bad_argument_fails_its_own_test_alone_with_one_line_naming_it(pytester, args, message):
    result = run_with_marker(pytester, args)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.assert_outcomes(passed=1, errors=1)  # reported at its setup, before any fixture starts a JVM
    result.stdout.fnmatch_lines([f"*test_a_bad_argument_fails_its_own*::test_agent: @pytest.mark.pyguard {message}"])
    assert "Traceback" not in result.stdout.str()


def test_a_bad_marker_does_not_stop_collection_or_other_selected_tests(pytester: pytest.Pytester):
    collected = run_with_marker(pytester, "max_iterations=0", "--co", "-q")
    assert collected.ret == pytest.ExitCode.OK
    collected.stdout.fnmatch_lines(["*::test_agent", "*::test_other"])
    deselected = pytester.runpytest("--strict-markers", "-k", "test_other")
    assert deselected.ret == pytest.ExitCode.OK
    deselected.assert_outcomes(passed=1)


def test_a_policy_file_is_found_next_to_the_test_file(pytester: pytest.Pytester):
    (pytester.path / "strict.toml").write_text("")
    pytester.makepyfile(
        """
        import pytest
        from pyguard.pytest_plugin.marker import marker_args

        @pytest.mark.pyguard(policy="strict.toml")
        def test_agent(request):
            assert marker_args(request.node).policy_file == request.path.parent / "strict.toml"
        """
    )
    assert pytester.runpytest().ret == pytest.ExitCode.OK


def test_markers_on_module_class_and_function_merge_and_the_closest_wins(pytester: pytest.Pytester):
    pytester.makepyfile(
        """
        import pytest
        from pyguard.pytest_plugin.marker import marker_args

        pytestmark = pytest.mark.pyguard(task_type="lookup", max_iterations=20)

        @pytest.mark.pyguard(max_iterations=10)
        class TestAgent:
            @pytest.mark.pyguard(task_type="triage")
            def test_closest(self, request):
                args = marker_args(request.node)
                assert (args.task_type, args.max_iterations) == ("triage", 10)

            def test_class(self, request):
                args = marker_args(request.node)
                assert (args.task_type, args.max_iterations) == ("lookup", 10)

        def test_module(request):
            args = marker_args(request.node)
            assert (args.task_type, args.max_iterations) == ("lookup", 20)
        """
    )
    pytester.runpytest().assert_outcomes(passed=3)
