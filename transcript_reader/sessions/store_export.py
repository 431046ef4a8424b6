"""The store's ``sessions`` and ``items`` tables as Parquet files, so DuckDB, Dask or Spark can query the
transcripts of many machines at once (``pyarrow``: the optional extra ``rows``).

Written in batches (``BATCH`` rows at a time), so memory stays bounded whatever the store's size. The
files hold exactly the store's columns; ``items.item_json`` is the item's JSON text (decompressed). Each file is written
to a temporary name and renamed, so a reader never finds half a file.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from transcript_reader.errors import TranscriptError

BATCH = 20_000

#: SQLite column type -> Arrow type name (a column without a declared type is text).
_ARROW = {"INTEGER": "int64", "REAL": "float64", "TEXT": "string", "": "string"}


class ExportUnavailable(TranscriptError):
    """Parquet export needs ``pyarrow`` (``pip install 'transcript-reader[rows]'``), or a store."""

    code = "export_unavailable"


def _schema(con: sqlite3.Connection, table: str) -> Any:
    import pyarrow as pa

    cols = [(r[1], (r[2] or "").upper()) for r in con.execute(f"PRAGMA table_info({table})")]
    return pa.schema([(name, getattr(pa, _ARROW.get(kind, "string"))()) for name, kind in cols])


def _batches(con: sqlite3.Connection, table: str, schema: Any) -> Iterator[Any]:
    import pyarrow as pa

    from transcript_reader.sessions.store_pack import decoder

    decode = decoder(con)
    at = schema.names.index("item_json") if "item_json" in schema.names else None
    cur = con.execute(f"SELECT {', '.join(schema.names)} FROM {table} ORDER BY id")
    while True:
        rows = cur.fetchmany(BATCH)
        if not rows:
            return
        columns = list(zip(*rows, strict=True))
        if at is not None:  # the item's JSON text, whether the store keeps it compressed or not
            columns[at] = tuple(decode(v) for v in columns[at])
        yield pa.record_batch([pa.array(list(c), type=f.type) for c, f in zip(columns, schema, strict=True)],
                              schema=schema)


def export_parquet(con: sqlite3.Connection, out_dir: str | os.PathLike[str],
                   tables: tuple[str, ...] = ("sessions", "items")) -> dict[str, tuple[Path, int]]:
    """Write ``<out_dir>/<table>.parquet`` for each table; returns table -> (file, rows). ``con`` is a
    store connection (``Store.reader()``): the export reads one consistent snapshot of it."""
    try:
        import pyarrow.parquet as pq
    except ImportError:
        raise ExportUnavailable("Parquet export needs pyarrow: pip install 'transcript-reader[rows]'") from None
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    done: dict[str, tuple[Path, int]] = {}
    con.execute("BEGIN")  # one snapshot for every table (WAL: the writer goes on meanwhile)
    try:
        for table in tables:
            schema = _schema(con, table)
            final = out / f"{table}.parquet"
            tmp = out / f".{table}.parquet.tmp-{os.getpid()}"
            n = 0
            try:
                with pq.ParquetWriter(tmp, schema, compression="zstd") as writer:
                    for batch in _batches(con, table, schema):
                        writer.write_batch(batch)
                        n += batch.num_rows
                os.replace(tmp, final)
            except BaseException:
                with contextlib.suppress(OSError):
                    tmp.unlink()
                raise
            done[table] = (final, n)
    finally:
        con.execute("ROLLBACK")
    return done
