"""Rows of docs/architecture.md's one-home table that a test can check (issue 31 point 7)."""

from __future__ import annotations

import ast
import itertools
from pathlib import Path

import pytest

from pyguard.base.events import token_count

ROOT = Path(__file__).resolve().parents[2]


def error_classes_outside_the_hierarchy(root: Path) -> list[str]:
    """Exception classes defined under ``root``'s ``pyguard/`` that derive from none of pyguard.base.errors' classes
    (followed through the classes defined in pyguard, by name). Warnings and click's own exceptions are not errors."""
    bases: dict[str, list[str]] = {}
    where: dict[str, str] = {}
    for path in sorted((root / "pyguard").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef):
                names = [b.attr if isinstance(b, ast.Attribute) else getattr(b, "id", "") for b in node.bases]
                bases[node.name] = names
                where[node.name] = f"{path.relative_to(root).as_posix()}:{node.lineno}"
    home = {n for n, w in where.items() if w.startswith("pyguard/base/errors.py:")}

    def roots(name: str, seen: frozenset[str] = frozenset()) -> set[str]:
        if name in home or name not in bases or name in seen:
            return {name}
        return set().union(*(roots(b, seen | {name}) for b in bases[name])) if bases[name] else {name}

    builtin_errors = {"Exception", "ValueError", "RuntimeError", "TypeError", "KeyError", "OSError", "LookupError"}
    return sorted(
        f"{where[n]} {n}" for n in bases if n not in home and roots(n) & builtin_errors and not roots(n) & home
    )


def test_every_error_is_in_the_one_hierarchy():
    # row "errors": pyguard/base/errors.py holds the one hierarchy; an exception class elsewhere derives from it
    assert error_classes_outside_the_hierarchy(ROOT) == []


def test_the_error_check_sees_one(tmp_path):
    (tmp_path / "pyguard" / "base").mkdir(parents=True)
    (tmp_path / "pyguard" / "base" / "errors.py").write_text("class PyguardError(Exception): ...\n")
    (tmp_path / "pyguard" / "a.py").write_text(
        "class Mine(ValueError): ...\nclass Fine(PyguardError): ...\nclass W(UserWarning): ...\n"
    )
    assert error_classes_outside_the_hierarchy(tmp_path) == ["pyguard/a.py:1 Mine"]


def test_the_sql_tokens_of_a_call_are_the_events_tokens():
    # row "token totals": the DuckDB summaries' SQL for a call's tokens is IterationEvent.tokens (token_count)
    duckdb = pytest.importorskip("duckdb")
    from pyguard.store.sql import EVENT_TOKENS

    def sql(v: int | None) -> str:
        return "CAST(NULL AS BIGINT)" if v is None else f"CAST({v} AS BIGINT)"

    con = duckdb.connect()
    for total, inp, out in itertools.product((None, 0, 7, 100), repeat=3):
        e = f"{{'total_tokens': {sql(total)}, 'input_tokens': {sql(inp)}, 'output_tokens': {sql(out)}}}"
        got = con.execute(f"SELECT {EVENT_TOKENS} FROM (SELECT {e} AS e)").fetchone()[0]
        assert got == token_count(total, inp, out), (total, inp, out)


# ---- one module defines each concept -------------------------------------------------------------------------------

HOMES = {
    "pyguard/base/ending/causes.py": ("Causes",),
    "pyguard/base/ending/outcome.py": ("settle", "finish_arguments", "RunEnding"),
    "pyguard/base/ending/footer.py": ("footer", "end_from_events", "token_totals", "tree_totals", "TokenTotals"),
    "pyguard/base/ending/verdict.py": ("verdict",),
    "pyguard/base/events.py": ("token_count", "sum_tokens", "UNTYPED", "opens_turn", "turn_starts"),
    "pyguard/base/agent_options.py": ("AgentOptions", "agent_options"),
    "pyguard/base/limits.py": ("fail_safe_cap", "guard_ceiling", "FAIL_SAFE_MARGIN", "DEFAULT_LOOP_ITERATIONS"),
    "pyguard/base/errors.py": ("PyguardError",),
    "pyguard/base/config_search.py": ("find_config_file", "read_policy_table"),
    "pyguard/loading/__init__.py": ("load_runs", "detect_format", "reads_columns"),
    "pyguard/loading/formats.py": ("FORMAT_TABLE",),
    "pyguard/engine/conditions.py": ("StopHit", "RunState", "StopCondition"),
    "pyguard/engine/stop.py": ("policy_condition",),
    "pyguard/store/sql.py": ("EVENT_TOKENS", "RUN_TOKENS"),
    "pyguard/jvm/ending.py": ("ending_of_result", "ending_of_exception"),
}
"""The one-home table's concepts (docs/architecture.md), by the names that hold them, and the module of each."""


