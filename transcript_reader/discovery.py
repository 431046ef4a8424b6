"""Find the sessions under a ``$CODEX_HOME``, fast, and resolve session names to files.

Layout (codex-formats.md §1): live sessions in ``sessions/YYYY/MM/DD/rollout-<ts>-<id>.jsonl``,
archived ones flat in ``archived_sessions/``, either possibly compressed as ``.jsonl.zst`` (the plain
file wins when both exist), and the TypeScript CLI's flat ``sessions/rollout-<date>-<id>.json``.
Thread names come from ``session_index.jsonl`` (append-only: the last entry for an id wins).

Speed is the point of this module: listing a thousand sessions must take well under a second, so a
row is built from the head and tail of each file (``decode.head``: a bounded number of bytes) and its
size and mtime, never from a whole-file read. The figures that need a whole read (turns, commands,
files changed, tests) are computed only on request (``compute_stats``) and kept in a small
``StatsCache`` keyed by ``(path, size, mtime_ns)``, so a file that has not changed is never read twice.

The library never reads the environment: the caller passes ``codex_home`` and the cache directory.
"""

from __future__ import annotations

import os
import re
import stat
import tempfile
from collections.abc import Callable, Iterable, Iterator
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import BinaryIO

import orjson

from transcript_reader.decode.head import SessionHead, SessionTail, read_head, read_tail
from transcript_reader.errors import InvalidArgumentError, SessionNotFoundError
from transcript_reader.model import Format, TokenUsage

LIVE_DIR = "sessions"
ARCHIVE_DIR = "archived_sessions"
INDEX_FILE = "session_index.jsonl"

_UUID = r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"
#: ``rollout-2026-11-30T17-59-09-<uuid>[_<rollout id>].jsonl`` and the TS CLI's ``rollout-2026-11-30-<uuid>.json``.
_NAME = re.compile(
    r"^rollout-(?P<date>\d{4}-\d{2}-\d{2})(?:T(?P<time>\d{2}-\d{2}-\d{2}))?-(?P<id>" + _UUID + r")"
)
_LAST = re.compile(r"^last(?:~(\d+))?$")


class Scope:
    LIVE = "live"
    ARCHIVED = "archived"
    ALL = "all"


@dataclass(frozen=True, slots=True)
class SessionStats:
    """Figures that need a whole read of the session (computed on request, then cached)."""

    turns: int = 0
    commands: int = 0
    commands_failed: int = 0
    files_changed: int = 0
    tests_passed: int = 0
    tests_failed: int = 0
    tokens: TokenUsage | None = None
    last_timestamp: str | None = None
    duration_s: float | None = None


@dataclass(frozen=True, slots=True)
class SessionEntry:
    """One session file as ``ls`` lists it. ``name`` is the latest ``session_index.jsonl`` name;
    ``title`` is that name, else the first real user prompt. ``depth`` is 1 for a sub-agent shown
    under its parent (2 under a sub-agent, ...). ``parent_note`` says why a session that names a parent
    is top-level anyway: "not listed", "self" or "cycle" (see ``_nest``)."""

    path: str
    archived: bool
    size: int
    mtime_ns: int
    head: SessionHead
    tail: SessionTail = field(default_factory=SessionTail)
    name: str | None = None
    stats: SessionStats | None = None
    depth: int = 0
    parent_note: str | None = None

    @property
    def session_id(self) -> str | None:
        if self.head.session_id:
            return self.head.session_id
        m = _NAME.match(Path(self.path).name)
        return m.group("id") if m else None

    @property
    def title(self) -> str | None:
        return self.name or self.head.title

    @property
    def started(self) -> datetime | None:
        return parse_time(self.head.timestamp) or _name_time(Path(self.path).name)

    @property
    def last_timestamp(self) -> str | None:
        if self.stats is not None and self.stats.last_timestamp:
            return self.stats.last_timestamp
        return self.tail.last_timestamp

    @property
    def duration_s(self) -> float | None:
        """Session start (head) to the last timestamp (tail); the full read's figure only when the tail
        cannot be read (compressed files), so a row does not change once ``--stats`` ran."""
        start, end = self.started, parse_time(self.tail.last_timestamp)
        if start is not None and end is not None and end > start:
            return (end - start).total_seconds()
        if self.stats is not None and self.stats.duration_s:
            return self.stats.duration_s
        return None  # early Rust files carry one timestamp only: no duration, not zero

    @property
    def tokens(self) -> TokenUsage | None:
        if self.stats is not None and self.stats.tokens is not None:
            return self.stats.tokens
        return self.tail.tokens

    @property
    def parent_id(self) -> str | None:
        return self.head.parent_session_id or self.head.forked_from_id


