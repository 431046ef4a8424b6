"""Cross-session search (``transcript_reader.home_search``): the byte pre-filter never skips a file the full
reader finds a hit in (a hypothesis property over generated rollouts full of escapes, shell quoting, JS
escapes and joined parts, and an audit of every fixture and corpus file), it still skips files without
the query, and the hits are exactly ``api.search``'s."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from transcript_reader import api
from transcript_reader.errors import TranscriptError
from transcript_reader.home_search import SearchStats
from transcript_reader.home_search.files import search_sessions
from transcript_reader.home_search.scan import CHUNK, may_hold, query_needle
from transcript_reader.model import Kind
from transcript_reader.projections import _TIMELINE, search_text

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared" / "corpus"
EXAMPLES = int(os.environ.get("SEARCH_PROPERTY_EXAMPLES", "60"))
ALL_KINDS = frozenset(Kind)


def _may(path: Path, query: str, kinds: frozenset[Kind] = _TIMELINE) -> bool:
    needle = query_needle(query, kinds)
    return needle is None or may_hold(path, needle)


# ---------------------------------------------------------------- generated rollouts

_ALPHABET = "aAbBkKsSiIxXtTeE019_ -'\"\\$`{}/.:\n\té\u212a\u017f\u0130\u0131"
_text = st.text(alphabet=_ALPHABET, min_size=1, max_size=24)
_word = st.text(alphabet="abkstexABKSTEX019", min_size=1, max_size=8)


@st.composite
def _js_literal(draw: st.DrawFn) -> str:
    """A JavaScript string literal whose value is a drawn text, written with random escapes."""
    value = draw(st.text(alphabet="abkstxABKSTX019 -./'", min_size=1, max_size=16))
    out = []
    for ch in value:
        how = draw(st.sampled_from(["raw", "raw", "x", "u", "identity", "cont"]))
        if ch == "'" or how == "x":
            out.append(f"\\x{ord(ch):02x}")
        elif how == "u":
            out.append(f"\\u{ord(ch):04x}")
        elif how == "identity" and ch.isalpha() and ch.lower() not in "bfnrtvux":
            out.append("\\" + ch)
        elif how == "cont":
            out.append("\\\n" + ch)
        else:
            out.append(ch)
    return "'" + "".join(out) + "'"


@st.composite
def _shell_line(draw: st.DrawFn) -> str:
    """``bash -lc`` and a script whose words are quoted in random ways (``py'test'``, ``"a"b``, ``a\\b``)."""
    words = draw(st.lists(_word, min_size=1, max_size=4))
    parts = []
    for w in words:
        how = draw(st.sampled_from(["plain", "single", "double", "split", "backslash"]))
        if how == "single":
            parts.append(f"'{w}'")
        elif how == "double":
            parts.append(f'"{w}"')
        elif how == "split" and len(w) > 1:
            parts.append(f"{w[:1]}'{w[1:]}'")
        elif how == "backslash" and len(w) > 1:
            parts.append(f"{w[:1]}\\{w[1:]}")
        else:
            parts.append(w)
    script = " ".join(parts)
    return draw(st.sampled_from([f"bash -lc {json.dumps(script)}", f"bash -lc '{script}'" if "'" not in script
                                 else f"bash -lc {json.dumps(script)}", script]))


def _ts(i: int) -> str:
    return f"2026-01-01T00:{i // 60:02d}:{i % 60:02d}.000Z"


@st.composite
def rollouts(draw: st.DrawFn) -> list[dict[str, object] | str]:
    lines: list[dict[str, object] | str] = [
        {"type": "session_meta", "payload": {"id": "00000000-0000-7000-8000-0000000000aa", "cwd": draw(st.sampled_from(
            ["/w", "file:///w%41b", "/home/u/pr"])), "originator": "codex_exec", "cli_version": "0.171.0",
            "source": "exec", "timestamp": _ts(0)}},
        {"type": "event_msg", "payload": {"type": "task_started", "turn_id": "t1"}},
    ]
    n = draw(st.integers(1, 6))
    for i in range(n):
        kind = draw(st.sampled_from(["user", "assistant", "exec_command", "cell", "shell_end", "patch", "mcp",
                                     "broken", "output_parts"]))
        cid = f"call_{i}"
        if kind == "user":
            parts = draw(st.lists(_text, min_size=1, max_size=2))
            lines.append({"type": "response_item", "payload": {"type": "message", "role": "user", "content": [
                {"type": "input_text", "text": t} for t in parts]}})
        elif kind == "assistant":
            lines.append({"type": "response_item", "payload": {"type": "message", "role": "assistant", "content": [
                {"type": "output_text", "text": draw(_text)}]}})
        elif kind == "exec_command":
            args = json.dumps({"cmd": draw(_shell_line()), "workdir": "/w"}, ensure_ascii=draw(st.booleans()))
            lines.append({"type": "response_item", "payload": {"type": "function_call", "name": "exec_command",
                                                              "arguments": args, "call_id": cid}})
            lines.append({"type": "response_item", "payload": {"type": "function_call_output", "call_id": cid,
                                                              "output": "Exit code: 0\nWall time: 0.1 seconds\n"
                                                                        "Output:\n" + draw(_text)}})
        elif kind == "cell":
            lit = draw(_js_literal())
            glue = draw(st.sampled_from(["/", ""]))  # ``${d}word``: a piece made across the substitution
            tmpl = draw(st.sampled_from(["", "const d = '" + draw(_word) + "';\nawait tools.apply_patch(`*** Begin Patch"
                                             "\\n*** Add File: ${d}" + glue + draw(_word) + ".txt\\n+x\\n*** End Patch"
                                             "\\n`);\n"]))
            script = f"await tools.exec_command({{cmd: {lit}}});\n{tmpl}"
            lines.append({"type": "response_item", "payload": {"type": "custom_tool_call", "call_id": cid,
                                                              "name": "exec", "input": script, "status": "completed"}})
            lines.append({"type": "response_item", "payload": {"type": "custom_tool_call_output", "call_id": cid,
                                                              "output": [{"type": "input_text", "text": t} for t in
                                                                         draw(st.lists(_text, min_size=1, max_size=3))]}})
        elif kind == "shell_end":
            lines.append({"type": "event_msg", "payload": {
                "type": "exec_command_end", "call_id": cid, "command": ["bash", "-lc", draw(_shell_line())],
                "stdout": draw(_text), "stderr": draw(_text), "exit_code": 0}})
        elif kind == "patch":
            path = draw(_word) + "/" + draw(_word) + ".py"
            lines.append({"type": "response_item", "payload": {
                "type": "custom_tool_call", "call_id": cid, "name": "apply_patch",
                "input": f"*** Begin Patch\n*** Update File: {path}\n@@\n-a\n+{draw(_word)}\n*** End Patch\n"}})
            lines.append({"type": "event_msg", "payload": {"type": "patch_apply_end", "call_id": cid,
                                                           "stdout": draw(_text), "stderr": draw(_text), "success": True}})
        elif kind == "mcp":
            lines.append({"type": "response_item", "payload": {"type": "function_call", "name": "mcp__" + draw(_word)
                                                              + "__" + draw(_word), "arguments": "{}", "call_id": cid}})
            lines.append({"type": "response_item", "payload": {"type": "function_call_output", "call_id": cid,
                                                              "output": draw(st.lists(_text, min_size=1, max_size=3))}})
        elif kind == "output_parts":
            lines.append({"type": "event_msg", "payload": {"type": "warning", "message": draw(_text)}})
        else:
            lines.append(draw(st.sampled_from(['{"type": "response_item", "payload": ', "not json " + draw(_word),
                                               '{"payload": {}}', "[1, 2]"])))
    lines.append({"type": "event_msg", "payload": {"type": "task_complete", "turn_id": "t1"}})
    return lines


def _write(path: Path, lines: list[dict[str, object] | str], ascii_: bool, compact: bool) -> None:
    out = []
    for i, ln in enumerate(lines):
        if isinstance(ln, str):
            out.append(ln)
            continue
        obj = {"timestamp": _ts(i), **ln}
        out.append(json.dumps(obj, ensure_ascii=ascii_, separators=(",", ":") if compact else None))
    path.write_text("\n".join(out) + "\n", encoding="utf-8")


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                       HealthCheck.too_slow])
@given(lines=rollouts(), ascii_=st.booleans(), compact=st.booleans(), data=st.data())
def test_prefilter_never_skips_a_file_the_reader_finds_a_hit_in(tmp_path: Path, lines: list[dict[str, object] | str],
                                                                 ascii_: bool, compact: bool, data: st.DataObject) -> None:
    """For queries cut out of the items the full reader gives (any kind, any span, any case), and for
    queries drawn at random, a file with a hit always passes the pre-filter."""
    f = tmp_path / "s.jsonl"
    _write(f, lines, ascii_, compact)
    items = list(api.Transcript(f).items())
    texts = [(it.kind, search_text(it)) for it in items]
    texts = [(k, t) for k, t in texts if t]
    queries = [data.draw(st.text(alphabet=_ALPHABET, min_size=1, max_size=6), label="random query")]
    for _ in range(min(4, len(texts))):
        kind, text = data.draw(st.sampled_from(texts), label="item")
        i = data.draw(st.integers(0, len(text) - 1), label="start")
        j = data.draw(st.integers(i + 1, min(len(text), i + 30)), label="end")
        q = text[i:j]
        if data.draw(st.booleans(), label="swap case"):
            q = q.swapcase()
        queries.append(q)
    for q in queries:
        for kinds in (_TIMELINE, ALL_KINDS):
            found = api.search(f, q, kinds=[k.value for k in kinds], max_matches=1).total_matches
            if found:
                assert _may(f, q, kinds), (q, sorted(k.value for k in kinds), f.read_text(encoding="utf-8"))


# ---------------------------------------------------------------- every recorded file


def _recorded_files() -> list[Path]:
    out = [p for p in (ROOT / "fixtures").rglob("*") if p.is_file() and "golden" not in p.name
           and p.name.endswith((".jsonl", ".json", ".zst"))]
    if SHARED.is_dir():
        out += [p for p in SHARED.rglob("*") if p.is_file() and p.name.endswith((".jsonl", ".json"))]
    return sorted(out)


def test_every_word_of_every_recorded_item_passes_the_prefilter() -> None:
    """Every fixture (and ``../shared/corpus`` file, when present): each letter-and-digit run of each
    item's text, searched in that item's kind, never lets the pre-filter skip the file. This is what
    keeps :data:`READER_WORDS` and the other word lists in step with what the reader writes."""
    from transcript_reader.home_search.scan import derivable

    checked = 0
    misses = []
    for f in _recorded_files():
        try:
            items = list(api.Transcript(f).items())
        except TranscriptError:
            continue
        raw = f.read_bytes()
        if raw[:4] == b"\x28\xb5\x2f\xfd":
            import zstandard

            raw = zstandard.ZstdDecompressor().stream_reader(raw, read_across_frames=True).read()
        low = raw.lower()
        if derivable(raw, low):
            continue
        checked += 1
        for it in items:
            for w in set(re.split(r"[^a-z0-9]+", search_text(it).lower())):
                n = query_needle(w, {it.kind})
                if n is not None and not all(p in low for p in n.pieces):
                    misses.append((f.name, it.kind.value, it.line, w))
    assert checked > 30
    assert not misses, misses[:20]


def test_reader_words_cover_the_json_decoder_messages() -> None:
    """An unreadable line's reason quotes the decoder's message: its words are the reader's own."""
    import orjson

    from transcript_reader.home_search.scan import READER_WORDS

    bad = [b"{", b'{"a"', b'{"a":', b"[1,", b"tru", b"nul", b"1e999999", b'"\\x"', b'"\\ud800"', b'{"a" 1}',
           b"{1:2}", b"[1 2]", b'{"a":1 "b"}', b"\xff", b'"\x01"', b"[" * 2000, b"01", b"-", b'"abc', b'{"a":1}x',
           b"", b"  ", b'"\\u12"']
    for b in bad:
        with pytest.raises(orjson.JSONDecodeError) as e:
            orjson.loads(b)
        words = {w for w in re.split(r"[^a-z0-9]+", str(e.value).lower()) if w and not w.isdigit()}
        assert words <= READER_WORDS, (b, words - READER_WORDS)


