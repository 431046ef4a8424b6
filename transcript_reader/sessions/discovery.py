"""Find the sessions under a home, fast, and resolve session names to files.

Where sessions live is each provider's; this module lists, filters, nests and resolves them, over one
home or several (``homes``: provider name -> home; ``ls`` shows Codex and Claude Code together).

A listing with a ``store_dir`` takes its rows from each home's session store (``sessions.store``),
which reads every session once and then only what changed: every row carries the whole read's figures
(turns, commands, files changed, tests). Without a store (or for the files a store could not take), a
row is built from the head and tail of the file (``Provider.read_head`` / ``read_tail``: a bounded
number of bytes) and its size and mtime, and the whole-read figures only on request (``with_stats``).

The library never reads the environment: the caller passes the homes and the cache directory.
"""

from __future__ import annotations

import dataclasses
import os
import re
import stat
from collections.abc import Callable, Iterable, Iterator
from datetime import datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING

from transcript_reader.errors import InvalidArgumentError, SessionNotFoundError
from transcript_reader.providers import Provider, Scope
from transcript_reader.providers.head import SessionHead, SessionTail
from transcript_reader.reading.source import Descriptor
from transcript_reader.sessions.cwd_match import CwdMatcher
from transcript_reader.sessions.entry import SessionEntry, SessionStats
from transcript_reader.sessions.fill import compute_stats
from transcript_reader.sessions.head_reads import read_head_tail, read_many
from transcript_reader.sessions.session_homes import Homes, codex, files, provider_of, sources, thread_names
from transcript_reader.sessions.session_homes import where as searched
from transcript_reader.sessions.session_tree import nest
from transcript_reader.timestamps import parse_time

if TYPE_CHECKING:
    from transcript_reader.sessions.stored import Stored

#: Re-exported: the CLI and the MCP server import these from here.
__all__ = ["Scope", "SessionEntry", "SessionStats",
           "compute_stats", "iter_session_files", "list_sessions",
           "load_session_index", "parse_time", "parse_when", "read_entry", "resolve_session", "session_ids",
           "unique_prefixes", "CwdMatcher"]

_LAST = re.compile(r"^last(?:~(\d+))?$")


def load_session_index(codex_home: str | os.PathLike[str]) -> dict[str, str]:
    """The names given to the sessions of a Codex home, by session id (its provider reads them)."""
    return codex().session_names(Path(codex_home))  # type: ignore[no-any-return]


def iter_session_files(codex_home: str | os.PathLike[str], scope: str = Scope.LIVE) -> Iterator[tuple[Path, bool]]:
    """``(path, archived)`` for every session file of the scope under ``codex_home`` (the provider's
    layout), the plain file winning over its ``.zst`` twin. Order is unspecified (the caller sorts)."""
    return ((Path(p), archived) for p, archived in codex().session_files(Path(codex_home), scope))


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


def _matches_grep(entry: SessionEntry, needle: str) -> bool:
    hay = " ".join(
        x for x in (entry.name, entry.head.title, entry.head.cwd, entry.session_id, entry.head.model,
                    entry.head.agent_nickname, Path(entry.path).name) if x
    )
    return needle.lower() in hay.lower()


def read_entry(path: str | Path, archived: bool, names: dict[str, str], provider: Provider | None = None, *,
               source: Descriptor | None = None) -> SessionEntry:
    """One row from the head and tail of a file (read by ``provider``, else the file's detected one);
    ``source`` is ``path`` already opened, read through."""
    path = os.fspath(path)
    st = source.stat() if source is not None else os.stat(path)
    return _entry(path, archived, names, provider, st, source=source)


def _entry(path: str, archived: bool, names: dict[str, str], provider: Provider | None, st: os.stat_result, *,
           source: Descriptor | None = None, read: tuple[SessionHead, SessionTail] | None = None,
           stats: SessionStats | None = None) -> SessionEntry:
    """The row of a file whose ``st`` is known; ``read`` is its head and tail found already (in the
    session store, or read by ``head_reads.read_many``), else read here."""
    if not stat.S_ISREG(st.st_mode):
        # iter_session_files skips non-regular files; a FIFO swapped in since must not block the read.
        return SessionEntry(path=path, archived=archived, size=st.st_size, mtime_ns=st.st_mtime_ns,
                            head=SessionHead(format=None, error="cannot read: not a regular file"))
    if read is not None:
        head, tail = read
    else:
        readable: Path | Descriptor = source if source is not None else Path(path)
        head, tail = read_head_tail(provider if provider is not None else provider_of(Path(path)), readable)
    entry = SessionEntry(path=path, archived=archived, size=st.st_size, mtime_ns=st.st_mtime_ns, head=head,
                         tail=tail)
    sid = entry.session_id
    name = names.get(sid) if sid else None
    if name is not None or stats is not None:
        entry = SessionEntry(path=entry.path, archived=archived, size=entry.size, mtime_ns=entry.mtime_ns,
                             head=head, tail=tail, name=name, stats=stats)
    return entry


