"""The frontier workload's families for the patterns of real agents (issue 10), each with a legitimate and a looping
variant. Every builder takes a :class:`~workload_common.Builder`, the spec and the task's answer key, fills in turns
and tools, and returns ``(answer_at, loop_from_call)`` (model calls, 1-based; one of them None).

- ``edit_rerun`` / ``edit_loop``: a coding agent edits a file (a new edit each time) and re-runs the reproduction; the
  same failure comes back until the 3rd-5th edit fixes it. The looping variant re-applies the same edit (the editor
  refuses: "No replacement was performed") or undoes it; after a reflection it tries a new edit, re-runs, answers.
- ``rephrase_found`` / ``rephrase_loop``: ``search["Scat"]`` -> ``Could not find ["Scat"]. Similar: [...]``, then
  queries rephrased or taken from the suggestions; found after 2-5 misses, or never.
- ``poll_volatile`` / ``poll_stuck``: submit a job, poll its status with the id taken from the submit result; the
  status is unchanged but for a timestamp, a request id and a duration, until the job finishes after k polls (or never).
- ``large_pages`` / ``large_loop``: 10 KB pages (a web listing or a log window) with 13-16% new content each; or the
  same page fetched again and again, only its volatile footer changing.
- ``long_work`` / ``long_loop``: 44-60 distinct productive calls (record audits, or open-and-edit over many files);
  or 20-38 of them, then a loop.

Conversations (several user messages) are in :mod:`workload_conversation`.
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np
from workload_common import Builder, Clock, geometric_extra, hexid, ident, words

__all__ = [
    "edit_rerun",
    "edit_loop",
    "rephrase_found",
    "rephrase_loop",
    "poll_volatile",
    "poll_stuck",
    "large_pages",
    "large_loop",
    "long_work",
    "long_loop",
]


# ---- edit, then re-run ----------------------------------------------------------------------------------------------

_FUNCS = [
    "parse_header",
    "load_config",
    "normalize_path",
    "to_timestamp",
    "merge_ranges",
    "split_query",
    "read_chunk",
    "format_amount",
    "resolve_alias",
    "decode_token",
]
_PKGS = ["httpkit", "tablib", "confparse", "ranger", "tokenizer", "ledger", "pathtools", "chrono"]
_FIXES = [
    "value = int(raw.strip())",
    "value = int(raw.strip() or 0)",
    "value = int(raw.strip().lstrip('+'))",
    "value = int(float(raw))",
    "value = int(raw, 10) if raw else None",
    "value = int(raw.split('#')[0].strip())",
    "value = int(str(raw).strip(), base=10)",
    "value = int(raw.replace('_', '').strip())",
    "value = None if raw is None else int(raw.strip())",
    "value = int(raw.strip()) if raw.strip() else default",
]


class _Repo:
    """One bug in one file: a function, its snippet, the failing reproduction and the passing one."""

    def __init__(self, rng: np.random.Generator) -> None:
        self.rng = rng
        self.pkg = str(rng.choice(_PKGS))
        self.func = str(rng.choice(_FUNCS))
        self.path = f"/testbed/src/{self.pkg}/{self.func.split('_')[0]}.py"
        self.line = int(rng.integers(40, 400))
        self.var = str(rng.choice(["raw", "text", "field", "chunk"]))
        self.old = "value = int(raw)"
        fixes = list(rng.permutation(_FIXES))
        self.fixes = [str(f) for f in fixes]

    def snippet(self, body: str) -> str:
        lines = [
            f"def {self.func}(raw, default=None):",
            '    """Parse one field of the header."""',
            "    if raw is None:",
            "        return default",
            f"    {body}",
            "    if value < 0:",
            f"        raise ValueError(f'negative {self.func} value: {{value}}')",
            "    return value",
        ]
        return "\n".join(f"{self.line - 4 + i:6d}\t{line}" for i, line in enumerate(lines))

    def view(self) -> str:
        head = [f"Here's the result of running `cat -n` on {self.path}:"]
        body = [
            f"{i:6d}\t{line}"
            for i, line in enumerate(
                [
                    "import re",
                    "from typing import Optional",
                    "",
                    f"__all__ = ['{self.func}']",
                    "",
                    "_PATTERN = re.compile(r'^(?P<key>[A-Za-z-]+):\\s*(?P<value>.*)$')",
                    "",
                ],
                start=1,
            )
        ]
        return "\n".join(head + body + ["   ...", self.snippet(self.old)])

    def edited(self, body: str) -> str:
        return (
            f"The file {self.path} has been edited. Here's the result of running `cat -n` on a snippet of {self.path}:\n"
            f"{self.snippet(body)}\nReview the changes and make sure they are as expected. Edit the file again if necessary."
        )

    def failure(self) -> str:
        return (
            'Traceback (most recent call last):\n  File "/testbed/reproduce.py", line 7, in <module>\n'
            f"    print({self.func}(' 42 '))\n  File \"{self.path}\", line {self.line}, in {self.func}\n"
            f"    raise ValueError(f'invalid {self.func} value: {{raw!r}}')\n"
            f"ValueError: invalid {self.func} value: ' 42 '"
        )

    def passed(self) -> str:
        return f"42\n{self.func}: all 4 cases OK"

    def tools(self, b: Builder, fix: str) -> None:
        b.tool(
            "bash",
            "run a shell command in the repository",
            {"command": "string"},
            cases=[
                {"when_matches": {"command": "reproduce"}, "when_state": {"content": fix}, "result": self.passed()},
                {"when_matches": {"command": "reproduce"}, "result": self.failure()},
                {
                    "when_matches": {"command": "grep"},
                    "result": f"{self.path}:{self.line - 4}:def {self.func}(raw, default=None):\n"
                    f"/testbed/tests/test_{self.func}.py:12:    assert {self.func}(' 42 ') == 42",
                },
                {"result": ""},
            ],
        )
        b.tool(
            "str_replace_editor",
            "view or edit a file",
            {"command": "string", "path": "string", "old_str": "string", "new_str": "string"},
            cases=[
                {"when": {"command": "view"}, "result": self.view()},
                {
                    "when_state": {"content": "{arg:new_str}"},
                    "error": f"No replacement was performed, old_str `{{arg:old_str}}` did not appear verbatim in {self.path}.",
                },
                {"set": {"content": "{arg:new_str}"}, "result": self.edited("{arg:new_str}")},
            ],
        )

    def edit(self, b: Builder, old: str, new: str) -> dict:
        return b.call("str_replace_editor", command="str_replace", path=self.path, old_str=old, new_str=new)

    def rerun(self, b: Builder) -> dict:
        return b.call("bash", command="cd /testbed && python reproduce.py")

    def explore(self, b: Builder) -> None:
        b.step(b.call("bash", command=f"grep -rn 'def {self.func}' /testbed/src"))
        b.step(b.call("str_replace_editor", command="view", path=self.path, old_str="", new_str=""))
        b.step(self.rerun(b))


def edit_rerun(b: Builder, spec: Any, expected: str) -> tuple[int, None]:
    repo = _Repo(b.rng)
    attempts = int(b.rng.integers(3, 6))
    fix = repo.fixes[attempts - 1]
    repo.tools(b, fix)
    repo.explore(b)
    current = repo.old
    for i in range(attempts):
        new = repo.fixes[i]
        b.step(repo.edit(b, current, new))
        b.step(repo.rerun(b))
        current = new
    b.turns.append(
        {
            "answer": f"The reproduction passes now with `{fix}` in {repo.path}. Final answer {expected}.",
            "output_tokens": 80,
        }
    )
    return len(b.turns), None


def edit_loop(b: Builder, spec: Any, expected: str) -> tuple[None, int]:
    repo = _Repo(b.rng)
    fix = repo.fixes[-1]
    repo.tools(b, fix)
    repo.explore(b)
    current = repo.old
    for i in range(int(b.rng.integers(1, 3))):
        b.step(repo.edit(b, current, repo.fixes[i]))
        b.step(repo.rerun(b))
        current = repo.fixes[i]
    b.mark_loop()
    if b.rng.random() < 0.5:  # re-applies the same edit: the editor refuses, the failure stays
        b.step(repo.edit(b, repo.old, current))
        b.step(repo.rerun(b))
    else:  # undoes it and re-does it
        b.step(repo.edit(b, current, repo.old))
        b.step(repo.rerun(b))
        b.step(repo.edit(b, repo.old, current))
        b.step(repo.rerun(b))
    b.try_first = [{"tool_calls": [repo.edit(b, current, fix)]}, {"tool_calls": [repo.rerun(b)]}]
    b.recovery = f"A different approach fixed it: `{fix}` in {repo.path}; {{last_result}}. Final answer {expected}."
    return None, b.calls_before_loop() + 1


# ---- rephrased failing lookups ------------------------------------------------------------------------------------

_FIRST = ["John", "Maria", "Kenji", "Amara", "Lars", "Ines", "Tomas", "Priya", "Omar", "Greta"]
_KINDS = [
    "(album)",
    "(band)",
    "(song)",
    "(film)",
    "(novel)",
    "(singer)",
    "(disambiguation)",
    "River",
    "County",
    "Records",
    "Festival",
    "Station",
    "discography",
]


def _title(rng: np.random.Generator, stem: str) -> str:
    r = rng.random()
    if r < 0.35:
        return f"{stem} {rng.choice(_KINDS)}"
    if r < 0.6:
        return f"{stem} {rng.choice(_FIRST)}"
    if r < 0.8:
        return f"{rng.choice(_FIRST)} {stem}"
    return f"The {stem}s"


def _miss(rng: np.random.Generator, stem: str, first: str | None) -> str:
    """A failed lookup: the query echoed raw, five similar titles (``first`` first)."""
    sims = [first] if first else []
    while len(sims) < 5:
        t = _title(rng, stem)
        if t not in sims:
            sims.append(t)
    return "Could not find [{arg:query}]. Similar: [" + ", ".join(f"'{s}'" for s in sims) + "]."


def _search_tool(b: Builder, target: str | None, page: str, misses: list[str], as_error: bool) -> None:
    """``search``: the target's page, else the next miss (a result, or an error the tool throws)."""
    cases: list[dict] = [{"when": {"query": target}, "result": page}] if target is not None else []
    cases.append({"errors": misses} if as_error else {"results": misses})
    b.tool("search", "search an encyclopedia for an entity", {"query": "string"}, cases=cases)