def definitions(root: Path) -> dict[str, list[str]]:
    """Name -> the modules under ``root``'s ``pyguard/`` that define it at their top (def, class or assignment)."""
    found: dict[str, list[str]] = {}
    for path in sorted((root / "pyguard").rglob("*.py")):
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                names = [node.name]
            elif isinstance(node, ast.Assign):
                names = [t.id for t in node.targets if isinstance(t, ast.Name)]
            elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
                names = [node.target.id]
            else:
                continue
            for name in names:
                found.setdefault(name, []).append(path.relative_to(root).as_posix())
    return found


def test_each_concept_is_defined_in_its_one_home():
    found = definitions(ROOT)
    wrong = {
        name: found.get(name, []) for home, names in HOMES.items() for name in names if found.get(name, []) != [home]
    }
    assert wrong == {}, "defined elsewhere too (or not in its home): one home per concept"


def test_the_definition_check_sees_a_second_home(tmp_path):
    (tmp_path / "pyguard" / "a").mkdir(parents=True)
    (tmp_path / "pyguard" / "a" / "x.py").write_text("def settle():\n    pass\nUNTYPED = 'u'\n")
    (tmp_path / "pyguard" / "y.py").write_text("class settle: ...\ndef f():\n    UNTYPED = 1\n")
    assert definitions(tmp_path) == {
        "settle": ["pyguard/a/x.py", "pyguard/y.py"],
        "UNTYPED": ["pyguard/a/x.py"],
        "f": ["pyguard/y.py"],
    }


def test_the_runs_without_a_task_type_have_one_name():
    # row "the name of the runs without a task type": the text is written once, as UNTYPED
    spelled = sorted(
        path.relative_to(ROOT).as_posix()
        for path in (ROOT / "pyguard").rglob("*.py")
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.Constant) and node.value == "(untyped)"
    )
    assert spelled == ["pyguard/base/events.py"]


# ---- calls that only the home makes ---------------------------------------------------------------------------------


