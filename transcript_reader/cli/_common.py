"""Helpers shared by CLI commands: where the sessions live, and turning a PATH argument into a file.

This is where the environment is read (``CODEX_HOME``, ``CLAUDE_CONFIG_DIR``, ``XDG_CACHE_HOME``, the
current directory):
the library only ever receives explicit paths.
"""

from __future__ import annotations

import contextlib
import errno
import functools
import gc
import json
import os
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

import click

if TYPE_CHECKING:  # rich is imported only by commands that render (ls --json and the MCP path skip it)
    from rich.console import Console

from transcript_reader.errors import SessionNotFoundError


def codex_home() -> Path:
    """``$CODEX_HOME``, else ``~/.codex`` (what Codex itself uses)."""
    env = os.environ.get("CODEX_HOME")
    return Path(env).expanduser() if env else Path.home() / ".codex"


def claude_home() -> Path:
    """``$CLAUDE_CONFIG_DIR``, else ``~/.claude`` (where Claude Code keeps ``projects/``)."""
    env = os.environ.get("CLAUDE_CONFIG_DIR")
    return Path(env).expanduser() if env else Path.home() / ".claude"


#: ``--provider`` values: one provider's sessions, or every provider's.
PROVIDERS = ("all", "codex", "claude")


def provider_option(f: Any) -> Any:
    """``--provider``: whose sessions a listing covers (``ls``, cross-session ``search``, ``browse``)."""
    return click.option("--provider", type=click.Choice(PROVIDERS), default="all", show_default=True,
                        help="Whose sessions: Codex ($CODEX_HOME), Claude Code ($CLAUDE_CONFIG_DIR), or both.")(f)


def homes(provider: str = "all") -> dict[str, Path]:
    """The home of each provider a listing covers (``--provider``; ``all``: Codex and Claude Code)."""
    every = {"codex": codex_home(), "claude": claude_home()}
    return every if provider == "all" else {provider: every[provider]}


def cache_dir() -> Path:
    """Where the session stores (one per home) and the other caches live:
    ``$XDG_CACHE_HOME/transcript-reader`` (``~/.cache/…``)."""
    env = os.environ.get("XDG_CACHE_HOME")
    base = Path(env).expanduser() if env else Path.home() / ".cache"
    return base / "transcript-reader"


def current_dir() -> str:
    """The project the user stands in: ``$PWD`` when it names the current directory (the path as the
    user typed it, symlinks kept, for messages), else the resolved cwd. Codex records the physical
    path (``getcwd()``); ``discovery.list_sessions`` matches a session against this path and its
    resolved form both, so standing in a symlinked directory still finds its sessions."""
    cwd = os.getcwd()
    pwd = os.environ.get("PWD")
    if pwd and os.path.isabs(pwd):
        try:
            if os.path.samefile(pwd, cwd):
                return pwd
        except OSError:
            pass
    return cwd


def _looks_like_path(arg: str) -> bool:
    return (os.sep in arg or arg.startswith(".") or arg.endswith((".jsonl", ".json", ".zst"))
            or (os.altsep is not None and os.altsep in arg))


def resolve_path_arg(arg: str, provider: str = "all") -> str:
    """Turn a PATH argument into a file path. An existing file is taken as given; something that looks
    like a path is returned as is (the reader then reports ``file_not_found``); anything else is a
    session reference: an id, a unique id prefix, a thread name, ``last`` or ``last~N`` (counted in
    the current project, like ``ls``), looked up under ``$CODEX_HOME`` and Claude Code's folder
    (``provider`` narrows it to one). Raises ``SessionNotFoundError``."""
    if os.path.exists(arg) or _looks_like_path(arg):
        return arg
    from transcript_reader.sessions.discovery import resolve_session

    found = {name: home for name, home in homes(provider).items() if home.is_dir()}
    if not found:
        raise SessionNotFoundError(f"{arg!r} is not a file, and {where_looked(codex_home())} (nor a Claude Code "
                                   f"folder at {claude_home()}) to look it up in (set CODEX_HOME to your Codex home)")
    return resolve_session(arg, None, cwd=current_dir(), homes=found).path


def where_looked(home: Path) -> str:
    """Where sessions were looked for, said so that a mistyped ``CODEX_HOME`` shows: ``there is no Codex
    home at /x (CODEX_HOME=/x)`` or ``no Codex session under <cwd> in <home>``."""
    env = os.environ.get("CODEX_HOME")
    if not home.is_dir():
        return f"there is no Codex home at {home} ({f'CODEX_HOME={env}' if env else 'the default, ~/.codex'})"
    return f"no Codex session under {current_dir()} in {home}"