# ---------------------------------------------------------------- the derivations, one by one


def _cell(script: str) -> dict[str, object]:
    return {"type": "response_item", "payload": {"type": "custom_tool_call", "call_id": "c1", "name": "exec",
                                                 "input": script, "status": "completed"}}


_HEAD: list[dict[str, object] | str] = [{"type": "session_meta", "payload": {"id": "x", "cwd": "/w"}}]


@pytest.mark.parametrize(("line", "query"), [
    (_cell("await tools.exec_command({cmd: 'echo \\x41BC'});"), "echo ABC"),  # JS hex escape
    (_cell("await tools.exec_command({cmd: 'py\\\ntest -q'});"), "pytest"),  # JS line continuation
    (_cell("await tools.exec_command({cmd: 'p\\ytest'});"), "pytest"),  # JS identity escape
    (_cell("const d = 'src';\nawait tools.apply_patch(`*** Begin Patch\\n*** Add File: ${d}/a.txt\\n+x\\n"
           "*** End Patch\\n`);"), "src/a.txt"),  # template-resolved patch path
    ({"type": "response_item", "payload": {"type": "function_call", "name": "exec_command", "call_id": "c",
                                           "arguments": json.dumps({"cmd": "bash -lc py'test'"})}}, "pytest"),
    ({"type": "response_item", "payload": {"type": "message", "role": "user", "content": [
        {"type": "input_text", "text": "echo \u0041BC"}]}}, "echo abc"),  # JSON unicode escape (ensure_ascii)
    ({"type": "response_item", "payload": {"type": "message", "role": "user", "content": [
        {"type": "input_text", "text": "\u212a"}]}}, "k"),  # Kelvin sign equals k case-insensitively
    ({"type": "response_item", "payload": {"type": "function_call_output", "call_id": "c", "output": [
        {"type": "input_text", "text": "hel"}, {"type": "input_text", "text": "lo"}]}}, "hello"),  # joined parts
    ({"type": "event_msg", "payload": {"type": "patch_apply_end", "call_id": "c", "stdout": "ab",
                                       "stderr": "cd", "success": True}}, "abcd"),  # stdout + stderr
])
def test_each_derivation_keeps_its_file(tmp_path: Path, line: dict[str, object], query: str) -> None:
    f = tmp_path / "s.jsonl"
    for ascii_ in (True, False):
        _write(f, [*_HEAD, line], ascii_, compact=True)
        assert _may(f, query, ALL_KINDS), (query, f.read_text(encoding="utf-8"))