def callers(root: Path, name: str, module: str | None = None) -> list[str]:
    """The modules under ``root``'s ``pyguard/`` that use ``name`` (``module.name`` when ``module`` is given, else the
    bare name or any attribute of that name), called or passed on, outside an import."""
    found = set()
    for path in sorted((root / "pyguard").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if module is not None:
                hit = (
                    isinstance(node, ast.Attribute) and node.attr == name and getattr(node.value, "id", None) == module
                )
            else:
                hit = (isinstance(node, ast.Name) and node.id == name) or (
                    isinstance(node, ast.Attribute) and node.attr == name
                )
            if hit:
                found.add(path.relative_to(root).as_posix())
    return sorted(found)


def test_a_parquet_file_is_told_apart_in_one_place():
    # row "reading a file of runs": the format table detects Parquet, and reads_columns is the one choice of reading
    # a Parquet file's columns instead of loading its runs (the CLI's via_columns and replay_parallel ask it)
    assert callers(ROOT, "is_parquet") == ["pyguard/loading/__init__.py", "pyguard/loading/formats.py"]
    assert callers(ROOT, "reads_columns") == ["pyguard/cli/_runs.py", "pyguard/parallel.py"]


# json.loads outside the safe reader, each on JSON pyguard itself wrote (never a user's file or a model's text)
OWN_JSON = {
    "pyguard/cli/calibrate.py": "the calibration report pyguard just serialised",
    "pyguard/cli/check.py": "the gate's report pyguard just serialised",
    "pyguard/jvm/agents.py": "the bridge's run report, written by pyguard's Java",
    "pyguard/jvm/guarded_model.py": "the blocked-tool counts, written by pyguard's Java",
    "pyguard/jvm/scenarios.py": "a copy of a scenario mapping, its depth checked first (check_depth)",
}


def test_json_is_read_through_the_one_safe_reader():
    # rows "reading a file of runs" / "which policy file applies": every file and JSON text a user (or a model) hands
    # pyguard goes through pyguard/base/safe_reader.py (size, depth, integer size), TOML too
    read = set(callers(ROOT, "loads", "json")) | set(callers(ROOT, "load", "json"))
    assert sorted(read - {"pyguard/base/safe_reader.py"}) == sorted(OWN_JSON)
    toml = sorted(
        path.relative_to(ROOT).as_posix()
        for path in (ROOT / "pyguard").rglob("*.py")
        if any(
            isinstance(n, ast.Import) and any(a.name in ("tomllib", "tomli") for a in n.names)
            for n in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        )
    )
    assert toml == ["pyguard/base/safe_reader.py"]


def test_a_model_text_too_deep_to_read_is_no_invocation_and_no_crash(tmp_path):
    from pyguard.live.nested_run import supervisor_invocation
    from pyguard.pytest_plugin.artifacts import remove_earlier_traces

    deep = "[" * 100_000 + "]" * 100_000
    assert supervisor_invocation('{"agentName": "a", "arguments": {"q": ' + deep + "}}") is None
    assert supervisor_invocation('{"agentName": "a", "arguments": {"q": 1}}') == ("a", '{"q": 1}')
    (tmp_path / "deep.jsonl").write_text(deep + "\n")
    (tmp_path / "kept.jsonl").write_text('{"type": "run_start"}\n')
    assert remove_earlier_traces(tmp_path) == 1 and (tmp_path / "deep.jsonl").exists()


# ---- token counting ---------------------------------------------------------------------------------------------------


def token_sums(root: Path) -> list[str]:
    """Where ``input_tokens`` is added to ``output_tokens`` under ``root``'s ``pyguard/``, in Python or in SQL text,
    outside the homes of a call's tokens (``token_count``) and of their SQL form (``token_count_sql``)."""
    homes = {"pyguard/base/events.py", "pyguard/store/sql.py"}

    def names(node: ast.AST) -> set[str]:  # a weighted term (a price times tokens) is a cost, not a count
        if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Mult, ast.Div)):
            return set()
        return {getattr(n, "id", None) or getattr(n, "attr", None) or "" for n in ast.walk(node)}

    found = []
    for path in sorted((root / "pyguard").rglob("*.py")):
        name = path.relative_to(root).as_posix()
        if name in homes:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
                sides = names(node.left), names(node.right)
                if any("input_tokens" in a and "output_tokens" in b for a, b in (sides, sides[::-1])):
                    found.append(f"{name}:{node.lineno}")
            elif isinstance(node, ast.Constant) and isinstance(node.value, str):
                text = node.value.replace(" ", "")
                if "input_tokens+output_tokens" in text or "input_tokens,0)+coalesce(output_tokens" in text:
                    found.append(f"{name}:{node.lineno}")
    return sorted(set(found))


def test_tokens_are_counted_in_one_place():
    # row "token totals": a call's (or a footer's) tokens are token_count, and in SQL token_count_sql
    assert token_sums(ROOT) == []


def test_the_token_sum_check_sees_one(tmp_path):
    (tmp_path / "pyguard").mkdir()
    (tmp_path / "pyguard" / "a.py").write_text(
        "def f(e):\n    return (e.input_tokens or 0) + (e.output_tokens or 0)\n"
        "SQL = 'THEN input_tokens + output_tokens END'\nOK = 'input_tokens'\n"
    )
    assert token_sums(tmp_path) == ["pyguard/a.py:2", "pyguard/a.py:3"]