def make_console(*, no_color: bool = False, stderr: bool = False) -> Console:
    """A rich console for this process: colour only on a terminal, never with ``--no-color`` or
    ``NO_COLOR`` (rich reads it), width from the terminal or ``COLUMNS``."""
    from rich.console import Console

    return Console(no_color=no_color or None, stderr=stderr, highlight=False, soft_wrap=False,
                   emoji=False)


#: errno values of a write that failed because of where the output goes, not because of a bug.
_OUTPUT_ERRNOS = frozenset(
    getattr(errno, name) for name in ("ENOSPC", "EDQUOT", "EFBIG", "EIO", "EROFS", "EBADF") if hasattr(errno, name)
)


def output_failed(err: BaseException) -> bool:
    """Whether ``err`` is a failed write of the output (``> /dev/full``, a full disk, a quota): an
    OSError naming no file (reads go through the library, which names the path and raises typed
    errors) with one of the errno values a write to a full or broken destination gives."""
    return isinstance(err, OSError) and err.filename is None and err.errno in _OUTPUT_ERRNOS


def _drop_stdout() -> None:
    """Point file descriptor 1 at /dev/null once stdout has failed, so the interpreter's final flush
    of what is still buffered cannot fail again (it would print "Exception ignored ..." at exit)."""
    try:
        fd = os.open(os.devnull, os.O_WRONLY)
        try:
            os.dup2(fd, sys.stdout.fileno())
        finally:
            os.close(fd)
    except (OSError, ValueError, AttributeError):
        pass  # no real descriptor (a test runner's capture): nothing to protect at exit


def _to_stderr(line: str) -> None:
    from transcript_reader.cli.output import echo

    try:
        echo(line, err=True)
    except (OSError, ValueError):
        pass  # stderr is gone too: the exit status is all that is left


def fast_json(obj: Any) -> str:
    """``obj`` as compact JSON, by orjson (``ls --json`` of 10,000 sessions spent a fifth of its time in
    the json module), or by the json module where orjson refuses a value (a file name that is not
    UTF-8 gives a lone surrogate; an integer beyond 64 bits). Safe on a terminal and always encodable
    (``clean_json``), the same value."""
    import orjson

    from transcript_reader.present.text import clean_json

    try:
        return clean_json(orjson.dumps(obj).decode("utf-8"))
    except TypeError:
        return clean_json(json.dumps(obj, ensure_ascii=False, separators=(",", ":")))


def fail(err: Exception, *, as_json: bool, code: str | None = None, stdout_ok: bool = True) -> NoReturn:
    """Report an error the way every command does: one ``Error:`` line on stderr (or the JSON error
    envelope on stdout with ``--json``) and exit 1. No traceback reaches the user. When stdout is what
    failed (``stdout_ok=False``, or the envelope cannot be written either: ``--json > /dev/full``
    raised a second traceback) the envelope goes to stderr instead."""
    from transcript_reader.errors import TranscriptError

    err_code = code or (err.code if isinstance(err, TranscriptError) else "error")
    message = str(err)
    if as_json:
        # imported here: render's imports are a large part of a quick command's start-up
        from transcript_reader.projections.render import error_to_dict

        envelope = json.dumps(error_to_dict(err_code, message))
        if stdout_ok:
            try:
                click.echo(envelope)
                sys.exit(1)
            except (OSError, ValueError):
                pass
        _drop_stdout()
        _to_stderr(envelope)
    else:
        if not stdout_ok:
            _drop_stdout()
        _to_stderr(f"Error: {message}")
    sys.exit(1)


