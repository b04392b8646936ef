"""pyguard without its extras: importing the new modules loads no heavy library, and a missing extra is a clear
message naming it."""

from __future__ import annotations

import subprocess
import sys

import pytest

from pyguard.base._extras import EXTRAS, require
from pyguard.base.errors import ConfigError, MissingExtraError


def test_importing_pyguard_loads_no_extra():
    code = (
        "import sys, pyguard, pyguard.otel, pyguard.store, pyguard.parallel, pyguard.trace, pyguard.cli.replay, "
        "pyguard.cli.check, pyguard.cli.calibrate, pyguard.live.guard; "
        "print(sorted(m for m in ('pyarrow', 'duckdb', 'ray', 'opentelemetry') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_missing_extra_is_a_config_error_and_an_import_error(monkeypatch):
    monkeypatch.setitem(sys.modules, "duckdb", None)
    with pytest.raises(MissingExtraError) as info:
        require("duckdb", extra="columnar", feature="Parquet summaries")
    assert isinstance(info.value, ConfigError) and isinstance(info.value, ImportError)
    assert str(info.value) == (
        "Parquet summaries needs the optional extra 'columnar' (pyarrow, duckdb), which is not "
        "installed (no module 'duckdb'): pip install 'pyguard[columnar]'"
    )
    assert set(EXTRAS) == {"plot", "stats", "otel", "columnar", "ray"}


def test_an_import_error_inside_an_installed_library_is_not_hidden(monkeypatch, tmp_path):
    (tmp_path / "brokenlib").mkdir()
    (tmp_path / "brokenlib" / "__init__.py").write_text("import missing_dependency_of_brokenlib\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(ModuleNotFoundError, match="missing_dependency_of_brokenlib"):
        require("brokenlib", extra="columnar", feature="y")  # installed but broken: its own error, not "install"
    with pytest.raises(MissingExtraError, match="no module 'not_installed_lib'"):
        require("not_installed_lib", extra="columnar", feature="y")
