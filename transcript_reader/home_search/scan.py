"""The byte pre-filter of cross-session search: which files can hold a hit, decided without decoding.

A plain (non-regex) query is cut into *pieces*: its runs of ASCII letters and digits, lower-cased.
Every hit's text holds every piece (matching is case-insensitive), and the reader copies text out of
JSON strings, where an ASCII letter or digit is written as itself. So a file lacking a piece (in any
case) holds no hit, unless the reader could have *derived* that piece rather than copied it. The
derivations, and the byte evidence that must be present for each (a *marker*):

- a JSON ``\\u00XX`` escape of a letter or digit, at any nesting level, or of a non-ASCII partner that
  Python's case-insensitive matching equates with an ASCII letter (``K`` Kelvin sign, ``ſ``, ``İ``, ``ı``),
  or such a partner written raw (anywhere in the file);
- inside an exec cell's script (a custom tool call line holding ``"exec"``): a JavaScript escape that makes a letter or
  digit (``\\x41``, ``\\u0041``, octal, ``\\q`` for ``q``, a line continuation that joins two runs), and a
  template substitution ``${…}`` the analyzer resolves (a patch path ``${dir}/a.txt``);
- in a shell command line the reader unwraps (a line naming a shell and a ``-c``/``/c`` option): quotes
  or backslashes removed between two letters (``py'test'`` is ``pytest``), a backslash-newline;
- in a call output given as a content-item array (a line with ``output"``): two text parts joined
  with nothing between them;
- in a ``file://`` working directory: a percent escape (``%41``);
- words the reader writes itself: a test run's framework name (``testruns`` declares each runner's
  words), the ``[image]`` placeholder, and the words of its notices and unreadable-line reasons
  (:data:`READER_WORDS`; ``tests/test_search.py`` checks every fixture and corpus file against it),
  the words of a patch's parse error (:data:`PATCH_WORDS`), the words of the marker it puts where it
  cut a long output and of the tool names it composes
  (:data:`ITEM_WORDS`). A piece inside one of these words is not required; nor is a digits-only piece
  (line numbers, counts and cut lengths are written by the reader).

The file is read in chunks of whole lines (a JSON line never holds a raw newline), so a piece never
straddles a chunk; memory is bounded by the chunk size (a line longer than :data:`MAX_LINE` makes the
file a candidate: the reader decides). Compressed files are decompressed as a stream.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from transcript_reader.model import Kind

if TYPE_CHECKING:
    from transcript_reader.home_search.derive import Derivable

try:  # RE2 finds a piece case-insensitively without lowering the chunk first (measured: ~4x faster)
    import re2 as _re2

    _RE2_OPTIONS = _re2.Options()
    _RE2_OPTIONS.case_sensitive = False
    _RE2_OPTIONS.encoding = _re2.Options.Encoding.LATIN1
except ImportError:  # pragma: no cover - google-re2 is a dependency; the scan still works without it
    _re2 = None

#: Bytes read per chunk (extended to the end of its last line).
CHUNK = 4 << 20
#: A line longer than this makes the file a candidate instead of being held whole.
MAX_LINE = 64 << 20
ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"

#: Words the reader writes into any item's text: the ``[image]`` placeholder, the marker of an output
#: cut in the middle (``[… N characters omitted …]``), tool names it composes (``mcp__server__tool``,
#: ``update_plan``, ``dynamic_tool``).
ITEM_WORDS = frozenset({"image", "characters", "omitted", "mcp", "update", "plan", "dynamic", "tool"})

#: Words the reader writes into notices and unreadable-line reasons (not copied from the file), and the
#: words of the JSON decoder's error messages it quotes.
READER_WORDS = frozenset("""
a aborted after an and another arrived as at back before begin behind being but bytes by code column command
copied cover cut decode document done early end ended ends entered error every exit exited expected expecting
failed field figures file first follow follows for fork forked frame frames from header here history id image
in invalid is it item items its json last late line lines list literal marker mid mode neither no nor not notice
null number object of on or own parse payload reconnecting replayed result resume review rolled run runs s
session session_meta shown started starts state stream string succeeded that the this thread to too trailing
truncated turn turn_context turns type undo unexpected unknown up value waited warning was were where with
without work write written zstd character characters control escape eof utf surrogate invalid_utf
allowed char content data depth double empty escaped exceeded infinity input key leading length limit low
parsed sequence str surrogates valid when zero element range out recursion found while parsing hex lone
bytes bytearray memoryview must
interrupted never completed complete task process stopped went new message final answer min h rewound
longer part away earlier reading does know above user record nothing show text
whose call calls paired earliest which answers share waiting order could read replaced rest utf
claude prints none replay messages echoes belongs than sub agent background model cost so far states total
usd ran has output prompt p
still running came had belongs open change reasoning patch
again all are aside besides copy counted each gaps give goes held holds interleaved into just latest missing
more named next numbered numbering one placed prompt records said second set so than they tool what
""".split())

#: Words of the reasons the patch grammar gives for a patch it cannot read (a patch's ``error``).
PATCH_WORDS = frozenset("""
text after end patch line add file without a path delete update move to unexpected in hunk empty expected
header got missing begin
""".split())

#: Lines whose escapes the exec-script analyzer decodes.
_EXEC_LINE = b'"exec"'
#: ... and only a custom tool call's input is a script (the analyzer never sees a description of the
#: exec tool, such as the one in a session's base instructions).
_EXEC_CALL = b"custom_tool_call"
#: JSON \u escapes of an ASCII letter or digit, or of a case partner (İ ı ſ K), at any nesting level.
_U_ESCAPE = re.compile(rb"\\u(?:00(?:3[0-9]|[46][1-9a-f]|[57][0-9a]|5f|4f|6f)|013[01]|017f|212a)")
#: Case partners written raw (UTF-8): İ, ı, ſ, K.
_PARTNERS_RAW = (b"\xc4\xb0", b"\xc4\xb1", b"\xc5\xbf", b"\xe2\x84\xaa")
#: In a lowered exec line: a run of backslashes and the character after it. The script holds half the
#: run's JSON-escaped backslashes, so a JavaScript escape starts where the run is 2 mod 4 long (an odd
#: number of script backslashes), and a line continuation (a script backslash, then a JSON ``\n``)
#: where it is 3 mod 4 long, followed by ``n`` or ``r``.
_JS_RUN = re.compile(rb"(\\+)([0-9a-z_]|\xe2\x80[\xa8\xa9])")
#: Characters whose JavaScript escape gives a letter or digit (``\x41``, ``\u0041``, octal, ``\q``):
#: every letter and digit but those of the control escapes ``\b \f \n \r \t \v``.
_JS_MAKES_RUN = frozenset(b"0123456789acdeghijklmopqsuwxyz_")


#: A shell command line the reader may unwrap: a shell's name, then an option (``bash -lc``, ``cmd /c``,
#: ``pwsh -NoProfile -Command``), possibly after the quote that ends a quoted program path.
_SHELL_TRIGGERS = (re.compile(rb'sh(?:\.exe)?(?:\\{0,3}")? +-'), re.compile(rb'cmd(?:\.exe)?(?:\\{0,3}")? +/'),
                   re.compile(rb'(?:powershell|pwsh)(?:\.exe)?(?:\\{0,3}")? +-'))
#: In such a line: quotes or backslashes between two letters or digits, or a backslash-newline.
_SHELL_MARK = re.compile(rb"[a-z0-9_](?:\\\\|\\\"|')+[a-z0-9_]|\\\\\\[nr]")
_STRING_ARRAY = re.compile(rb'(?:output|content|content_items|contentitems|result|ok)"\s*:\s*\[\s*"')
#: In a lowered line with a file URL: a percent escape.


@dataclass(frozen=True, slots=True)
class Needle:
    """The pieces every hit's file holds, unless a marker says the reader may derive them."""

    pieces: tuple[bytes, ...]