_SUGGESTION = "Similar: \\['([^']+)'"


def _rephrasings(rng: np.random.Generator, stem: str, n: int) -> list[str]:
    extra = [
        "singer",
        "musician",
        "biography",
        "born",
        "1990s",
        "career",
        "album",
        "discography",
        "real name",
        "hit song",
        "wikipedia",
        "group",
        "producer",
        "debut",
        "awards",
    ]
    return [stem] + [f"{stem} {w}" for w in rng.permutation(extra)[: n - 1]]


def _entity(rng: np.random.Generator) -> tuple[str, str, str]:
    """(what the agent first asks for, the title it is filed under, that page's text)."""
    stem = str(rng.choice(["Scat", "Kepler", "Marlow", "Vesper", "Halden", "Corvo", "Tamsin", "Orrin", "Lyle", "Bram"]))
    target = f"{stem}man {rng.choice(_FIRST)}" if stem == "Scat" else f"{stem} {rng.choice(_KINDS)}"
    page = (
        f"{target} is {words(rng, 3)} known for {words(rng, 6)}. Born in {rng.integers(1930, 1990)} in "
        f"{rng.choice(['Ohio', 'Bavaria', 'Osaka', 'Lagos', 'Leeds'])}, {words(rng, 12)}. "
        f"In {rng.integers(1960, 2010)} {words(rng, 10)}."
    )
    return stem, target, page