def test_prefilter_skips_files_without_the_query(tmp_path: Path) -> None:
    f = tmp_path / "s.jsonl"
    f.write_text('{"type":"response_item","payload":{"type":"function_call","name":"shell","arguments":'
                 '"{\\"command\\":[\\"ls\\",\\"-la\\"]}"}}\n', encoding="utf-8")
    assert not _may(f, "calc.py && rm")
    assert _may(f, "LS -LA")
    assert query_needle("&& ..", _TIMELINE) is None  # no letter or digit: every file is read
    assert query_needle("pytest", {Kind.TEST_RUN}) is None  # a framework name the reader writes
    # a piece is found whatever chunk boundary it sits near (chunks end at line ends)
    f.write_bytes(b'{"a":"' + b" " * (CHUNK - 10) + b'"}\n{"b":"calcul.py rm"}\n')
    assert _may(f, "calcul.py rm")
    assert not _may(f, "calc.py && rmdir")


def test_search_sessions_gives_api_search_hits_for_every_fixture() -> None:
    """The streamed cross-session hits are, file by file, the matches ``api.search`` gives (the
    pre-filter removed only files without any)."""
    files = [str(p) for p in sorted((ROOT / "fixtures").rglob("*.jsonl")) if "exec_streams" not in str(p)]
    for query in ("calc", "pytest", "zz-not-there", "Script completed"):
        stats = SearchStats("scan")
        got = {r.path: [(m.item.line, m.item.kind, m.excerpt) for m in r.matches]
               for r in search_sessions(files, query, max_matches=5, stats=stats) if r.error is None}
        want = {}
        for f in files:
            try:
                res = api.search(f, query, max_matches=5, max_chars_per_match=300)
            except TranscriptError:
                continue
            if res.matches:
                want[f] = [(m.item.line, m.item.kind, m.excerpt) for m in res.matches]
        assert got == want, query
        assert stats.method == ("read" if query == "pytest" else "scan") and stats.sessions == len(files)
    stats = SearchStats("scan")
    list(search_sessions(files, "zz-not-there", stats=stats))
    assert stats.skipped > len(files) // 2  # most files are never decoded for a miss