def _framework_words() -> frozenset[str]:
    """Every word the reader may add to a test run's search text: what each runner declares
    (``testruns.PREFILTER_WORDS``: a runner added without its words cannot be silently unsearchable)."""
    from transcript_reader.testruns import PREFILTER_WORDS

    return frozenset(w.lower() for w in PREFILTER_WORDS)


def query_needle(query: str, kinds: Iterable[Kind]) -> Needle | None:
    """The pre-check for a plain query searched in items of ``kinds``, or None when no file may be
    skipped for it (the query has no piece the file must hold)."""
    wanted = frozenset(kinds)
    free: set[str] = set(ITEM_WORDS)
    if Kind.TEST_RUN in wanted:
        free |= _framework_words()
    if wanted & {Kind.NOTICE, Kind.UNREADABLE}:
        free |= READER_WORDS
    if Kind.PATCH in wanted:
        free |= PATCH_WORDS
    pieces = []
    for p in re.split(r"[^a-z0-9]+", query.lower()):
        if not p or p.isdigit() or any(p in w for w in free):
            continue
        pieces.append(p.encode("ascii"))
    if not pieces:
        return None
    # the longest first: it is the most likely to be missing, so a miss is decided by one look
    return Needle(tuple(sorted(dict.fromkeys(pieces), key=len, reverse=True)))


