"""Columnar storage of runs: Parquet files (pyarrow), and the DuckDB view of one (:mod:`pyguard.store.sql`). The
summaries computed on it live with their rules: :mod:`pyguard.check.parquet`, :mod:`pyguard.calibrate.parquet`.

    from pyguard.store import write_parquet, read_parquet
    from pyguard.check.parquet import check_parquet
    from pyguard.calibrate.parquet import calibrate_parquet

Needs the ``columnar`` extra (``pip install 'pyguard[columnar]'``); importing this package does not import
pyarrow or duckdb, each function does when called.
"""

from pyguard.store.parquet import iter_parquet, read_parquet, run_schema, write_parquet

__all__ = ["iter_parquet", "read_parquet", "run_schema", "write_parquet"]
