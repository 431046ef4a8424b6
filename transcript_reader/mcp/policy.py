"""What the server may read, and how it opens it: once, by descriptor, then proven against the roots.

Why it is built this way: a check on a path followed by an open of the same path reads
whatever the name leads to at the open; swapping a directory for a symlink in between read a transcript
outside the roots. So a file is opened once, and the *descriptor* is judged: its real path (the kernel's,
from ``/proc/self/fd``) must lie under a root and name the same device and inode, it must be a regular
file with one hard link (a second link inside a root may lead to a file outside it), and everything after
(sniff, head, read) goes through that descriptor (:class:`transcript_reader.reading.source.Descriptor`). A cheap
check on the resolved name runs first so that nothing outside the roots is ever opened in the common case
(a device's open can have effects), and so that a refusal never says whether an outside file exists.

Errors echo the path as the caller gave it, never a resolved one: ``/proc/self/cwd`` must not reveal the
server's working directory, nor ``/proc/self/exe`` its interpreter.

Where a path is taken, a session reference is too: an id, a unique id prefix, a rollout file name, a
thread name, ``last`` or ``last~N``; each resolves among the sessions of ``$CODEX_HOME`` that lie inside
the roots (the same listing ``agent_transcript_list_sessions`` gives), never anywhere else.
"""

from __future__ import annotations

import os
import re
import stat
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from transcript_reader.mcp.names import MIB, WIRE_OURS, ErrorCode, ToolFailure

if TYPE_CHECKING:
    from transcript_reader.reading.source import Descriptor
    from transcript_reader.sessions.discovery import SessionEntry

#: Pseudo file systems whose "regular files" are not files (``/proc/self/environ`` stats as S_ISREG).
PSEUDO_ROOTS = ("/proc", "/sys", "/dev")

_LAST = re.compile(r"last(?:~(\d{1,6}))?\Z")
_ID_PREFIX = re.compile(r"[0-9a-fA-F][0-9a-fA-F-]{3,35}\Z")


@dataclass(frozen=True, slots=True)
class ServerConfig:
    """What the server may read and how long a call may take. Built by the CLI (which reads
    ``$CODEX_HOME``); the server never reads the environment itself."""

    codex_home: Path | None = None
    #: Claude Code's home (``$CLAUDE_CONFIG_DIR`` or ``~/.claude``): its ``projects/`` are listed too.
    claude_home: Path | None = None
    allow_roots: tuple[Path, ...] = ()
    allow_any_path: bool = False
    max_file_bytes: int = 2048 * MIB
    #: Time budget of one tool call (reading, listing, analysing); over it the call is ``timeout``.
    call_timeout_s: float = 60.0
    #: Where the session stores live (the CLI's cache directory): listings take rows from them.
    store_dir: Path | None = None
    #: Wire profile: ours, or ``agent-code`` (the origin's exact shapes).
    wire: str = WIRE_OURS
    #: Streamable HTTP: a session idle this long is closed; at most this many live at once.
    http_idle_s: float = 300.0
    http_max_sessions: int = 32

    def roots(self) -> tuple[str, ...]:
        """Allowed roots, symlinks resolved (a ``~/.codex`` that is a symlink still contains its files)."""
        found = [self.codex_home] if self.codex_home is not None else []
        if self.claude_home is not None:  # only its transcripts: not its settings or credentials
            found.append(self.claude_home / "projects")
        found.extend(self.allow_roots)
        return tuple(os.path.realpath(os.path.expanduser(r)) for r in found)

    def deadline(self) -> float:
        return time.monotonic() + self.call_timeout_s


def inside(path: str, roots: tuple[str, ...]) -> bool:
    return any(path == root or path.startswith(root.rstrip(os.sep) + os.sep) for root in roots)


def _pseudo(path: str) -> bool:
    return inside(path, PSEUDO_ROOTS)


def _outside(display: str, config: ServerConfig) -> ToolFailure:
    where = ", ".join(config.roots()) or "(none configured)"
    return ToolFailure(
        ErrorCode.OUTSIDE_ALLOWED_ROOTS,
        f"{display} is outside the allowed roots ({where}); start the server with --allow-root DIR "
        "or --allow-any-path",
    )


def _fd_path(fd: int) -> str | None:
    """The kernel's path of an open descriptor, or None where ``/proc`` cannot tell."""
    try:
        return os.readlink(f"/proc/self/fd/{fd}")
    except OSError:
        return None