def _chunks(fh, chunk: int) -> Iterator[bytes | None]:  # type: ignore[no-untyped-def]
    """Whole-line chunks of ``fh``; None for a line too long to hold (the caller gives up)."""
    rest = b""
    while True:
        data = fh.read(chunk)
        if not data:
            if rest:
                yield rest
            return
        data = rest + data
        cut = data.rfind(b"\n") + 1
        if cut == 0:
            if len(data) > MAX_LINE:
                yield None
                return
            rest = data
            continue
        rest = data[cut:]
        yield data[:cut]


def _line_at(low: bytes, i: int) -> tuple[int, int]:
    start = low.rfind(b"\n", 0, i) + 1
    end = low.find(b"\n", i)
    return start, len(low) if end < 0 else end


def _spans_with(low: bytes, what: bytes) -> Iterator[tuple[int, int, bytes]]:
    """``(start, end, line)`` of each line of ``low`` that contains ``what``."""
    i = low.find(what)
    while i >= 0:
        start, end = _line_at(low, i)
        yield start, end, low[start:end]
        i = low.find(what, end)


def _js_escape(line: bytes) -> bool:
    """Whether this exec line's script may hold a JavaScript escape or a template the analyzer
    resolves into text (see :data:`_JS_RUN`)."""
    if b"${" in line:
        return True
    for m in _JS_RUN.finditer(line):
        n, c = len(m.group(1)) % 4, m.group(2)
        if n == 2 and (len(c) > 1 or c[0] in _JS_MAKES_RUN) or n == 3 and c in (b"n", b"r"):
            return True
    return False


def _values(line: bytes, key: bytes) -> list[bytes]:
    return [m.group(1) for m in re.finditer(rb'"' + key + rb'"\s*:\s*"((?:[^"\\]|\\.)*)"', line)]


def _ends_in_run(value: bytes) -> bool:
    """Whether a raw JSON string value's last character is a letter or digit (not the letter of an
    escape such as ``\\n``: an odd run of backslashes before it)."""
    if not value[-1:].isalnum():
        return False
    head = value[:-1]
    return (len(head) - len(head.rstrip(b"\\"))) % 2 == 0


def _joined_runs(values: list[bytes]) -> bool:
    """Whether joining these raw string values end to start could make a new letter-and-digit run."""
    return any(_ends_in_run(a) and b[:1].isalnum() for a, b in zip(values, values[1:]))


def _joins(line: bytes) -> bool:
    """Whether the reader may join two string values of this (lowered) line with nothing between
    them into a new run: the text parts of a call output or of an agent-message record, refusal
    parts, a patch's or command's stdout and stderr (a message's parts are joined with a newline,
    so a message line's several ``"text"`` values are not joined)."""
    if line.count(b'"text":') > 1 and b'"type":"message"' not in line and _joined_runs(_values(line, b"text")):
        return True
    if line.count(b'"refusal":') > 1 and _joined_runs(_values(line, b"refusal")):
        return True
    if b'"stderr"' in line and b'"stdout"' in line and _joined_runs(_values(line, b"stdout")[:1]
                                                                   + _values(line, b"stderr")[:1]):
        return True
    return _STRING_ARRAY.search(line) is not None


#: Within one line (``[^\n]``, and ``\s`` without the newline): where :func:`_joins` may hold, so that it
#: is asked only of those lines, found by passes over the whole chunk instead of one call per line
#: holding a key (most lines hold ``"text":``: asking each cost most of a first search). One RE2 pass
#: when installed (measured: 9x faster than Python's ``re`` on this alternation), else one pass each.
_JOIN_PATTERNS = (rb'"text":[^\n]*"text":', rb'"refusal":[^\n]*"refusal":',
                  rb'"stderr"[^\n]*"stdout"|"stdout"[^\n]*"stderr"',
                  rb'(?:output|content|content_items|contentitems|result|ok)"[ \t\r\f\v]*:[ \t\r\f\v]*\[[ \t\r\f\v]*"')
