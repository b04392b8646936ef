"""A file whose format cannot be told says how to name it where the user is: ``--format`` on the command line,
``format=`` in Python (before, the command line was told to ``pass format=``, a keyword it has no way to pass)."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from pyguard.base.errors import PyguardError
from pyguard.cli import main
from pyguard.loading import load_runs


def _not_a_recording(tmp_path: Path) -> Path:
    path = tmp_path / "tasks.toml"
    path.write_text('[[tasks]]\nid = "a"\n', encoding="utf-8")
    return path


def test_the_command_line_is_told_to_pass_format(tmp_path):
    out = CliRunner().invoke(main, ["replay", str(_not_a_recording(tmp_path))])
    assert out.exit_code == 2
    text = " ".join(out.output.split())
    assert "cannot tell the format" in text and "--format" in text and "'pyguard'" in text, text


def test_python_is_told_the_keyword(tmp_path):
    with pytest.raises(PyguardError, match=r"format= in load_runs"):
        load_runs(_not_a_recording(tmp_path), strict=True)