def _sort_key(e: SessionEntry) -> tuple[float, str]:
    t = e.started
    return (t.timestamp() if t else e.mtime_ns / 1e9, e.path)


def _unreadable(e: SessionEntry) -> bool:
    return (e.head.error or "").startswith("cannot read")


def list_sessions(
    codex_home: str | os.PathLike[str] | None,
    *,
    scope: str = Scope.LIVE,
    cwd: str | None = None,
    since: datetime | None = None,
    until: datetime | None = None,
    grep: str | None = None,
    limit: int | None = None,
    with_stats: bool = False,
    progress: Callable[[int, int], None] | None = None,
    homes: Homes | None = None,
    opener: Callable[[Path], Descriptor | None] | None = None,
    workers: int = 1,
    store_dir: str | os.PathLike[str] | None = None,
    notice: Callable[[str], None] | None = None,
) -> list[SessionEntry]:
    """Sessions newest first, each sub-agent (``source.subagent.thread_spawn.parent_thread_id``) or
    fork (``forked_from_id``) right under its parent (``depth`` 1) when the parent is listed too;
    every session exactly once, whatever its parent links say (a cycle, itself, a missing or
    filtered-out parent: top-level with a ``parent_note``).

    ``cwd`` keeps sessions whose cwd is that directory or below it, as given or with symlinks resolved
    on either side (:class:`CwdMatcher`; sessions that recorded no cwd, such as the TS CLI's, then never
    match); ``None`` keeps every project. ``limit`` counts top-level rows.
    ``store_dir``: where the homes' session stores live; the listing refreshes them (a first build
    reads every session, ``progress(done, total)`` follows it, ``notice`` gets one-line notes) and takes
    its rows from them. ``with_stats`` computes the whole-read figures a row lacks (no store, or a file
    the store could not take). ``homes``: several providers' homes
    (``{"codex": …, "claude": …}``), else ``codex_home`` alone.
    ``opener`` (the MCP server's root policy) opens each file found before anything of it is read, or
    refuses it (None: the file is left out, unread); head and tail are then read through that descriptor
    only, which is closed after. Whole-read figures are not computed for such a listing (``with_stats``
    reads by name): its caller computes them through its own opener.
    ``workers`` > 1 reads many files (the store's build, or heads) in that many processes
    (``head_reads``; the CLI passes the number of cores)."""
    if scope not in (Scope.LIVE, Scope.ARCHIVED, Scope.ALL):
        raise InvalidArgumentError(f"unknown scope {scope!r}")
    names = thread_names(codex_home, homes)
    entries: list[SessionEntry] = []
    seen: set[str] = set()
    in_project = CwdMatcher(cwd) if cwd is not None else None

    def keep(e: SessionEntry) -> bool:
        if in_project is not None and not in_project(e.head.cwd) and not _unreadable(e):
            return False  # a file that cannot be read has no known cwd: it is listed (with its error), not hidden
        t = e.started
        if since is not None and (t is None or t < since):
            return False
        if until is not None and (t is None or t > until):
            return False
        return not grep or _matches_grep(e, grep)

    if store_dir is not None and opener is None:
        from transcript_reader.sessions.stored import list_stored

        every, seen, _done = list_stored(sources(codex_home, homes), scope, Path(store_dir), workers=workers,
                                         progress=progress, notice=notice, names=names,
                                         from_file=lambda found: _from_files(found, names, workers))
        entries = [e for e in every if keep(e)]
    else:
        stored = None
        if store_dir is not None:  # a listing through an opener reads the store, never writes it
            from transcript_reader.sessions.stored import read_stored

            stored = read_stored(sources(codex_home, homes), Path(store_dir))
        entries = _walk_files(codex_home, scope, homes, names, stored, opener, workers, keep, seen)
    entries = _one_row_per_thread(entries)
    entries.sort(key=_sort_key, reverse=True)
    ordered = nest(entries, _sort_key)
    if limit is not None:
        ordered = _limit_top_level(ordered, limit)
    if with_stats:
        ordered = _fill_stats(ordered, progress)
    return ordered