if _re2 is not None:
    _LATIN1 = _re2.Options()
    _LATIN1.encoding = _re2.Options.Encoding.LATIN1
    _JOIN_CANDIDATES: tuple[Any, ...] = (_re2.compile(b"|".join(_JOIN_PATTERNS), _LATIN1),)
else:  # pragma: no cover - google-re2 is a dependency
    _JOIN_CANDIDATES = tuple(re.compile(p) for p in _JOIN_PATTERNS)
#: Any of :data:`_PARTNERS_RAW` (one pass: four ``find`` loops cost twice as much).
_PARTNER = (_re2.compile(b"|".join(_PARTNERS_RAW), _LATIN1) if _re2 is not None
            else re.compile(b"|".join(_PARTNERS_RAW)))
#: Keys a line must hold for its joins to count (the reader joins the values of these).
_JOIN_KEYS = (b'"text":', b'"refusal":', b'"stderr"', b'output"')
#: In a lowered line with a file URL: a percent escape.
_PERCENT = re.compile(rb"%[0-9a-f]{2}")


def _lines_of(low: bytes, pattern: Any) -> Iterator[tuple[int, int]]:
    """``(start, end)`` of each line of ``low`` in which ``pattern`` matches (a pattern that never
    crosses a newline), once per line."""
    pos = 0
    search = pattern.search
    while (m := search(low, pos)) is not None:
        start, end = _line_at(low, m.start())
        yield start, end
        pos = end + 1


def evidence_spans(raw: bytes, low: bytes) -> list[tuple[int, int]]:
    """The ``(start, end)`` of each line of this chunk (``low``: lowered) that holds evidence that the
    reader may derive text it does not hold verbatim (the module's docstring lists the derivations).
    ``tests/test_search.py`` checks it against the line-by-line definition."""
    spans: set[tuple[int, int]] = set()
    spans.update(_lines_of(low, _U_ESCAPE))
    spans.update(_lines_of(raw, _PARTNER))
    for start, end, line in _spans_with(low, _EXEC_LINE):
        if _EXEC_CALL in line and _js_escape(line):
            spans.add((start, end))
    for trigger in _SHELL_TRIGGERS:
        end = 0
        while (hit := trigger.search(low, end)) is not None:
            start, end = _line_at(low, hit.start())
            if _SHELL_MARK.search(low, start, end) is not None:
                spans.add((start, end))
    for pattern in _JOIN_CANDIDATES:
        for start, end in _lines_of(low, pattern):
            if (start, end) not in spans:
                line = low[start:end]
                if any(k in line for k in _JOIN_KEYS) and _joins(line):
                    spans.add((start, end))
    for start, end, line in _spans_with(low, b"file:"):
        if _PERCENT.search(line) is not None:
            spans.add((start, end))
    return sorted(spans)


def derivable(raw: bytes, low: bytes) -> bool:
    """Whether this chunk (``low``: lowered) holds any derivation evidence (:func:`evidence_spans`)."""
    return bool(evidence_spans(raw, low))


#: Evidence kept per file: at most this many lines, of at most this many bytes in all (past either,
#: the file is a candidate whenever it lacks a piece).
MAX_EVIDENCE_LINES = 4096
MAX_EVIDENCE_BYTES = 16 << 20


@dataclass(frozen=True, slots=True)
class Evidence:
    """A file's derivation evidence: whether it holds any, the ``(offset, length)`` of each line
    holding it (None: not kept: a compressed file, or more than the bounds), and what those lines may
    make (``search.derive.Derivable``; None: not kept, bigger than its bound)."""

    derived: bool
    spans: list[tuple[int, int]] | None = None
    summary: Derivable | None = None


def _finder(piece: bytes) -> Callable[[bytes, bytes | None], bool]:
    """A case-insensitive test for ``piece`` (ASCII letters and digits) in a chunk: RE2 when installed
    (it scans at about the speed of a case-sensitive ``in``, without lowering the chunk first), else
    ``in`` on the lowered chunk."""
    if _re2 is not None:
        pat = _re2.compile(piece, _RE2_OPTIONS)
        return lambda raw, low: pat.search(raw) is not None
    return lambda raw, low: piece in (low if low is not None else raw.lower())