def parse_time(value: str | None) -> datetime | None:
    """An ISO-8601 timestamp as an aware UTC datetime (None when absent or unreadable)."""
    if not value:
        return None
    try:
        dt = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return dt if dt.tzinfo else dt.replace(tzinfo=UTC)


def _name_time(name: str) -> datetime | None:
    m = _NAME.match(name)
    if not m:
        return None
    t = (m.group("time") or "00-00-00").replace("-", ":")
    try:
        return datetime.fromisoformat(f"{m.group('date')}T{t}+00:00")
    except ValueError:
        return None


def parse_when(value: str, *, now: datetime) -> datetime:
    """``--since``/``--until`` values: an ISO date or datetime (UTC when no zone is given), or a
    relative age such as ``90m``, ``12h``, ``3d``, ``2w``."""
    v = value.strip()
    m = re.fullmatch(r"(\d+)\s*([mhdw])", v)
    if m:
        n = int(m.group(1))
        unit = {"m": timedelta(minutes=n), "h": timedelta(hours=n), "d": timedelta(days=n), "w": timedelta(weeks=n)}
        return now - unit[m.group(2)]
    dt = parse_time(v)
    if dt is None:
        raise InvalidArgumentError(f"cannot read {value!r} as a date (use 2026-11-30, 2026-11-30T18:00, 3d or 2w)")
    return dt


def is_session_file_name(name: str) -> bool:
    """Codex counts a file as a rollout when, without ``.zst``, it starts ``rollout-`` and ends
    ``.jsonl``; the TS CLI wrote ``rollout-….json``."""
    if not name.startswith("rollout-"):
        return False
    if name.endswith(".zst"):
        return name[:-4].endswith(".jsonl")
    return name.endswith((".jsonl", ".json"))


def iter_session_files(codex_home: str | os.PathLike[str], scope: str = Scope.LIVE) -> Iterator[tuple[Path, bool]]:
    """``(path, archived)`` for every session file of the scope, the plain file winning over its
    ``.zst`` twin. Order is unspecified (the caller sorts by time)."""
    home = Path(codex_home)
    roots: list[tuple[Path, bool]] = []
    if scope in (Scope.LIVE, Scope.ALL):
        roots.append((home / LIVE_DIR, False))
    if scope in (Scope.ARCHIVED, Scope.ALL):
        roots.append((home / ARCHIVE_DIR, True))
    for root, archived in roots:
        stack = [root]
        while stack:
            d = stack.pop()
            try:
                it = os.scandir(d)
            except (FileNotFoundError, NotADirectoryError, PermissionError):
                continue
            with it:
                entries = list(it)
            names = {e.name for e in entries}
            for e in entries:
                try:
                    if e.is_dir(follow_symlinks=False):
                        stack.append(Path(e.path))
                        continue
                except OSError:
                    continue
                if not is_session_file_name(e.name):
                    continue
                try:
                    if not e.is_file():  # a FIFO or device named like a rollout would block a read
                        continue
                except OSError:
                    continue
                if e.name.endswith(".zst") and e.name[:-4] in names:
                    continue  # plain wins (codex-rs/rollout/src/compression.rs)
                yield Path(e.path), archived