def _walk_files(codex_home: str | os.PathLike[str] | None, scope: str, homes: Homes | None, names: dict[str, str],
                stored: dict[str, Stored] | None, opener: Callable[[Path], Descriptor | None] | None, workers: int,
                keep: Callable[[SessionEntry], bool], seen: set[str]) -> list[SessionEntry]:
    """The rows of every session file, each from its head and tail; through ``opener``, a file whose
    opened version is the one ``stored`` (the session store's rows) holds takes that row, figures and all."""
    entries: list[SessionEntry] = []
    found: list[tuple[Provider, str, bool, os.stat_result]] = []
    for provider, path, archived in files(codex_home, scope, homes):
        seen.add(path)
        if opener is None:
            try:
                found.append((provider, path, archived, os.stat(path)))
            except OSError:
                pass  # vanished between listing and stat (a session being archived)
            continue
        source = opener(Path(path))
        if source is None:
            continue
        try:
            st = source.stat()
            got = stored.get(path) if stored else None
            if got is not None and got[0] == (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns):
                e = _entry(path, archived, names, provider, st, read=(got[1], got[2]), stats=got[3])
            else:
                e = _entry(path, archived, names, provider, st, source=source)
        except OSError:
            continue
        finally:
            source.close()
        if keep(e):
            entries.append(e)
    entries.extend(e for e in _from_files(found, names, workers) if keep(e))
    return entries


def _from_files(found: list[tuple[Provider, str, bool, os.stat_result]], names: dict[str, str],
                workers: int) -> list[SessionEntry]:
    """Rows of files read from their head and tail, together: in parallel when there are many."""
    misses = [(provider, path) for provider, path, _a, st in found if stat.S_ISREG(st.st_mode)]
    fresh = dict(zip((path for _p, path in misses), read_many(misses, workers), strict=True)) if misses else {}
    return [_entry(path, archived, names, provider, st, read=fresh.get(path)) for provider, path, archived, st in found]


def _one_row_per_thread(entries: list[SessionEntry]) -> list[SessionEntry]:
    """One row per thread: the files of one thread (a base and the segments Codex writes after a
    rewind share its id, a segment is named ``…-<thread id>_<segment id>.jsonl``) are one session. The row is the newest file (``read <id>`` reads the whole
    thread from it), started when the oldest started, titled by the oldest's first prompt."""
    groups: dict[str, list[SessionEntry]] = {}
    out: list[SessionEntry] = []
    for e in entries:
        sid = e.session_id
        if sid is None:
            out.append(e)
        else:
            groups.setdefault(sid.lower(), []).append(e)
    for group in groups.values():
        if len(group) == 1 or not any(_is_segment(g.path) for g in group):
            # files that only share an id (a copied file, 0.29's resume copies) keep their own rows
            out.extend(group)
            continue
        group.sort(key=_sort_key)
        oldest, newest = group[0], max(group, key=lambda g: (not g.archived, g.mtime_ns, g.path))
        head = dataclasses.replace(newest.head, timestamp=oldest.head.timestamp or newest.head.timestamp,
                                   title=next((g.head.title for g in group if g.head.title), None))
        out.append(_with(newest, head=head, thread_files=tuple(g.path for g in group)))
    return out


def _is_segment(path: str) -> bool:
    """A segment file of a thread (a Codex thread continued in another file after a rewind)."""
    return codex().is_thread_segment(Path(path))  # type: ignore[no-any-return]


def _with(e: SessionEntry, **changes: object) -> SessionEntry:
    return dataclasses.replace(e, **changes)  # type: ignore[arg-type]


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


def _fill_stats(entries: list[SessionEntry], progress: Callable[[int, int], None] | None) -> list[SessionEntry]:
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
                e = _with(e, stats=stats)
        out.append(e)
    return out


def _file_id(path: str, provider: Provider | None = None) -> str:
    sid = (provider or codex()).session_id_from_name(os.path.basename(path))
    return sid.lower() if sid else path


