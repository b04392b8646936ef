"""Columnar storage of runs: Parquet files (pyarrow) and the check/calibrate summaries computed on them by DuckDB.

    from pyguard.store import write_parquet, read_parquet, check_parquet, calibrate_parquet

Needs the ``columnar`` extra (``pip install 'pyguard[columnar]'``); importing this package does not import
pyarrow or duckdb, each function does when called.
"""

from pyguard.store.parquet import (
    FORMAT_TAG,
    is_parquet,
    iter_parquet,
    read_parquet,
    run_schema,
    runs_to_table,
    table_to_runs,
    write_parquet,
)
from pyguard.store.summaries import calibrate_parquet, calibration_arrays, check_parquet, check_summary, connect

__all__ = [
    "FORMAT_TAG",
    "calibrate_parquet",
    "calibration_arrays",
    "check_parquet",
    "check_summary",
    "connect",
    "is_parquet",
    "iter_parquet",
    "read_parquet",
    "run_schema",
    "runs_to_table",
    "table_to_runs",
    "write_parquet",
]
