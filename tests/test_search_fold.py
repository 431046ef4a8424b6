"""The store's full-text index is asked only for a superset of what Python's case-insensitive match
finds (``transcript_reader.home_search.fold``): checked here against this SQLite's trigram tokenizer and
this Python's ``re``, for every character that has case (the others Python equates with nothing)."""

from __future__ import annotations

import re
import sqlite3
import sys

import pytest

from transcript_reader.home_search import fold


def _cased() -> list[str]:
    """Every character Python's case-insensitive matching may equate with another: those with a case
    mapping, and the characters they map to (everything else matches only itself)."""
    out = set()
    for c in range(sys.maxunicode + 1):
        if 0xD800 <= c < 0xE000:
            continue
        ch = chr(c)
        if ch.lower() != ch or ch.upper() != ch or ch.casefold() != ch:
            out.add(ch)
            out.update(x for x in (ch.lower(), ch.upper(), ch.casefold()) if len(x) == 1)
    return sorted(out)


@pytest.fixture(scope="module")
def folding() -> tuple[list[str], dict[str, str]]:
    """The cased characters, and how this SQLite's trigram tokenizer folds each (read back through
    ``fts5vocab``: a row of the character thrice is one trigram, the folded one)."""
    cased = _cased()
    con = sqlite3.connect(":memory:")
    con.execute("CREATE VIRTUAL TABLE t USING fts5(x, tokenize='trigram')")
    con.execute("CREATE VIRTUAL TABLE v USING fts5vocab(t, 'instance')")
    con.executemany("INSERT INTO t(rowid, x) VALUES (?, ?)", [(ord(c), c * 3) for c in cased])
    folded = {chr(doc): term[0] for term, doc in con.execute("SELECT term, doc FROM v")}
    assert len(folded) == len(cased)
    return cased, folded


def _partners(ch: str, alphabet: str) -> set[str]:
    return {m.group() for m in re.finditer(re.escape(ch), alphabet, re.IGNORECASE)}


def test_every_character_the_index_is_asked_for_covers_what_python_equates(folding) -> None:  # type: ignore[no-untyped-def]
    """For each cased character the rules keep (as itself or by alternatives), every character Python
    equates with it folds in SQLite as one of its alternatives does: the index never drops a match."""
    cased, folded = folding
    alphabet = "".join(cased)
    kept = 0
    for ch in cased:
        vs = fold.variants(ch)
        if vs is None:
            continue
        kept += 1
        allowed = {folded.get(v, v) for v in vs}
        missing = {p for p in _partners(ch, alphabet) if folded[p] not in allowed}
        assert not missing, f"{ch!r} (U+{ord(ch):04X}): Python equates {sorted(missing)}, which SQLite folds apart"
    assert kept >= 52  # every ASCII letter at least


def test_a_character_without_case_matches_only_itself() -> None:
    """A character the rules keep as itself because it has no case is in no Python case class."""
    cased = set(_cased())
    assert not [c for c in cased if fold.variants(c) == (c,) and not c.isascii()
                and c.lower() == c == c.upper() == c.casefold()]
    for ch in ("→", "漢", "😀", "-", "_", "\"", " "):
        assert fold.variants(ch) == (ch,)
        assert ch not in cased


def test_dotless_and_dotted_i_are_alternatives_and_other_odd_letters_cut() -> None:
    assert fold.pieces("finish") == [tuple(f"f{a}n{b}sh" for a in fold.I_VARIANTS for b in fold.I_VARIANTS)]
    assert fold.pieces("Straße") == [("Stra",)]  # ß has case (ẞ): cut; "e" alone holds no trigram
    assert fold.pieces("ab") == []
    assert fold.pieces("x\0yz") == []
    assert fold.match_expression('say "hi" now') is not None
    assert '""hi""' not in (fold.match_expression('say "hey" now') or "")
    assert '""hey""' in (fold.match_expression('say "hey" now') or "")


def test_a_piece_with_too_many_alternatives_is_cut() -> None:
    ps = fold.pieces("initialization")
    assert all(len(p) <= fold.MAX_ALTERNATIVES for p in ps)
    assert [p[0] for p in ps] == ["init", "ializat", "ion"]
    assert fold.pieces("iiiiii") == []  # no piece of three characters within the bound: scanned


def test_the_match_expression_finds_every_python_match(folding) -> None:  # type: ignore[no-untyped-def]
    """End to end through a real trigram table: texts made of a query's Python partners are found."""
    cased, _ = folding
    alphabet = "".join(cased)
    con = sqlite3.connect(":memory:")
    con.execute("CREATE TABLE items(id INTEGER PRIMARY KEY, text TEXT)")
    con.execute("CREATE VIRTUAL TABLE f USING fts5(text, content='items', content_rowid='id', tokenize='trigram')")
    queries = ["finish", "Kelvin", "session", "ÉCOLE", "ǅungla", "İstanbul", "a\"b\"c", "σίσυφος", "ᏣᎳᎩ text"]
    rid = 0
    for q in queries:
        pattern = re.compile(re.escape(q), re.IGNORECASE)
        texts = ["".join(sorted(_partners(c, alphabet) or {c})[-1] for c in q),
                 "".join(sorted(_partners(c, alphabet) or {c})[0] for c in q)]
        for t in texts:
            assert pattern.search(t), (q, t)
            rid += 1
            con.execute("INSERT INTO items VALUES (?, ?)", (rid, "x " + t + " y"))
            con.execute("INSERT INTO f(rowid, text) VALUES (?, ?)", (rid, "x " + t + " y"))
            expr = fold.match_expression(q)
            if expr is None:
                continue
            got = {r[0] for r in con.execute("SELECT rowid FROM f WHERE f MATCH ?", (expr,))}
            assert rid in got, (q, t, expr)


def test_an_exact_query_selects_only_what_python_matches(folding) -> None:  # type: ignore[no-untyped-def]
    """For an ASCII query the index's answer is exact (its count is the count of matches): every
    character SQLite folds as an ASCII character or one of its alternatives does is one Python equates
    with it. Checked over every cased character and every other character of the BMP."""
    cased, folded = folding
    con = sqlite3.connect(":memory:")
    con.execute("CREATE VIRTUAL TABLE t USING fts5(x, tokenize='trigram')")
    con.execute("CREATE VIRTUAL TABLE v USING fts5vocab(t, 'instance')")
    rest = [chr(c) for c in range(0x80, 0x10000) if not 0xD800 <= c < 0xE000 and chr(c) not in folded]
    con.executemany("INSERT INTO t(rowid, x) VALUES (?, ?)", [(ord(c), c * 3) for c in rest])
    every = dict(folded)
    every.update({chr(doc): term[0] for term, doc in con.execute("SELECT term, doc FROM v")})
    alphabet = "".join(every)
    for code in range(1, 0x80):
        ch = chr(code)
        vs = fold.variants(ch)
        assert vs is not None
        targets = {every.get(v, v.lower()) for v in vs}
        same = {t for t, f in every.items() if f in targets}
        assert same <= _partners(ch, alphabet) | {ch}, (ch, sorted(same - _partners(ch, alphabet)))
    assert fold.exact("file") and fold.exact("exec_command") and fold.exact('a "b" c')
    assert not fold.exact("ab") and not fold.exact("straße") and not fold.exact("initialization")
