"""How ``items.item_json`` is kept: zstd-compressed against a dictionary trained on the store's own items.

An item's JSON is small (a few hundred bytes) and most of it is repeated between items: the field names,
the turn ids, timestamps, the cwd. Compressed one by one without a dictionary it barely shrinks (about
1.4x); against a dictionary trained on the first few thousand items of the home it shrinks 5-7x, and each
item still decompresses on its own (a search hit reads one row). The dictionary is trained once, when a
store's first build has seen enough items, and kept in ``meta`` (``item_json_dict``) for the store's life;
items written before it exist stay plain JSON text. So ``item_json`` is either TEXT (plain JSON) or a
BLOB (a zstd frame made with that dictionary): :func:`decoder` reads both.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from typing import Any

#: Items seen before the dictionary is trained (and the most bytes of them kept for it).
TRAIN_ITEMS = 3000
TRAIN_BYTES = 8 << 20
DICT_BYTES = 64 << 10
LEVEL = 3


def _load(con: sqlite3.Connection) -> bytes | None:
    try:
        row = con.execute("SELECT value FROM meta WHERE key='item_json_dict'").fetchone()
    except sqlite3.DatabaseError:
        return None
    return bytes(row[0]) if row is not None and isinstance(row[0], bytes) else None


class Packer:
    """Compresses ``item_json`` for the writer, training the dictionary when it has seen enough."""

    def __init__(self, con: sqlite3.Connection) -> None:
        self.con = con
        self._samples: list[Any] = []
        self._size = 0
        self._c: Any = None
        data = _load(con)
        if data is not None:
            self._use(data)

    def _use(self, data: bytes) -> None:
        import zstandard

        d = zstandard.ZstdCompressionDict(data)
        self._c = zstandard.ZstdCompressor(level=LEVEL, dict_data=d, write_checksum=False, write_dict_id=False)

    def pack_rows(self, items: list[tuple[Any, ...]], at: int) -> list[tuple[Any, ...]]:
        """``items`` with the JSON at index ``at`` compressed (once a dictionary exists)."""
        if self._c is None:
            for r in items:
                if self._size < TRAIN_BYTES:
                    b = r[at].encode("utf-8")
                    self._samples.append(b)
                    self._size += len(b)
            if len(self._samples) >= TRAIN_ITEMS:
                self._train()
            if self._c is None:
                return items
        c = self._c
        return [(*r[:at], c.compress(r[at].encode("utf-8")), *r[at + 1:]) for r in items]

    def _train(self) -> None:
        import zstandard

        try:
            d = zstandard.train_dictionary(DICT_BYTES, self._samples, level=LEVEL)
        except zstandard.ZstdError:
            return  # too little to learn from yet: keep the items plain, try again with more
        data = d.as_bytes()
        self.con.execute("INSERT INTO meta(key, value) VALUES ('item_json_dict', ?) "
                         "ON CONFLICT(key) DO UPDATE SET value=excluded.value", (data,))
        self._samples = []
        self._use(data)


def decoder(con: sqlite3.Connection) -> Callable[[str | bytes], str]:
    """``item_json`` as JSON text, whichever way it is stored (see the module docstring)."""
    data = _load(con)
    if data is None:
        return lambda v: v if isinstance(v, str) else bytes(v).decode("utf-8")
    import zstandard

    d = zstandard.ZstdDecompressor(dict_data=zstandard.ZstdCompressionDict(data))

    def decode(v: str | bytes) -> str:
        return v if isinstance(v, str) else d.decompress(v).decode("utf-8")

    return decode
