"""The README's "Guard your own agent" runs as written: its Python blocks, in order, in this project's folder (the
folder pytest runs in), against this project's agent."""

from __future__ import annotations

import os
import re
from pathlib import Path

README = Path(__file__).resolve().parents[3] / "README.md"


def section_blocks(title: str) -> list[str]:
    text = README.read_text(encoding="utf-8")
    start = text.index(f"\n## {title}\n")
    ends = [i for i in (text.find("\n## ", start + 1), text.find("\n### ", start + 1)) if i >= 0]
    section = text[start : min(ends) if ends else None]  # up to the next heading, subsections excluded
    return re.findall(r"^```python\n(.*?)^```", section, flags=re.S | re.M)


def test_guard_your_own_agent_runs_as_written(pyguard_jvm, tmp_path, monkeypatch):
    blocks = section_blocks("Guard your own agent")
    assert len(blocks) >= 2
    here = Path(__file__).resolve().parents[1]
    monkeypatch.chdir(here)  # the README's paths are the project's
    namespace: dict = {}
    for block in blocks:
        exec(compile(block.replace('trace_dir="traces"', f'trace_dir="{tmp_path}"'), "README.md", "exec"), namespace)
    result = namespace["result"]
    assert result.outcome.value == "stalled" and result.answer_source == "wrap_up"
    assert "12345" in namespace["answer"]  # the wrap-up answers from what the run found (the last status)
    assert os.path.isfile(result.trace_path)