def open_verified(candidate: str, display: str, config: ServerConfig, *, deadline: float | None = None,
                  whole: bool = True) -> Descriptor:
    """Open ``candidate`` (an absolute path) once and prove the descriptor is an allowed transcript;
    raise :class:`ToolFailure` naming ``display`` otherwise. The caller closes the result. ``whole``: the
    caller reads the whole file, so the size cap applies to what a ``.zst`` decompresses to (a listing,
    which reads a bounded head of each file, passes False)."""
    from transcript_reader.reading.source import Descriptor

    roots = config.roots()
    try:
        named = os.path.realpath(candidate)
    except OSError:  # a link we may not follow (/proc/1/cwd), or one removed while it was being resolved
        if not config.allow_any_path and not inside(os.path.normpath(candidate), roots):
            raise _outside(display, config) from None
        raise ToolFailure(ErrorCode.NOT_A_FILE, f"{display} cannot be resolved") from None
    if not config.allow_any_path and not inside(named, roots):
        raise _outside(display, config)
    if _pseudo(named) or _pseudo(os.path.normpath(candidate)):  # /proc/self/exe leads out of /proc: still not a file
        raise ToolFailure(ErrorCode.NOT_A_FILE, f"{display} is on a pseudo file system, not a regular file")
    try:
        fd = os.open(candidate, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | getattr(os, "O_NOCTTY", 0))
    except (FileNotFoundError, NotADirectoryError):
        raise ToolFailure(ErrorCode.FILE_NOT_FOUND, f"{display} does not exist") from None
    except PermissionError:
        raise ToolFailure(ErrorCode.PERMISSION_DENIED, f"{display} cannot be read: permission denied") from None
    except OSError as exc:  # ELOOP, ENAMETOOLONG, EISDIR…
        raise ToolFailure(ErrorCode.NOT_A_FILE, f"{display} cannot be opened: {exc.strerror}") from None
    try:
        _judge(fd, named, display, config, roots)
        source = Descriptor(fd, display, deadline=deadline)
        if whole:
            _judge_inflated(source, config)
    except BaseException:
        os.close(fd)
        raise
    return source


def _judge_inflated(source: Descriptor, config: ServerConfig) -> None:
    """The size cap on decompressed bytes: a 64 KB ``.zst`` that inflates to gigabytes is as large as
    the gigabytes (decompressed up to the cap to find out, within the call's budget)."""
    from transcript_reader.errors import ReadTimeoutError
    from transcript_reader.reading.source import inflates_past

    try:
        over = inflates_past(source, config.max_file_bytes)
    except ReadTimeoutError:
        raise ToolFailure(ErrorCode.TIMEOUT, f"{source.display}: over the server's time budget while measuring "
                          "its decompressed size; raise --call-timeout") from None
    if over:
        raise ToolFailure(
            ErrorCode.TOO_LARGE,
            f"{source.display} decompresses to more than the server's limit of "
            f"{config.max_file_bytes / MIB:.0f} MiB (--max-file-mb)",
        )


def _judge(fd: int, named: str, display: str, config: ServerConfig, roots: tuple[str, ...]) -> None:
    st = os.fstat(fd)
    real = _fd_path(fd) or named  # without /proc (not Linux) the name's resolution is all there is
    if not config.allow_any_path and not inside(real, roots):
        raise _outside(display, config)  # the name led out of the roots between the check and the open
    if _pseudo(real):
        raise ToolFailure(ErrorCode.NOT_A_FILE, f"{display} is on a pseudo file system, not a regular file")
    if not stat.S_ISREG(st.st_mode):
        what = "a directory" if stat.S_ISDIR(st.st_mode) else "not a regular file"
        raise ToolFailure(ErrorCode.NOT_A_FILE, f"{display} is {what}")
    if st.st_nlink > 1 and not config.allow_any_path:
        raise ToolFailure(
            ErrorCode.HARD_LINKED,
            f"{display} has {st.st_nlink} hard links; refused because another link may lie outside the "
            "allowed roots (Codex never hard-links its rollouts)",
        )
    try:
        again = os.stat(real, follow_symlinks=False)
    except OSError:
        again = None
    if again is None or (again.st_dev, again.st_ino) != (st.st_dev, st.st_ino):
        raise ToolFailure(ErrorCode.NOT_A_FILE, f"{display} changed while it was being opened")
    if st.st_size > config.max_file_bytes:
        raise ToolFailure(
            ErrorCode.TOO_LARGE,
            f"{display} is {st.st_size / MIB:.1f} MiB, over the server's limit of "
            f"{config.max_file_bytes / MIB:.0f} MiB (--max-file-mb)",
        )


def admit(config: ServerConfig, deadline: float | None) -> Callable[[Path], Descriptor | None]:
    """The listing's opener: each file found is opened and judged before anything of it is read; a
    refused one is left out, unread and uncounted. Past ``deadline`` the listing stops (``timeout``)."""

    def opener(path: Path) -> Descriptor | None:
        if deadline is not None and time.monotonic() > deadline:
            from transcript_reader.errors import ReadTimeoutError

            raise ReadTimeoutError("the listing ran over its time budget")
        try:
            return open_verified(str(path), str(path), config, deadline=deadline, whole=False)
        except ToolFailure:
            return None

    return opener