def open_regular(path: str | os.PathLike[str]) -> BinaryIO | None:
    """Open ``path`` for reading only if it is a regular file; None when it is missing, unreadable or
    anything else (QA F5: a FIFO named ``session_index.jsonl`` blocked ``ls`` forever in ``open``, a
    directory of that name raised IsADirectoryError). The mode is checked with ``stat`` before the open
    and with ``fstat`` after it (the name may be swapped in between); ``O_NONBLOCK`` keeps the open itself
    from waiting for a writer should a FIFO slip through."""
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):
            return None
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            os.close(fd)
            return None
        return os.fdopen(fd, "rb")
    except OSError:
        os.close(fd)
        return None


def load_session_index(codex_home: str | os.PathLike[str]) -> dict[str, str]:
    """Thread names by session id; the last entry for an id wins, an empty name clears it. Lines that
    do not decode are skipped, and an index that is not a regular file (a FIFO, a directory) or cannot
    be read is ignored: the index only decorates the listing, it never hides a session."""
    names: dict[str, str] = {}
    fh = open_regular(Path(codex_home) / INDEX_FILE)
    if fh is None:
        return names
    try:
        with fh:
            for line in fh:
                try:
                    obj = orjson.loads(line)
                except orjson.JSONDecodeError:
                    continue
                if not isinstance(obj, dict) or not isinstance(obj.get("id"), str):
                    continue
                name = obj.get("thread_name")
                if isinstance(name, str) and name.strip():
                    names[obj["id"]] = name.strip()
                else:
                    names.pop(obj["id"], None)
    except OSError:
        pass  # an I/O error mid-file: keep the names read so far
    return names


class StatsCache:
    """Whole-read figures of sessions, stored as one small JSON file, keyed by path and valid only
    while the file's size and mtime_ns are unchanged (a growing live session is recomputed)."""

    VERSION = 2

    def __init__(self, path: str | os.PathLike[str] | None) -> None:
        self.path = Path(path) if path is not None else None
        self._entries: dict[str, dict[str, object]] = {}
        self._dirty = False
        if self.path is not None:
            try:
                fh = open_regular(self.path)  # a FIFO in the cache dir must not block ls (QA F5)
                if fh is None:
                    raise FileNotFoundError(self.path)
                with fh:
                    data = orjson.loads(fh.read())
                if isinstance(data, dict) and data.get("version") == self.VERSION:
                    entries = data.get("entries")
                    if isinstance(entries, dict):
                        self._entries = entries
            except (OSError, orjson.JSONDecodeError):
                self._entries = {}

    def get(self, path: str, size: int, mtime_ns: int) -> SessionStats | None:
        e = self._entries.get(path)
        if not isinstance(e, dict) or e.get("size") != size or e.get("mtime_ns") != mtime_ns:
            return None
        s = e.get("stats")
        if not isinstance(s, dict):
            return None
        try:
            tok = s.get("tokens")
            return SessionStats(**{**s, "tokens": TokenUsage(**tok) if isinstance(tok, dict) else None})
        except TypeError:
            return None

    def put(self, path: str, size: int, mtime_ns: int, stats: SessionStats) -> None:
        e = self._fresh(path, size, mtime_ns)
        e["stats"] = asdict(stats)
        self._dirty = True

    def _fresh(self, path: str, size: int, mtime_ns: int) -> dict[str, object]:
        e = self._entries.get(path)
        if not isinstance(e, dict) or e.get("size") != size or e.get("mtime_ns") != mtime_ns:
            e = {"size": size, "mtime_ns": mtime_ns}
            self._entries[path] = e
        return e

    def get_head(self, path: str, size: int, mtime_ns: int) -> tuple[SessionHead, SessionTail] | None:
        """The head and tail read earlier from this very file version, if any."""
        e = self._entries.get(path)
        if not isinstance(e, dict) or e.get("size") != size or e.get("mtime_ns") != mtime_ns:
            return None
        h, t = e.get("head"), e.get("tail")
        if not isinstance(h, dict) or not isinstance(t, dict):
            return None
        try:
            fmt = h.get("format")
            head = SessionHead(**{**h, "format": Format(fmt) if isinstance(fmt, str) else None})
            tok = t.get("tokens")
            tail = SessionTail(last_timestamp=t.get("last_timestamp"),  # type: ignore[arg-type]
                               tokens=TokenUsage(**tok) if isinstance(tok, dict) else None)
        except (TypeError, ValueError):
            return None
        return head, tail

    def put_head(self, path: str, size: int, mtime_ns: int, head: SessionHead, tail: SessionTail) -> None:
        e = self._fresh(path, size, mtime_ns)
        h = asdict(head)
        h["format"] = head.format.value if head.format is not None else None
        e["head"] = h
        e["tail"] = {"last_timestamp": tail.last_timestamp, "tokens": asdict(tail.tokens) if tail.tokens else None}
        self._dirty = True

    def prune(self, keep: set[str]) -> None:
        """Forget files that are gone (only called after a listing of the whole home)."""
        for path in [p for p in self._entries if p not in keep]:
            del self._entries[path]
            self._dirty = True

    def save(self) -> None:
        """Write atomically (a concurrent ``ls`` never sees half a file); failures are ignored, the
        cache is only an accelerator."""
        if self.path is None or not self._dirty:
            return
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=self.path.parent, prefix=".stats-", suffix=".json")
            with os.fdopen(fd, "wb") as fh:
                fh.write(orjson.dumps({"version": self.VERSION, "entries": self._entries}))
            os.replace(tmp, self.path)
            self._dirty = False
        except OSError:
            pass