def test_the_sql_tokens_of_a_run_are_the_records_tokens():
    # row "token totals": a run's tokens in the DuckDB summaries are RunRecord.tokens (footer, else its calls)
    duckdb = pytest.importorskip("duckdb")
    from pyguard.base.events import IterationEvent, Outcome, RunEnd, RunRecord, RunStart
    from pyguard.store.sql import RUN_TOKENS

    def sql(v: int | None) -> str:
        return "CAST(NULL AS BIGINT)" if v is None else f"CAST({v} AS BIGINT)"

    con = duckdb.connect()
    calls = [(None, 3, None), (None, None, None), (10, 1, 1)]
    for footer in itertools.product((None, 5), (None, 2), (None, 7)):
        for n in range(len(calls) + 1):
            events = [
                IterationEvent(run_id="r", index=i + 1, total_tokens=t, input_tokens=a, output_tokens=b)
                for i, (t, a, b) in enumerate(calls[:n])
            ]
            end = RunEnd(
                run_id="r",
                outcome=Outcome.SUCCEEDED,
                iterations=n,
                total_tokens=footer[0],
                input_tokens=footer[1],
                output_tokens=footer[2],
            )
            record = RunRecord(start=RunStart(run_id="r"), events=events, end=end)
            rows = ", ".join(
                f"{{'total_tokens': {sql(t)}, 'input_tokens': {sql(a)}, 'output_tokens': {sql(b)}}}"
                for t, a, b in calls[:n]
            )
            listed = (
                f"[{rows}]"
                if n
                else "CAST([] AS STRUCT(total_tokens BIGINT, input_tokens BIGINT, output_tokens BIGINT)[])"
            )
            got = con.execute(
                f"SELECT {RUN_TOKENS} FROM (SELECT {sql(footer[0])} AS total_tokens, {sql(footer[1])} AS input_tokens,"
                f" {sql(footer[2])} AS output_tokens, {listed} AS events)"
            ).fetchone()[0]
            assert got == record.tokens, (footer, n)


# ---- limits ------------------------------------------------------------------------------------------------------------

LOOP_LIMITS = {
    "max_loop_iterations",
    "max_tool_calling_round_trips",
    "round_trips",
    "loop_iterations",
    "fail_safe_calls",
}
"""Limits on model calls whose defaults live in pyguard/base/limits.py (the policy's own, budget and hard cap, are
PolicyConfig's fields)."""


def limit_defaults(root: Path) -> list[str]:
    """A parameter or field named in LOOP_LIMITS given a number as its default, outside pyguard/base/limits.py."""
    found = []
    for path in sorted((root / "pyguard").rglob("*.py")):
        name = path.relative_to(root).as_posix()
        if name == "pyguard/base/limits.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            pairs: list[tuple[str, ast.AST | None]] = []
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                a = node.args
                positional = a.posonlyargs + a.args
                pairs += list(
                    zip([x.arg for x in positional[len(positional) - len(a.defaults) :]], a.defaults, strict=True)
                )
                pairs += [(x.arg, d) for x, d in zip(a.kwonlyargs, a.kw_defaults, strict=True)]
            elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
                pairs.append((node.target.id, node.value))
            for arg, default in pairs:
                if arg in LOOP_LIMITS and isinstance(default, ast.Constant) and type(default.value) is int:
                    found.append(f"{name}:{default.lineno} {arg}={default.value}")
    return found


def test_a_limit_has_its_default_in_limits_py():
    # row "every limit on model calls, its default": nested.py's old max_iterations=5 was a second home
    assert limit_defaults(ROOT) == []


def test_the_limit_default_check_sees_one(tmp_path):
    (tmp_path / "pyguard").mkdir()
    (tmp_path / "pyguard" / "a.py").write_text(
        "def f(x, max_loop_iterations=5, *, round_trips: int = 20, other=3):\n    pass\n"
        "class C:\n    fail_safe_calls: int = 50\n    name: int = 1\n"
    )
    assert limit_defaults(tmp_path) == [
        "pyguard/a.py:1 max_loop_iterations=5",
        "pyguard/a.py:1 round_trips=20",
        "pyguard/a.py:4 fail_safe_calls=50",
    ]