def homes(config: ServerConfig, provider: str = "all") -> dict[str, Path]:
    """The homes a listing walks: each provider's the server knows, or only ``provider``'s."""
    known = {"codex": config.codex_home, "claude": config.claude_home}
    return {name: home for name, home in known.items()
            if home is not None and provider in ("all", "auto", name)}


def _homes_label(config: ServerConfig) -> str:
    return "$CODEX_HOME or the Claude Code home" if config.claude_home is not None else "$CODEX_HOME"


def listed_sessions(config: ServerConfig, cache: Any, deadline: float | None, *,
                    archived: bool = True, provider: str = "all") -> list[SessionEntry]:
    """Every session of ``$CODEX_HOME`` and of Claude Code's home inside the roots, newest first
    (sub-agents under their parent); ``provider`` keeps one provider's."""
    from transcript_reader.sessions import discovery

    walked = homes(config, provider)
    if not walked:
        which = {"codex": "$CODEX_HOME", "claude": "Claude Code home"}.get(provider, "$CODEX_HOME or Claude Code home")
        raise ToolFailure(ErrorCode.INVALID_ARGUMENT, f"the server has no {which} to find sessions in")
    scope = discovery.Scope.ALL if archived else discovery.Scope.LIVE
    # rows from the session store where the file opened is the version it holds (figures included);
    # the server reads the store, never writes it (``ls`` and ``browse`` keep it in step)
    return discovery.list_sessions(config.codex_home, scope=scope, homes=walked, store_dir=config.store_dir,
                                   opener=admit(config, deadline))


def is_reference(text: str) -> bool:
    """True when a path argument names a session rather than a file: no directory part at all."""
    return "/" not in text and not text.startswith(("~", "."))


def resolve_reference(ref: str, config: ServerConfig, cache: Any, deadline: float | None) -> str:
    """The listed path of the session ``ref`` names: ``last``/``last~N`` (top-level live sessions, newest
    first), a rollout file name, a unique prefix of a session id (4+ characters), or a thread name."""
    entries = listed_sessions(config, cache, deadline)
    m = _LAST.match(ref)
    if m:
        n = int(m.group(1) or 0)
        rows = [e for e in entries if e.depth == 0 and not e.archived]
        if n < len(rows):
            return rows[n].path
        have = f"only {len(rows)} session(s)" if rows else "no session"
        raise ToolFailure(ErrorCode.SESSION_NOT_FOUND, f"{ref}: {have} under {_homes_label(config)}")
    by_file = [e for e in entries if Path(e.path).name == ref]
    if by_file:
        return by_file[0].path
    needle = ref.lower()
    hits = [e for e in entries if _ID_PREFIX.match(ref) and (e.session_id or "").lower().startswith(needle)]
    if not hits:
        hits = [e for e in entries if (e.name or "").lower() == needle]
    if not hits:
        hint = " (a session id prefix needs at least 4 characters)" if len(ref) < 4 else ""
        raise ToolFailure(ErrorCode.SESSION_NOT_FOUND,
                          f"no session matches {ref!r} under {_homes_label(config)}{hint}; "
                          "agent_transcript_list_sessions lists them")
    ids = {(e.session_id or e.path).lower() for e in hits}
    if len(ids) > 1:
        raise ToolFailure(ErrorCode.SESSION_NOT_FOUND,
                          f"{ref!r} is ambiguous: {len(ids)} sessions match; give more of the id")
    # one session, possibly as several files (a resumed 0.29 session): the live, newest one
    return max(hits, key=lambda e: (not e.archived, e.mtime_ns)).path


def open_argument(raw: object, config: ServerConfig, cache: Any = None, *,
                  deadline: float | None = None) -> Descriptor:
    """The transcript a tool's ``path`` argument names, opened and judged (see the module docstring)."""
    if not isinstance(raw, str) or not raw.strip():
        raise ToolFailure(ErrorCode.PATH_REQUIRED, "path is required: give a transcript path or a session id")
    if "\x00" in raw:
        raise ToolFailure(ErrorCode.INVALID_ARGUMENT, "path contains a NUL character")
    given = raw.strip()
    if is_reference(given):
        listed = resolve_reference(given, config, cache, deadline)
        return open_verified(listed, listed, config, deadline=deadline)
    candidate = os.path.expanduser(given)
    if not os.path.isabs(candidate):
        if config.codex_home is None:
            raise ToolFailure(ErrorCode.INVALID_ARGUMENT, f"{given}: give an absolute path")
        candidate = os.path.join(config.codex_home, candidate)  # relative paths are under $CODEX_HOME
    return open_verified(candidate, given, config, deadline=deadline)