def compute_stats(path: str | os.PathLike[str]) -> SessionStats:
    """Read a whole session once (issue #3's reader, streaming) for the figures the head cannot give."""
    from transcript_reader.api import Transcript
    from transcript_reader.model import Executed, PatchItem, ShellCommand, TestResult, TestRun

    t = Transcript(path)
    commands = failed = passed_t = failed_t = 0
    files: set[str] = set()
    for item in t.items():
        if isinstance(item, ShellCommand):
            if item.executed is Executed.NO:
                continue  # a command that never ran is not one the session ran
            commands += 1
            if item.exit_code not in (None, 0):
                failed += 1
        elif isinstance(item, PatchItem):
            if item.success is not False:
                files.update(fc.move_to or fc.path for fc in item.files)
        elif isinstance(item, TestRun):
            if item.result is TestResult.PASS:
                passed_t += 1
            elif item.result is TestResult.FAIL:
                failed_t += 1
    info = t.info()
    tokens = info.tokens if info.tokens.source != "unknown" else None
    return SessionStats(
        turns=info.turns, commands=commands, commands_failed=failed, files_changed=len(files),
        tests_passed=passed_t, tests_failed=failed_t, tokens=tokens, last_timestamp=info.last_timestamp,
        duration_s=info.duration_s,
    )


def _realpath(path: str) -> str | None:
    """``path`` with its symlinks resolved, or None when that cannot be done safely: a relative path
    (it would resolve against this process's directory), an embedded NUL (ValueError), any OSError. A
    path that does not exist on this machine resolves as far as it exists and never fails."""
    if not os.path.isabs(path):
        return None
    try:
        return os.path.realpath(path)
    except (OSError, ValueError):
        return None


class CwdMatcher:
    """Whether a session's recorded cwd is at or under a project directory, through symlinks (QA F12).

    Codex records its cwd as ``getcwd()`` gives it, the physical path, while a user who ``cd``'d through
    a symlink (macOS ``/tmp`` -> ``/private/tmp``, a symlinked worktree) types or stands in the logical
    one; an older session may have recorded a path that is a symlink today. So the project matches
    both as given and resolved, and a session's cwd that matches neither is compared resolved too: once
    per distinct cwd string (sessions share a handful of projects), never failing on a cwd that does
    not exist here (it resolves as far as it exists, so it can only match what it names)."""

    def __init__(self, root: str) -> None:
        roots = [os.path.normpath(root)]
        real = _realpath(roots[0])
        if real is not None and real not in roots:
            roots.append(real)
        self.roots = tuple(roots)
        self._resolved: dict[str, bool] = {}

    def _under(self, path: str) -> bool:
        return any(path == r or path.startswith(r.rstrip(os.sep) + os.sep) for r in self.roots)

    def __call__(self, cwd: str | None) -> bool:
        if not cwd:
            return False
        c = os.path.normpath(cwd)
        if self._under(c):
            return True
        hit = self._resolved.get(c)
        if hit is None:
            real = _realpath(c)
            hit = self._resolved[c] = real is not None and real != c and self._under(real)
        return hit