def guard(as_json_param: str | None = "as_json") -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Wrap a command so that an unexpected exception (a bug) is one ``Error:`` line and exit 1, never a
    traceback (house rule); click's own exceptions, exits and Ctrl-C pass through. A failed write of the
    output (disk full) is reported on stderr as such, not as a bug. Apply it as the decorator closest
    to the function; ``as_json_param`` names the command's ``--json`` parameter (None: it has none)::

        @click.command("x")
        @click.option("--json", "as_json", is_flag=True)
        @guard()
        def x_cmd(as_json: bool) -> None: ...
    """

    def wrap(fn: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(fn)
        def inner(*args: Any, **kwargs: Any) -> Any:
            try:
                result = fn(*args, **kwargs)
                # Output still buffered fails here, inside the guard, not in the interpreter's exit flush.
                if sys.stdout is not None:
                    sys.stdout.flush()
                return result
            except (click.exceptions.ClickException, click.exceptions.Exit, click.exceptions.Abort, SystemExit):
                raise
            except KeyboardInterrupt:
                # Ctrl-C: stop quietly with the conventional status (128 + SIGINT), no "Aborted!"
                _drop_stdout()
                sys.exit(130)
            except BrokenPipeError:
                # the reader of the output went away (`show | head -1`, a pager quit): not an error
                _drop_stdout()
                sys.exit(0)
            except Exception as e:  # noqa: BLE001 - the last line of defence before the user
                from transcript_reader.errors import TranscriptError

                as_json = bool(kwargs.get(as_json_param)) if as_json_param else False
                if isinstance(e, TranscriptError):
                    fail(e, as_json=as_json)
                if isinstance(e, OSError) and output_failed(e):
                    fail(RuntimeError(f"cannot write the output: {e.strerror or e}"), as_json=as_json,
                         code="output_error", stdout_ok=False)
                fail(RuntimeError(f"internal error ({type(e).__name__}: {e}); please report it"), as_json=as_json,
                     code="internal_error")

        return inner

    return wrap


def exit_on_output_failure(run: Callable[[], Any]) -> Any:
    """Run the whole command line (``cli.main``) so that a failed write of what click prints by itself,
    outside any command's ``guard`` (``--help``, ``--version`` into ``> /dev/full``), is one ``Error:``
    line on stderr and exit 1 instead of a traceback. Other exceptions pass through."""
    try:
        return run()
    except OSError as e:
        if not output_failed(e):
            raise
        _drop_stdout()
        _to_stderr(f"Error: cannot write the output: {e.strerror or e}")
        sys.exit(1)


#: A count of items, characters or sessions: a usage error (exit 2) past what the reader can index
#: (``--tail 99999999999999999999`` was an OverflowError deep in a read).
COUNT_MAX = (1 << 31) - 1


@contextlib.contextmanager
def gc_paused() -> Iterator[None]:
    """A context in which Python's cycle collector does not run: a report over thousands of stored
    sessions makes tens of thousands of small records at once (none of them cyclic), and the
    collector's passes over them were a quarter of ``usage``'s time over 10,000 sessions. Restores
    the collector as it was."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def count_range(minimum: int = 0, maximum: int = COUNT_MAX) -> click.IntRange:
    return click.IntRange(minimum, maximum)


class FiniteFloatRange(click.FloatRange):
    """A ``FloatRange`` that also refuses ``nan`` (which every comparison lets through) and ``inf``."""

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        import math

        number = super().convert(value, param, ctx)
        if not math.isfinite(number):
            self.fail(f"{value!r} is not a finite number", param, ctx)
        return number


#: The read caps' flags (``source.ReadCaps``), in MiB: a bad value is a usage error (exit 2) before any
#: file is read. The upper bounds keep a cap a byte count the reader can hold (1 TiB).
_CAP_RANGE = click.IntRange(1, 1 << 20)


def caps_options(f: Callable[..., Any]) -> Callable[..., Any]:
    """``--max-line-mb`` and ``--max-inflated-mb``, given to the command as one ``caps`` argument (a
    ``source.ReadCaps``, or None when both are the defaults)."""
    from transcript_reader.reading.source import MAX_LINE_BYTES, MAX_ZSTD_BYTES

    @functools.wraps(f)
    def wrapper(*args: Any, max_line_mb: int, max_inflated_mb: int, **kwargs: Any) -> Any:
        from transcript_reader.reading.source import ReadCaps

        caps = ReadCaps(line_bytes=max_line_mb << 20, zstd_bytes=max_inflated_mb << 20)
        default = caps.line_bytes == MAX_LINE_BYTES and caps.zstd_bytes == MAX_ZSTD_BYTES
        return f(*args, caps=None if default else caps, **kwargs)  # None: the library's defaults (and shortcuts)

    wrapper = click.option(
        "--max-inflated-mb", type=_CAP_RANGE, default=MAX_ZSTD_BYTES >> 20, show_default=True,
        help="Decompress at most this many MiB of a .zst transcript; the rest is one unreadable entry.")(wrapper)
    wrapper = click.option(
        "--max-line-mb", type=_CAP_RANGE, default=MAX_LINE_BYTES >> 20, show_default=True,
        help="Longest line read, in MiB; a longer one is skipped (in bounded memory) as one unreadable line.")(wrapper)
    return wrapper
