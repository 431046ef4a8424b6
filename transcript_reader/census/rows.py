"""``--rows``: one row per exec script, for DuckDB or pandas. Parquet through pyarrow, CSV through the
standard library. Rows arrive batch by batch from the workers and are written as they come, so the
coordinator never holds the whole table."""

from __future__ import annotations

import csv
from collections.abc import Sequence
from dataclasses import astuple, dataclass, fields
from pathlib import Path
from typing import IO, Any


@dataclass(frozen=True, slots=True)
class ScriptRow:
    file: str
    line: int
    call_id: str
    codex_version: str
    bytes: int
    parser: str
    calls: int
    tools: str  # distinct tool names in first-call order, comma-separated
    computed: int  # calls whose argument is not a literal
    entries: int
    executed_yes: int
    executed_no: int
    executed_unknown: int
    parse_us: float


ROW_FIELDS = tuple(f.name for f in fields(ScriptRow))
_ARROW_TYPES = {
    "line": "int64", "bytes": "int64", "calls": "int32", "computed": "int32", "entries": "int32",
    "executed_yes": "int32", "executed_no": "int32", "executed_unknown": "int32", "parse_us": "float64",
}


class RowsWriter:
    """Write ``ScriptRow`` batches to ``.parquet`` or ``.csv`` (chosen by the file's suffix)."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.kind = self.path.suffix.lower().lstrip(".")
        if self.kind not in ("parquet", "csv"):
            raise ValueError(f"--rows wants a .parquet or .csv file, not {self.path.name!r}")
        self.rows = 0
        self._csv_file: IO[str] | None = None
        self._csv: Any = None
        self._pq: Any = None
        self._schema: Any = None
        if self.kind == "csv":
            self._csv_file = self.path.open("w", newline="", encoding="utf-8")
            self._csv = csv.writer(self._csv_file)
            self._csv.writerow(ROW_FIELDS)
        else:
            import pyarrow as pa
            import pyarrow.parquet as pq

            self._schema = pa.schema([(n, getattr(pa, _ARROW_TYPES.get(n, "string"))()) for n in ROW_FIELDS])
            self._pq = pq.ParquetWriter(str(self.path), self._schema)

    def write(self, rows: Sequence[ScriptRow]) -> None:
        if not rows:
            return
        self.rows += len(rows)
        if self._csv is not None:
            self._csv.writerows(astuple(r) for r in rows)
            assert self._csv_file is not None
            self._csv_file.flush()  # a finished batch is on disk (tail -f, or a census cut short)
            return
        import pyarrow as pa

        columns = {n: [getattr(r, n) for r in rows] for n in ROW_FIELDS}
        self._pq.write_table(pa.table(columns, schema=self._schema))

    def close(self) -> None:
        if self._csv_file is not None:
            self._csv_file.close()
        if self._pq is not None:
            self._pq.close()

    def __enter__(self) -> RowsWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