def _within(cwd: str | None, root: str) -> bool:
    """Whether ``cwd`` is ``root`` or below it, through symlinks on either side (:class:`CwdMatcher`)."""
    return CwdMatcher(root)(cwd)


def _matches_grep(entry: SessionEntry, needle: str) -> bool:
    hay = " ".join(
        x for x in (entry.name, entry.head.title, entry.head.cwd, entry.session_id, entry.head.model,
                    entry.head.agent_nickname, Path(entry.path).name) if x
    )
    return needle.lower() in hay.lower()


def read_entry(path: Path, archived: bool, names: dict[str, str], cache: StatsCache | None = None) -> SessionEntry:
    """One row from the head and tail of a file, or from the cache when this file version (path, size,
    mtime_ns) was read before; plus cached whole-read figures when still valid."""
    st = path.stat()
    if not stat.S_ISREG(st.st_mode):
        # iter_session_files skips non-regular files; a FIFO swapped in since must not block the read.
        return SessionEntry(path=str(path), archived=archived, size=st.st_size, mtime_ns=st.st_mtime_ns,
                            head=SessionHead(format=None, error="cannot read: not a regular file"))
    cached = cache.get_head(str(path), st.st_size, st.st_mtime_ns) if cache is not None else None
    if cached is not None:
        head, tail = cached
    else:
        try:
            head = read_head(path)
        except OSError as e:
            head = SessionHead(format=None, error=f"cannot read: {e.strerror or e}")
        try:
            tail = read_tail(path) if head.format is not None else SessionTail()
        except OSError:
            tail = SessionTail()
        if cache is not None and not (head.error or "").startswith("cannot read"):
            cache.put_head(str(path), st.st_size, st.st_mtime_ns, head, tail)
    entry = SessionEntry(path=str(path), archived=archived, size=st.st_size, mtime_ns=st.st_mtime_ns, head=head,
                         tail=tail)
    sid = entry.session_id
    name = names.get(sid) if sid else None
    stats = cache.get(str(path), st.st_size, st.st_mtime_ns) if cache is not None else None
    if name is not None or stats is not None:
        entry = SessionEntry(path=entry.path, archived=archived, size=entry.size, mtime_ns=entry.mtime_ns,
                             head=head, tail=tail, name=name, stats=stats)
    return entry


def _unreadable(e: SessionEntry) -> bool:
    return (e.head.error or "").startswith("cannot read")


def _sort_key(e: SessionEntry) -> tuple[float, str]:
    t = e.started
    return (t.timestamp() if t else e.mtime_ns / 1e9, e.path)


