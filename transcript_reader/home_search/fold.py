"""Which items an FTS5 ``trigram`` index may skip for a query, when search matches as Python does.

Search matches a query as a case-insensitive substring in the sense of Python's ``re.IGNORECASE``. The
store's full-text index folds case its own way (SQLite's Unicode case folding), and the two differ on a
few characters: Python equates ``i`` with the dotless ``ı`` and the dotted ``İ``, SQLite folds neither to
``i``; many letters outside ASCII (Cherokee, Georgian, Osage, …) fold one way in Python and another (or
not at all) in SQLite. The index may only ever be asked for a *superset* of the items that match, so a
query is turned into *pieces*:

- a character whose Python partners all fold, in SQLite, as it does is kept as itself: every ASCII
  character but ``i``/``I``, and every character that has no case at all;
- ``i`` and ``I`` become three alternatives, ``i``, ``ı``, ``İ`` (one for each way SQLite folds the
  four characters Python equates), so the piece ``finish`` is asked as ``"finish" OR "fınish" OR …``;
- any other character (a letter with case outside ASCII, NUL) cuts the query: the text on either side
  must still be there, the character itself is left to the exact check.

A piece shorter than three characters holds no trigram and is dropped; a query left with no piece
cannot use the index, and its items are scanned. The index's answer is only a candidate list: every
candidate's stored text is then matched with the query's own Python pattern, so a piece never adds a
hit, it can only fail to remove one. ``tests/test_search_fold.py`` checks the rules above against this
SQLite and this Python, over every character that has case.
"""

from __future__ import annotations

import sqlite3
from functools import cache

#: The alternatives of ``i``/``I``: one per SQLite fold class among Python's partners of ``i``.
I_VARIANTS = ("i", "\u0131", "\u0130")
#: At most this many alternatives per piece (``i`` thrice in a row: 27); past it the piece is cut.
MAX_ALTERNATIVES = 9
#: Pieces shorter than this hold no trigram.
MIN_PIECE = 3


@cache
def _sqlite_folds_like_python() -> bool:
    """Whether this SQLite's trigram tokenizer folds the Kelvin sign ``K`` to ``k`` and the long ``ſ``
    to ``s``, as Python's matching equates them (SQLite 3.40 does; the rules above rely on it). When it
    does not, ``k`` and ``s`` get their partner as an alternative, as ``i`` does."""
    try:
        con = sqlite3.connect(":memory:")
        try:
            con.execute("CREATE VIRTUAL TABLE t USING fts5(x, tokenize='trigram')")
            con.execute("INSERT INTO t(rowid, x) VALUES (1, ?), (2, ?)", ("\u212a\u212a\u212a", "\u017f\u017f\u017f"))
            got = {r[0] for r in con.execute("SELECT rowid FROM t WHERE t MATCH '\"kkk\" OR \"sss\"'")}
        finally:
            con.close()
    except sqlite3.Error:
        return False
    return got == {1, 2}


def variants(ch: str) -> tuple[str, ...] | None:
    """The alternatives that stand for ``ch`` in a piece (None: ``ch`` cuts the query)."""
    if ch in "iI":
        return I_VARIANTS
    if ch.isascii():
        if ch == "\0":
            return None
        if ch in "kKsS" and not _sqlite_folds_like_python():
            return (ch, "\u212a") if ch in "kK" else (ch, "\u017f")
        return (ch,)
    if ch.lower() == ch and ch.upper() == ch and ch.casefold() == ch:
        return (ch,)  # no case: Python equates it with nothing else
    return None


def pieces(query: str) -> list[tuple[str, ...]]:
    """The pieces of ``query``: each a tuple of alternatives (of equal length, at least
    :data:`MIN_PIECE`), one of which every matching text holds (by SQLite's folding)."""
    out: list[tuple[str, ...]] = []
    cur: list[str] = [""]

    def flush() -> None:
        if len(cur[0]) >= MIN_PIECE:
            out.append(tuple(dict.fromkeys(cur)))

    for ch in query:
        vs = variants(ch)
        if vs is None:
            flush()
            cur = [""]
            continue
        if len(cur) * len(vs) > MAX_ALTERNATIVES:
            flush()
            cur = [""]
        cur = [c + v for c in cur for v in vs]
    flush()
    return out


def exact(query: str) -> bool:
    """Whether the index's answer for ``query`` is exactly the set of items that match it, so that
    counting the candidates counts the matches: an ASCII query (no NUL) that is one piece, whose every
    alternative SQLite folds only with characters Python equates with the query's
    (``tests/test_search_fold.py`` checks that for every ASCII character); a trigram phrase is a
    substring."""
    if not query.isascii() or "\0" in query or len(query) < MIN_PIECE or not _sqlite_folds_like_python():
        return False
    ps = pieces(query)
    return len(ps) == 1 and len(ps[0][0]) == len(query)


def match_expression(query: str) -> str | None:
    """The FTS5 ``MATCH`` text that selects every item holding ``query`` (and others), or None when the
    query has no piece: every alternative a double-quoted phrase (quotes doubled, so user text is never
    FTS5 syntax), alternatives OR-ed, pieces AND-ed."""
    ps = pieces(query)
    if not ps:
        return None
    return " AND ".join("(" + " OR ".join('"' + a.replace('"', '""') + '"' for a in p) + ")" for p in ps)