def rephrase_found(b: Builder, spec: Any, expected: str) -> tuple[int, None]:
    rng = b.rng
    stem, target, page = _entity(rng)
    misses_n = int(rng.integers(2, 6))
    misses = [_miss(rng, stem, target if i == misses_n - 1 else None) for i in range(misses_n)]
    _search_tool(b, target, page, misses, as_error=bool(rng.random() < 0.5))
    b.tool(
        "lookup",
        "find a keyword on the current page",
        {"keyword": "string"},
        results=[f"(Result 1 / 1) {page.split('. ')[1]}."],
    )
    queries = _rephrasings(rng, stem, misses_n)
    for i in range(misses_n):
        if i > 0 and rng.random() < 0.4:  # the first suggestion of the last miss (not the target before the last miss)
            b.step({"name": "search", "arguments": {"query": queries[i]}, "arguments_from": {"query": _SUGGESTION}})
        else:
            b.step(b.call("search", query=queries[i]))
    b.step({"name": "search", "arguments": {"query": target}, "arguments_from": {"query": _SUGGESTION}})
    b.step(b.call("lookup", keyword="born"))
    b.turns.append({"answer": f"Found it under '{target}'. Final answer {expected}.", "output_tokens": 60})
    return len(b.turns), None


def rephrase_loop(b: Builder, spec: Any, expected: str) -> tuple[None, int]:
    rng = b.rng
    prefix = int(rng.choice([0, 1, 2], p=[0.4, 0.4, 0.2]))
    b.productive(prefix, 0.0)
    stem, _, _ = _entity(rng)
    misses = [_miss(rng, stem, None) for _ in range(40)]
    _search_tool(b, None, "", misses, as_error=bool(rng.random() < 0.5))
    b.tool("search_web", "search the web", {"query": "string"}, results=["No results."])
    queries = _rephrasings(rng, stem, 12)
    b.step(b.call("search", query=queries[0]))
    b.mark_loop()
    for q in queries[1:]:
        b.step(b.call("search", query=q))
        b.step({"name": "search", "arguments": {"query": q}, "arguments_from": {"query": _SUGGESTION}})
    b.recovery = f"I could not find an entry for '{stem}' under any of the names I tried. Final answer {expected}."
    if rng.random() < 0.5:
        b.try_first = [{"tool_calls": [b.call("search_web", query=f"{stem} {rng.choice(_KINDS)}")]}]
    return None, b.calls_before_loop() + 1