def _open_plain(path: str | Path, fh: IO[bytes]) -> IO[bytes]:
    if fh.read(4) == ZSTD_MAGIC:
        import zstandard

        fh.seek(0)
        return zstandard.ZstdDecompressor().stream_reader(fh, read_across_frames=True)  # type: ignore[return-value]
    fh.seek(0)
    return fh


def may_hold(path: str | Path, needle: Needle, chunk: int = CHUNK) -> bool:
    """Whether ``path`` may hold a hit of ``needle``'s query (False only when it cannot).

    The pieces are looked for first; a file that lacks one is examined for derivation evidence, and is
    a candidate only when every piece it lacks may be derived from its evidence lines
    (``search.derive``)."""
    try:
        finders = [(p, _finder(p)) for p in needle.pieces]
        with open(path, "rb") as raw_fh:
            fh = _open_plain(path, raw_fh)
            missing = finders
            for raw in _chunks(fh, chunk):
                if raw is None:
                    return True
                low = None if _re2 is not None else raw.lower()
                missing = [(p, f) for p, f in missing if not f(raw, low)]
                if not missing:
                    return True
        ev = file_evidence(path)
        if not ev.derived:
            return False
        from transcript_reader.home_search.derive import may_derive

        lacking = [p for p, _ in missing]
        if ev.summary is not None:
            return ev.summary.may_make(lacking)
        if ev.spans is None:
            return may_derive(evidence_lines(path), lacking)
        return may_derive(_read_spans(path, ev.spans), lacking)
    except OSError:
        return True  # let the reader report the error
    except Exception as e:  # a damaged compressed file: the reader reports what it can
        if type(e).__name__ == "ZstdError":
            return True
        raise


def _read_spans(path: str | Path, spans: list[tuple[int, int]]) -> Iterator[bytes]:
    with open(path, "rb") as fh:
        for off, n in spans:
            fh.seek(off)
            yield fh.read(n)


def evidence_lines(path: str | Path, chunk: int = CHUNK) -> Iterator[bytes]:
    """The lines of the file that hold derivation evidence (a line too long to hold: ``b""``, which no
    decoder reads: the caller then counts the file as a candidate)."""
    with open(path, "rb") as raw_fh:
        fh = _open_plain(path, raw_fh)
        for raw in _chunks(fh, chunk):
            if raw is None:
                yield b""
                return
            for a, b in evidence_spans(raw, raw.lower()):
                yield raw[a:b]


def file_evidence(path: str | Path, chunk: int = CHUNK) -> Evidence:
    """Whether any line of the file holds derivation evidence (a line too long to hold counts), where
    (plain files, within the bounds), and what those lines may make (within its bound)."""
    from transcript_reader.home_search.derive import MAX_SUMMARY_CHARS, summarize

    spans: list[tuple[int, int]] | None = []
    lines: list[bytes] | None = []
    kept = 0
    derived = False
    with open(path, "rb") as raw_fh:
        fh = _open_plain(path, raw_fh)
        plain = fh is raw_fh
        pos = 0
        for raw in _chunks(fh, chunk):
            if raw is None:
                return Evidence(True, None)
            found = evidence_spans(raw, raw.lower())
            if found:
                derived = True
                if lines is not None:
                    lines.extend(raw[a:b] for a, b in found)
                    kept += sum(b - a for a, b in found)
                    if len(lines) > MAX_EVIDENCE_LINES or kept > MAX_EVIDENCE_BYTES:
                        lines = spans = None
                if spans is not None and plain:
                    spans.extend((pos + a, b - a) for a, b in found)
            pos += len(raw)
    if not derived:
        return Evidence(False)
    summary = summarize(lines) if lines is not None else None
    if summary is not None and len(summary.runs) + sum(len(x) for x in summary.joined) > MAX_SUMMARY_CHARS:
        summary = None
    return Evidence(True, spans if plain else None, summary)


def derivable_file(path: str | Path, chunk: int = CHUNK) -> bool:
    """Whether any chunk of the file holds derivation evidence (a line too long to hold counts)."""
    return file_evidence(path, chunk).derived