def resolve_session(
    ref: str,
    codex_home: str | os.PathLike[str] | None,
    *,
    cwd: str | None = None,
    scope: str = Scope.ALL,
    homes: Homes | None = None,
) -> SessionEntry:
    """A session from an id, a unique id prefix (at least 4 characters), a thread name, ``last`` or
    ``last~N`` (N sessions before the latest; counted among top-level sessions of the project ``cwd``,
    or of every project when ``cwd`` is None), looked up under ``codex_home`` or every home of
    ``homes``. Raises ``SessionNotFoundError`` naming what was tried."""
    m = _LAST.match(ref.strip())
    if m:
        n = int(m.group(1) or 0)
        rows = [e for e in list_sessions(codex_home, scope=Scope.LIVE, cwd=cwd, homes=homes) if e.depth == 0]
        if n < len(rows):
            return rows[n]
        where = f" under {cwd}" if cwd else ""
        have = f"only {len(rows)} session(s)" if rows else "no session"
        raise SessionNotFoundError(f"{ref}: {have}{where} in {searched(codex_home, homes)}"
                                   + (" (ls --all-projects lists every project)" if cwd else ""))
    needle = ref.strip().lower()
    if len(needle) < 4:
        raise SessionNotFoundError(f"{ref!r}: a session id prefix needs at least 4 characters")
    names = thread_names(codex_home, homes)
    hits: list[tuple[str, bool, Provider]] = []
    for provider, path, archived in files(codex_home, scope, homes):
        fid = (provider.session_id_from_name(os.path.basename(path)) or "").lower() or None
        if fid is not None and fid.startswith(needle):
            hits.append((path, archived, provider))
    if not hits:
        # Files named without an id (or ids that differ from the file name): fall back to heads,
        # and to thread names from the index.
        by_name = [sid for sid, nm in names.items() if nm.lower() == needle]
        for provider, path, archived in files(codex_home, scope, homes):
            try:
                if not stat.S_ISREG(os.stat(path).st_mode):
                    continue  # swapped for a FIFO since the listing: read_head would block
                h = provider.read_head(Path(path))
            except OSError:
                continue
            sid = (h.session_id or "").lower()
            if sid and (sid.startswith(needle) or sid in (s.lower() for s in by_name)):
                hits.append((path, archived, provider))
    if not hits:
        raise SessionNotFoundError(f"no session matches {ref!r} in {searched(codex_home, homes)}")
    ids = {_file_id(p, prov) for p, _, prov in hits}
    if len(ids) > 1:
        sample = ", ".join(sorted(ids)[:5])
        raise SessionNotFoundError(f"{ref!r} is ambiguous: {len(ids)} sessions match ({sample})")
    if len(hits) > 1 and not any(_is_segment(p) for p, _a, _prov in hits):
        # Files that share an id without being one thread (a copied file, 0.29's resume copies): which
        # one was meant is not ours to guess.
        listed = "; ".join(f"{p}{' (archived)' if a else ''}" for p, a, _prov in sorted(hits))
        raise SessionNotFoundError(f"{ref!r} is ambiguous: session {sorted(ids)[0]} is in {len(hits)} files: "
                                   f"{listed} (give the file's path)")
    # One thread in several files (a base and the segments written after a rewind): its newest file
    # reads the whole thread.
    path, archived, provider = max(hits, key=lambda h: (not h[1], os.stat(h[0]).st_mtime_ns))
    return read_entry(path, archived, names, provider=provider)


def session_ids(codex_home: str | os.PathLike[str] | None, scope: str = Scope.ALL,
                homes: Homes | None = None) -> set[str]:
    """Every session id ``resolve_session`` matches a prefix against: the ids in the file names of the
    scope (lower case). A directory walk only, no file is opened."""
    out: set[str] = set()
    for provider, path, _archived in files(codex_home, scope, homes):
        sid = provider.session_id_from_name(os.path.basename(path))
        if sid:
            out.add(sid.lower())
    return out


def unique_prefixes(ids: Iterable[str], universe: Iterable[str] = (), *, min_len: int = 8) -> dict[str, str]:
    """For each of ``ids``, its shortest prefix (at least ``min_len`` characters) that no other id of
    ``ids`` or ``universe`` starts with, so that ``resolve_session`` resolves it to that session. The
    universe must hold every id the resolver sees (``session_ids``), not only the rows shown,
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