def test_a_pool_of_workers_gives_the_sequential_results_in_order() -> None:
    """``workers=2`` (``search.pool``): the same sessions, matches, totals and errors, in the same
    order, and ``on_match`` called with the same matches in the same order, counting or capped."""
    files = [str(p) for p in sorted((ROOT / "fixtures").rglob("*.jsonl")) if "exec_streams" not in str(p)]

    def run(workers: int, query: str, count_all: bool) -> tuple[list[object], list[object], SearchStats]:
        seen: list[object] = []
        stats = SearchStats("scan")
        got = [(r.path, r.matches, r.total, r.truncated, str(r.error))
               for r in search_sessions(files, query, max_matches=2, count_all=count_all, stats=stats,
                                        workers=workers, on_match=lambda p, m: seen.append((p, m)))]
        return got, seen, stats

    for query, count_all in (("calc", True), ("a", False), ("zz-not-there", True)):
        one, seen_one, st_one = run(1, query, count_all)
        two, seen_two, st_two = run(2, query, count_all)
        assert two == one and seen_two == seen_one, query
        assert (st_two.sessions, st_two.read, st_two.skipped, st_two.hits, st_two.failed) == \
            (st_one.sessions, st_one.read, st_one.skipped, st_one.hits, st_one.failed)
    assert one == [] and len(run(2, "calc", True)[0]) > 2


