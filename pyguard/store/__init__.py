"""Columnar storage of runs: Parquet files (pyarrow) and the check/calibrate summaries computed on them by DuckDB.

    from pyguard.store import write_parquet, read_parquet, check_parquet, calibrate_parquet

Needs the ``columnar`` extra (``pip install 'pyguard[columnar]'``); importing this package does not import
pyarrow or duckdb, each function does when called.
"""

from pyguard.store.parquet import iter_parquet, read_parquet, run_schema, write_parquet
from pyguard.store.summaries import calibrate_parquet, calibration_arrays, check_parquet, check_summary

__all__ = [
    "calibrate_parquet",
    "calibration_arrays",
    "check_parquet",
    "check_summary",
    "iter_parquet",
    "read_parquet",
    "run_schema",
    "write_parquet",
]