# ---- polling with volatile fields ---------------------------------------------------------------------------------


def _job(b: Builder, polls: int | None) -> tuple[str, str]:
    """Tools of one job that finishes after ``polls`` status checks (None: never). Returns (job id, final status)."""
    rng = b.rng
    clock = Clock(rng)
    job = f"job-{hexid(rng, 8)}"
    rows = int(rng.integers(1000, 90000))
    submitted = clock.tick()
    b.tool(
        "submit_export",
        "submit an export job",
        {"query": "string"},
        results=[
            json.dumps(
                {"job_id": job, "status": "QUEUED", "submitted_at": submitted, "request_id": f"req_{hexid(rng, 16)}"}
            )
        ],
    )

    def status(state: str, **more: Any) -> str:
        t = clock.tick()
        return json.dumps(
            {
                "job_id": job,
                "status": state,
                "submitted_at": submitted,
                "checked_at": t,
                "request_id": f"req_{hexid(rng, 16)}",
                "elapsed_ms": int(rng.integers(800, 900000)),
                **more,
            }
        )

    n = polls if polls is not None else 60
    seq = [status("PENDING") for _ in range(n - 1 if polls is not None else n)]
    final = f"s3://exports/{hexid(rng, 6)}/part-0000.csv"
    if polls is not None:
        seq.append(status("SUCCEEDED", rows=rows, result_url=final))
    b.tool(
        "get_job_status",
        "get the status of a job",
        {"job_id": "string"},
        cases=[{"when": {"job_id": job}, "results": seq}, {"error": "404 Not Found: no job with id {arg:job_id}"}],
    )
    return job, final


def poll_volatile(b: Builder, spec: Any, expected: str) -> tuple[int, None]:
    polls = geometric_extra(b.rng, 2, 0.3, 15)
    job, final = _job(b, polls)
    b.step(
        b.call(
            "submit_export", query=f"orders where region = '{b.rng.choice(['EU', 'US', 'APAC'])}' and {words(b.rng, 2)}"
        )
    )
    b.step(
        {
            "name": "get_job_status",
            "arguments": {"job_id": "unknown"},
            "arguments_from": {"job_id": '"job_id": "([^"]+)"'},
        },
        on_result=[
            {
                "contains": "SUCCEEDED",
                "then": {
                    "answer": f"The export {job} finished: {final}. Final answer {expected}.",
                    "output_tokens": 60,
                },
            }
        ],
    )
    b.loop_at = None
    return polls + 2, None