def test_search_stops_a_session_at_the_cap_when_not_counting() -> None:
    f = str(ROOT / "fixtures" / "transcripts" / "code_mode_records.jsonl")
    full = next(search_sessions([f], "a", max_matches=1))
    capped = next(search_sessions([f], "a", max_matches=1, count_all=False))
    assert full.matches == capped.matches and full.truncated and capped.truncated
    assert full.total is not None and full.total > 1 and capped.total is None


# ---------------------------------------------------------------- the evidence pass, against its definition


def _evidence_by_line(raw: bytes, low: bytes) -> list[tuple[int, int]]:
    """``search.scan.evidence_spans`` as first written: each derivation checked line by line (what the
    faster chunk-level passes must give, span for span)."""
    from transcript_reader.home_search import scan as s

    spans: set[tuple[int, int]] = set()
    for m in s._U_ESCAPE.finditer(low):
        spans.add(s._line_at(low, m.start()))
    for p in s._PARTNERS_RAW:
        i = raw.find(p)
        while i >= 0:
            spans.add(s._line_at(low, i))
            i = raw.find(p, i + 1)
    for start, end, line in s._spans_with(low, s._EXEC_LINE):
        if s._EXEC_CALL in line and s._js_escape(line):
            spans.add((start, end))
    for trigger in s._SHELL_TRIGGERS:
        end = 0
        while (hit := trigger.search(low, end)) is not None:
            start, end = s._line_at(low, hit.start())
            if s._SHELL_MARK.search(low, start, end) is not None:
                spans.add((start, end))
    for key in (b'"text":', b'"refusal":', b'"stderr"', b'output"'):
        for start, end, line in s._spans_with(low, key):
            if s._joins(line):
                spans.add((start, end))
    for start, end, line in s._spans_with(low, b"file:"):
        if re.search(rb"%[0-9a-f]{2}", line) is not None:
            spans.add((start, end))
    return sorted(spans)


def test_evidence_spans_equal_the_line_by_line_definition() -> None:
    """On every fixture and corpus file, the evidence lines found by whole-chunk passes are those the
    line-by-line definition finds."""
    from transcript_reader.home_search.scan import evidence_spans

    checked = 0
    for f in _recorded_files():
        raw = f.read_bytes()
        if raw[:4] == b"\x28\xb5\x2f\xfd":
            continue
        low = raw.lower()
        assert evidence_spans(raw, low) == _evidence_by_line(raw, low), f
        checked += 1
    assert checked > 30


_EVIDENCE_BITS = st.sampled_from(['"text":"a', '"text":"', 'b"', '"refusal":"x', '"stderr":"e', '"stdout":"o',
                                  'output":["', 'content": [ "', 'result"\t:["', 'ok":[', 'file:///a%41b',
                                  '%2F', '"exec"', 'custom_tool_call', '\\\\x41', '${x}', 'bash -lc ',
                                  "py'test'", '\\\\u0041', '\u0130', '\u212a', '"type":"message"', 'sh -c',
                                  'cmd /c', 'a\\\\"b', ' ', '\n', 'x', '1'])


@settings(max_examples=EXAMPLES * 3, deadline=None)
@given(bits=st.lists(_EVIDENCE_BITS, max_size=40))
def test_evidence_spans_equal_the_definition_on_generated_chunks(bits: list[str]) -> None:
    """Generated chunks dense in the evidence triggers, glued in any order and split over lines."""
    from transcript_reader.home_search.scan import evidence_spans

    raw = "".join(bits).encode("utf-8")
    low = raw.lower()
    assert evidence_spans(raw, low) == _evidence_by_line(raw, low)
