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