def poll_stuck(b: Builder, spec: Any, expected: str) -> tuple[None, int]:
    job, _ = _job(b, None)
    b.step(b.call("submit_export", query=f"invoices for {words(b.rng, 2)}"))
    b.step(
        {
            "name": "get_job_status",
            "arguments": {"job_id": "unknown"},
            "arguments_from": {"job_id": '"job_id": "([^"]+)"'},
        }
    )
    b.mark_loop()
    b.step(
        {
            "name": "get_job_status",
            "arguments": {"job_id": "unknown"},
            "arguments_from": {"job_id": '"job_id": "([^"]+)"'},
        }
    )
    b.recovery = (
        f"The export {job} is still PENDING; it has not progressed, so I am reporting that. Final answer {expected}."
    )
    return None, b.calls_before_loop() + 1


# ---- large results with a modest new share ------------------------------------------------------------------------

PAGE_CHARS = 10_000


def _boilerplate(rng: np.random.Generator, chars: int) -> tuple[str, str]:
    menu = sorted(set(words(rng, 40).split()))
    nav = "Home | " + " | ".join(w.title() for w in rng.permutation(menu)[:18].tolist())
    parts = [
        f"ACME Supply - {words(rng, 2).title()}",
        nav,
        "Sign in | Orders | Cart (0)",
        "Free shipping on orders over $50. Returns within 30 days. " * 2,
    ]
    foot = []
    while sum(len(p) for p in parts) + sum(len(f) for f in foot) < chars:
        foot.append(f"{words(rng, 1).title()}: " + ", ".join(words(rng, 2) for _ in range(6)) + ".")
    head = "\n".join(parts)
    return head, "\n".join(foot)


def _page(rng: np.random.Generator, head: str, foot: str, body: str, clock: Clock) -> str:
    return f"{head}\n\n{body}\n\n{foot}\nPage generated {clock.tick(1, 5)} in {rng.integers(40, 400)} ms - request {hexid(rng, 10)}"


def _listing(rng: np.random.Generator, chars: int) -> str:
    rows = []
    while sum(len(r) + 1 for r in rows) < chars:
        rows.append(
            f"[{ident(rng, 'B0')}] {words(rng, 4).title()} - ${rng.integers(5, 400)}.{rng.integers(0, 99):02d} - "
            f"rating {rng.integers(30, 50) / 10} ({rng.integers(1, 9000)} reviews)"
        )
    return "\n".join(rows)


def _pages(b: Builder, n: int, repeat_last: bool) -> list[str]:
    rng = b.rng
    share = float(rng.uniform(0.13, 0.16))
    head, foot = _boilerplate(rng, int(PAGE_CHARS * (1 - share)))
    clock = Clock(rng)
    pages = [
        _page(rng, head, foot, f"Results page {i + 1}:\n" + _listing(rng, int(PAGE_CHARS * share)), clock)
        for i in range(n)
    ]
    if repeat_last:  # the last page again: only its volatile footer changes (the time, the request id)
        body = pages[-1].split("\n\n")[1]
        pages.append(
            f"{head}\n\n{body}\n\n{foot}\nPage generated {clock.tick(1, 5)[:-1]}.{{call}}Z in 1{{call}} ms"
            f" - request {hexid(rng, 6)}{{call}}"
        )
    return pages


def _log_windows(b: Builder, n: int) -> list[str]:
    rng = b.rng
    share = float(rng.uniform(0.13, 0.16))
    clock = Clock(rng)
    comps = ["scheduler", "ingest", "api", "worker-3", "db-pool", "cache"]
    lines: list[str] = []
    per_window = 110
    step = max(1, round(per_window * share))
    while len(lines) < per_window + step * n:
        lines.append(
            f"{clock.tick(0, 3)} {rng.choice(['INFO', 'INFO', 'INFO', 'WARN', 'DEBUG'])} "
            f"[{rng.choice(comps)}] {words(rng, int(rng.integers(5, 10)))} id={hexid(rng, 8)}"
        )
    return ["\n".join(lines[i * step : i * step + per_window]) for i in range(n)]