def list_sessions(
    codex_home: str | os.PathLike[str],
    *,
    scope: str = Scope.LIVE,
    cwd: str | None = None,
    since: datetime | None = None,
    until: datetime | None = None,
    grep: str | None = None,
    limit: int | None = None,
    cache: StatsCache | None = None,
    with_stats: bool = False,
    progress: Callable[[int, int], None] | None = None,
) -> list[SessionEntry]:
    """Sessions newest first, each sub-agent (``source.subagent.thread_spawn.parent_thread_id``) or
    fork (``forked_from_id``) right under its parent (``depth`` 1) when the parent is listed too;
    every session exactly once, whatever its parent links say (a cycle, itself, a missing or
    filtered-out parent: top-level with a ``parent_note``).

    ``cwd`` keeps sessions whose cwd is that directory or below it, as given or with symlinks resolved
    on either side (:class:`CwdMatcher`; sessions that recorded no cwd, such as the TS CLI's, then never
    match); ``None`` keeps every project. ``limit`` counts top-level rows.
    ``with_stats`` computes missing whole-read figures (slow on a cold cache) and stores them in
    ``cache``; otherwise only figures already cached are attached."""
    if scope not in (Scope.LIVE, Scope.ARCHIVED, Scope.ALL):
        raise InvalidArgumentError(f"unknown scope {scope!r}")
    names = load_session_index(codex_home)
    entries: list[SessionEntry] = []
    seen: set[str] = set()
    in_project = CwdMatcher(cwd) if cwd is not None else None
    for path, archived in iter_session_files(codex_home, scope):
        seen.add(str(path))
        try:
            e = read_entry(path, archived, names, cache)
        except OSError:
            continue  # vanished between listing and stat (a session being archived)
        if in_project is not None and not in_project(e.head.cwd) and not _unreadable(e):
            continue  # a file that cannot be read has no known cwd: it is listed (with its error), not hidden
        t = e.started
        if since is not None and (t is None or t < since):
            continue
        if until is not None and (t is None or t > until):
            continue
        if grep and not _matches_grep(e, grep):
            continue
        entries.append(e)
    entries.sort(key=_sort_key, reverse=True)
    ordered = _nest(entries)
    if limit is not None:
        ordered = _limit_top_level(ordered, limit)
    if with_stats:
        ordered = _fill_stats(ordered, cache, progress)
    if cache is not None:
        if scope == Scope.ALL:
            cache.prune(seen)
        cache.save()
    return ordered


def _nest(entries: list[SessionEntry]) -> list[SessionEntry]:
    """``entries`` (newest first) with each sub-agent or fork right under its parent, every entry exactly
    once whatever the parent links say (QA F21: a cycle made its members unreachable from any top-level
    row, so they vanished from ``ls``, ``last`` and cross-session search).

    A session is top-level when its parent is not listed (missing, filtered out: ``parent_note``
    "not listed"), names itself ("self") or lies on a cycle of parent links ("cycle": every member of
    the cycle is top-level, since no link in it can be trusted over another; sessions hanging off the
    cycle stay under their parent). Walked iteratively: a chain of thousands of sub-agents must not hit
    the recursion limit."""
    by_id: dict[str, SessionEntry] = {}
    for e in entries:
        if e.session_id:
            by_id.setdefault(e.session_id, e)

    def listed_parent(e: SessionEntry) -> str | None:
        pid = e.parent_id
        return pid if pid and pid != e.session_id and pid in by_id else None

    children: dict[str, list[SessionEntry]] = {}
    roots: set[int] = set()  # id() of the entries: two files may carry the same session id
    notes: dict[int, str] = {}
    for e in entries:
        pid = listed_parent(e)
        if pid is not None:
            children.setdefault(pid, []).append(e)
            continue
        roots.add(id(e))
        if e.parent_id:
            notes[id(e)] = "self" if e.parent_id == e.session_id else "not listed"
    for kids in children.values():
        kids.sort(key=_sort_key)

    reached: set[int] = set()

    def reach(start: SessionEntry) -> None:
        stack = [start]
        while stack:
            cur = stack.pop()
            if id(cur) in reached:
                continue
            reached.add(id(cur))
            if cur.session_id:
                stack.extend(children.get(cur.session_id, ()))

    for e in entries:
        if id(e) in roots:
            reach(e)
    for e in entries:
        if id(e) in reached:
            continue
        # Not reached, so its parent (listed, else it would be a root) is not reached either: following
        # the parent links from here never meets a root and must come round to a cycle.
        chain: list[SessionEntry] = []
        pos: dict[int, int] = {}
        cur = e
        while id(cur) not in pos:
            pos[id(cur)] = len(chain)
            chain.append(cur)
            pid = listed_parent(cur)
            assert pid is not None  # an unreached entry is never a root
            cur = by_id[pid]
        for member in chain[pos[id(cur)]:]:
            roots.add(id(member))
            notes[id(member)] = "cycle"
        for member in chain[pos[id(cur)]:]:
            reach(member)

    out: list[SessionEntry] = []
    emitted: set[int] = set()
    for e in entries:
        if id(e) not in roots:
            continue
        stack: list[tuple[SessionEntry, int]] = [(e, 0)]
        while stack:
            cur, depth = stack.pop()
            if id(cur) in emitted:
                continue  # a second file with the same session id already took this child
            emitted.add(id(cur))
            note = notes.get(id(cur))
            same = cur.depth == depth and cur.parent_note == note
            out.append(cur if same else _with(cur, depth=depth, parent_note=note))
            if cur.session_id:
                kids = [c for c in children.get(cur.session_id, ()) if id(c) not in roots]
                stack.extend((c, depth + 1) for c in reversed(kids))
    return out


