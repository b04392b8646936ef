"""Columnar storage of runs: Parquet files (pyarrow). The check/calibrate summaries computed on them by DuckDB are
in :mod:`pyguard.store.summaries`, a layer above (it reads check's and calibrate's rules; nothing here imports it).

    from pyguard.store import write_parquet, read_parquet
    from pyguard.store.summaries import check_parquet, calibrate_parquet

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

__all__ = [
    "FORMAT_TAG",
    "is_parquet",
    "iter_parquet",
    "read_parquet",
    "run_schema",
    "runs_to_table",
    "table_to_runs",
    "write_parquet",
]