def large_pages(b: Builder, spec: Any, expected: str) -> tuple[int, None]:
    rng = b.rng
    n = int(rng.integers(3, 9))
    if rng.random() < 0.5:
        pages = _pages(b, n, False)
        b.tool(
            "browse",
            "open a page of the store's search results",
            {"url": "string"},
            by_argument={
                "name": "url",
                "values": {f"https://shop.example/search?q=cable&page={i + 1}": p for i, p in enumerate(pages)},
                "default": "404",
            },
        )
        for i in range(n):
            b.step(b.call("browse", url=f"https://shop.example/search?q=cable&page={i + 1}"))
    else:
        pages = _log_windows(b, n)
        b.tool(
            "read_log",
            "read 110 lines of the service log from a line offset",
            {"offset": "integer"},
            by_argument={"name": "offset", "values": {str(i): p for i, p in enumerate(pages)}, "default": ""},
        )
        for i in range(n):
            b.step(b.call("read_log", offset=i))
    b.turns.append({"answer": f"I went through {n} pages. Final answer {expected}.", "output_tokens": 60})
    return n + 1, None


def large_loop(b: Builder, spec: Any, expected: str) -> tuple[None, int]:
    rng = b.rng
    n = int(rng.integers(1, 4))
    pages = _pages(b, n, True)
    b.tool("browse", "open a page of the store's search results", {"url": "string"}, results=pages)
    for i in range(n):
        b.step(b.call("browse", url=f"https://shop.example/search?q=cable&page={i + 1}"))
    b.mark_loop()
    b.step(b.call("browse", url=f"https://shop.example/search?q=cable&page={n}"))  # "Next >" on the last page
    b.recovery = f"The listing ends at page {n}; nothing more to read. Final answer {expected}."
    return None, b.calls_before_loop() + 1


# ---- long productive work -----------------------------------------------------------------------------------------


def _refactor(b: Builder, n_calls: int) -> None:
    """Open a file, edit it; the next file: distinct files, edit results that look alike but for their snippet."""
    rng = b.rng
    b.tool(
        "open_file",
        "open a file",
        {"path": "string"},
        by_argument={"name": "path", "values": {}, "default": "No such file"},
    )
    b.tool(
        "edit_file",
        "replace text in a file",
        {"path": "string", "old": "string", "new": "string"},
        results=[
            "The file {arg:path} has been edited. Here's the result of running `cat -n` on a snippet:\n"
            "    41\t    {arg:new}\nReview the changes and make sure they are as expected."
        ],
    )
    done = 0
    while done < n_calls:
        path = f"src/{words(rng, 1)}/{words(rng, 1)}_{rng.integers(1, 99)}.py"
        src = "\n".join(f"{i:6d}\t{words(rng, int(rng.integers(3, 9)))}" for i in range(1, int(rng.integers(12, 30))))
        b.tools["open_file"]["by_argument"]["values"][path] = f"[File: {path}]\n{src}"
        b.step(b.call("open_file", path=path))
        done += 1
        if done < n_calls:
            b.step(
                b.call(
                    "edit_file",
                    path=path,
                    old="from legacy import client",
                    new=f"from {words(rng, 1)}.client import Client  # {hexid(rng, 6)}",
                )
            )
            done += 1


def long_work(b: Builder, spec: Any, expected: str) -> tuple[int, None]:
    n = int(b.rng.integers(44, 61))
    if b.rng.random() < 0.5:
        b.productive(n, 0.0)
    else:
        _refactor(b, n)
    b.turns.append({"answer": f"All {n} steps done. Final answer {expected}.", "output_tokens": 80})
    return n + 1, None


def long_loop(b: Builder, spec: Any, expected: str) -> tuple[None, int]:
    n = int(b.rng.integers(20, 39))
    b.productive(n, 0.0)
    last = b.turns[-1]["tool_calls"][0]
    b.mark_loop()
    b.step(dict(last))  # reads the same record again and again
    b.recovery = f"I have checked everything there is to check. Final answer {expected}."
    return None, b.calls_before_loop() + 1