def _with(e: SessionEntry, **changes: object) -> SessionEntry:
    values = {f: getattr(e, f) for f in SessionEntry.__dataclass_fields__}
    values.update(changes)
    return SessionEntry(**values)  # type: ignore[arg-type]


def _limit_top_level(entries: list[SessionEntry], limit: int) -> list[SessionEntry]:
    out: list[SessionEntry] = []
    top = 0
    for e in entries:
        if e.depth == 0:
            top += 1
            if top > limit:
                break
        out.append(e)
    return out


def _fill_stats(
    entries: list[SessionEntry], cache: StatsCache | None, progress: Callable[[int, int], None] | None
) -> list[SessionEntry]:
    out: list[SessionEntry] = []
    missing = sum(1 for e in entries if e.stats is None and e.head.format is not None)
    done = 0
    for e in entries:
        if e.stats is None and e.head.format is not None:
            try:
                stats = compute_stats(e.path)
            except Exception:  # noqa: BLE001 - a session the reader rejects keeps its head-only row
                stats = None
            done += 1
            if progress is not None:
                progress(done, missing)
            if stats is not None:
                if cache is not None:
                    cache.put(e.path, e.size, e.mtime_ns, stats)
                e = _with(e, stats=stats)
        out.append(e)
    if cache is not None:
        cache.save()
    return out


def _file_id(path: Path) -> str:
    m = _NAME.match(path.name)
    return m.group("id").lower() if m else str(path)


def resolve_session(
    ref: str,
    codex_home: str | os.PathLike[str],
    *,
    cwd: str | None = None,
    scope: str = Scope.ALL,
) -> SessionEntry:
    """A session from an id, a unique id prefix (at least 4 characters), a thread name, ``last`` or
    ``last~N`` (N sessions before the latest; counted among top-level sessions of the project ``cwd``,
    or of every project when ``cwd`` is None). Raises ``SessionNotFoundError`` naming what was tried."""
    m = _LAST.match(ref.strip())
    if m:
        n = int(m.group(1) or 0)
        rows = [e for e in list_sessions(codex_home, scope=Scope.LIVE, cwd=cwd) if e.depth == 0]
        if n < len(rows):
            return rows[n]
        where = f" under {cwd}" if cwd else ""
        have = f"only {len(rows)} session(s)" if rows else "no session"
        raise SessionNotFoundError(f"{ref}: {have}{where} in {codex_home}"
                                   + (" (ls --all-projects lists every project)" if cwd else ""))
    needle = ref.strip().lower()
    if len(needle) < 4:
        raise SessionNotFoundError(f"{ref!r}: a session id prefix needs at least 4 characters")
    names = load_session_index(codex_home)
    hits: list[tuple[Path, bool]] = []
    for path, archived in iter_session_files(codex_home, scope):
        m2 = _NAME.match(path.name)
        fid = m2.group("id").lower() if m2 else None
        if fid is not None and fid.startswith(needle):
            hits.append((path, archived))
    if not hits:
        # Files named without an id (or ids that differ from the file name): fall back to heads,
        # and to thread names from the index.
        by_name = [sid for sid, nm in names.items() if nm.lower() == needle]
        for path, archived in iter_session_files(codex_home, scope):
            try:
                if not stat.S_ISREG(path.stat().st_mode):
                    continue  # swapped for a FIFO since the listing: read_head would block (QA F5)
                h = read_head(path)
            except OSError:
                continue
            sid = (h.session_id or "").lower()
            if sid and (sid.startswith(needle) or sid in (s.lower() for s in by_name)):
                hits.append((path, archived))
    if not hits:
        raise SessionNotFoundError(f"no session matches {ref!r} in {codex_home}")
    ids = {_file_id(p) for p, _ in hits}
    if len(ids) > 1:
        sample = ", ".join(sorted(ids)[:5])
        raise SessionNotFoundError(f"{ref!r} is ambiguous: {len(ids)} sessions match ({sample})")
    # One session, possibly written as several files (0.29 resume copies the history): take the newest.
    path, archived = max(hits, key=lambda h: (not h[1], h[0].stat().st_mtime_ns))
    return read_entry(path, archived, names)


def session_ids(codex_home: str | os.PathLike[str], scope: str = Scope.ALL) -> set[str]:
    """Every session id ``resolve_session`` matches a prefix against: the ids in the file names of the
    scope (lower case). A directory walk only, no file is opened."""
    out: set[str] = set()
    for path, _archived in iter_session_files(codex_home, scope):
        m = _NAME.match(path.name)
        if m:
            out.add(m.group("id").lower())
    return out


def unique_prefixes(ids: Iterable[str], universe: Iterable[str] = (), *, min_len: int = 8) -> dict[str, str]:
    """For each of ``ids``, its shortest prefix (at least ``min_len`` characters) that no other id of
    ``ids`` or ``universe`` starts with, so that ``resolve_session`` resolves it to that session. The
    universe must hold every id the resolver sees (``session_ids``), not only the rows shown: QA F3,
    ``ls --limit 5`` printed ``01a22d9c-4`` which matched a session left out by the limit. Compared in
    lower case, as the resolver does; sorted neighbours give the longest shared prefix (O(n log n))."""
    wanted = list(dict.fromkeys(ids))
    order = sorted({i.lower() for i in wanted} | {u.lower() for u in universe})
    where = {sid: k for k, sid in enumerate(order)}
    out: dict[str, str] = {}
    for sid in wanted:
        low = sid.lower()
        k = where[low]
        shared = 0
        for j in (k - 1, k + 1):
            if 0 <= j < len(order):
                shared = max(shared, len(os.path.commonprefix([low, order[j]])))
        out[sid] = sid[: max(min_len, shared + 1)]
    return out


def entry_to_dict(e: SessionEntry) -> dict[str, object]:
    """The JSON shape of a listed session (``ls --json``, the MCP ``list_sessions`` tool)."""
    s = e.stats
    tok = e.tokens
    return {
        "id": e.session_id,
        "path": e.path,
        "archived": e.archived,
        "format": e.head.format.value if e.head.format else None,
        "started": e.head.timestamp,
        "last_timestamp": e.last_timestamp,
        "duration_s": e.duration_s,
        "title": e.title,
        "name": e.name,
        "first_prompt": e.head.title,
        "cwd": e.head.cwd,
        "model": e.head.model,
        "cli_version": e.head.cli_version,
        "originator": e.head.originator,
        "source": e.head.source,
        "parent_session_id": e.head.parent_session_id,
        "forked_from_id": e.head.forked_from_id,
        "agent_nickname": e.head.agent_nickname,
        "depth": e.depth,
        "parent_note": e.parent_note,
        "size": e.size,
        "tokens": asdict(tok) if tok is not None else None,
        "stats": None if s is None else {
            "turns": s.turns, "commands": s.commands, "commands_failed": s.commands_failed,
            "files_changed": s.files_changed, "tests_passed": s.tests_passed, "tests_failed": s.tests_failed,
        },
        "error": e.head.error,
    }
