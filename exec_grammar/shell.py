"""Shell wrappers: the command a person typed, from the argv or the command line Codex ran it with.

Codex runs a model's command through the user's shell: ``["/bin/bash", "-lc", CMD]`` on Linux and macOS
(any shell path: ``/opt/homebrew/bin/zsh``, ``/usr/local/bin/bash``), ``[".../powershell.exe",
"-NoProfile", "-Command", CMD]`` or ``["...\\pwsh.exe", "-Command", CMD]`` on Windows (``-NoProfile``
only for a non-login shell), ``["...\\cmd.exe", "/c", CMD]`` when the shell is cmd (codex-rs
``shell_command``: ``ShellType::PowerShell`` / ``ShellType::Cmd``). Records and ``exec --json`` streams
show that wrapped form, while a script's ``tools.exec_command({cmd})`` shows ``CMD`` alone, so a reader
must unwrap both the same way to pair them: otherwise every script command of a Windows session
reported as not run (``executed: "no"``) beside an unpaired copy, because only ``bash -lc`` was
unwrapped. One owner here, used by the script entries (``tools.shell({command: argv})``) and by every
decoder of the reader.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Sequence

__all__ = ["POSIX_SHELLS", "command_from_argv", "posix_split", "shell_name", "unwrap_command", "wrapped_command"]

#: Shells whose ``-c``/``-lc`` flag takes the whole command as one argument.
POSIX_SHELLS = frozenset({"bash", "sh", "zsh", "dash", "ksh", "fish"})
_POSIX_FLAGS = frozenset({"-lc", "-c", "-l -c", "-ic"})
_POWERSHELLS = frozenset({"powershell", "pwsh"})
#: Switches Codex (or a person) puts before ``-Command``; each takes no value.
_POWERSHELL_SWITCHES = frozenset({"-noprofile", "-nologo", "-noninteractive"})
_COMMAND_FLAGS = frozenset({"-command", "-c"})

#: The first word of a command line (a quoted path may hold spaces: ``"C:\\Program Files\\...\\pwsh.exe"``).
_FIRST_WORD = re.compile(r"""(?:"([^"]*)"|'([^']*)'|([^\s"']+))\s""")


def shell_name(program: str) -> str:
    """``/opt/homebrew/bin/zsh`` -> ``zsh``; ``C:\\Windows\\...\\PowerShell.EXE`` -> ``powershell``."""
    base = re.split(r"[/\\]", program)[-1]
    lower = base.lower()
    if lower.endswith(".exe"):
        return lower[:-4]
    # POSIX names are case-sensitive (``Bash`` is not bash); Windows ones are not
    return lower if lower in _POWERSHELLS or lower == "cmd" else base


def wrapped_command(argv: Sequence[str]) -> str | None:
    """The wrapped command of a shell invocation, or None when ``argv`` is not one."""
    n = len(argv)
    if n < 3:
        return None
    name = shell_name(argv[0])
    if name in POSIX_SHELLS:
        return argv[2] if n == 3 and argv[1] in _POSIX_FLAGS else None
    if name in _POWERSHELLS:
        # ``-Command`` takes the rest of the line: ``pwsh -Command python -m pytest`` runs
        # ``python -m pytest`` (Codex passes it as one argument; people type it unquoted)
        for k in range(1, n - 1):
            flag = argv[k].lower()
            if flag in _COMMAND_FLAGS:
                return " ".join(argv[k + 1:])
            if flag not in _POWERSHELL_SWITCHES:
                return None
        return None
    if name == "cmd" and argv[1].lower() == "/c":
        return " ".join(argv[2:])  # cmd /c runs the rest of the line
    return None


def command_from_argv(argv: Sequence[str]) -> str:
    """The command as a person would type it: the inner command of a shell wrapper, else the argv
    shell-quoted and joined (``["git", "status"]`` -> ``git status``)."""
    inner = wrapped_command(argv)
    return inner if inner is not None else shlex.join(argv)


_PLAIN = re.compile(r"[^ \t\r\n'\"\\\\]+")
_PLAIN_WINDOWS = re.compile(r"[^ \t\r\n'\"]+")
_DQ_SPECIAL = re.compile(r'["\\\\]')
#: Quoted runs of a command line (POSIX: ``"…"`` with backslash escapes, ``'…'`` literal).
_QUOTED = re.compile(r"'[^']*'" + r'|"(?:[^"\\]|\\[\s\S])*"')


def posix_split(command: str) -> list[str] | None:
    """``shlex.split(command)`` (POSIX rules: backslash escapes outside quotes, ``'…'`` literal, ``"…"``
    where only ``\\"`` and ``\\\\`` are escapes), in linear time: ``shlex`` grows each word one
    character at a time and took seconds on a 1 MB ``bash -lc "cat <<EOF …"`` command. None
    where ``shlex`` raises (an unclosed quote, a trailing backslash)."""
    return _split(command, windows=False)


def _split(command: str, windows: bool) -> list[str] | None:
    """Words of a command line: POSIX rules, or (``windows``) quotes without backslash escapes, so
    ``C:\\repo\\x.exe`` keeps its backslashes. None when the quotes do not balance."""
    words: list[str] = []
    buf: list[str] = []
    in_word = False
    i, n = 0, len(command)
    plain = _PLAIN_WINDOWS if windows else _PLAIN
    while i < n:
        c = command[i]
        if c in " \t\r\n":
            if in_word:
                words.append("".join(buf))
                buf, in_word = [], False
            i += 1
            continue
        in_word = True
        if c == "'" or (windows and c == '"'):
            j = command.find(c, i + 1)
            if j < 0:
                return None
            buf.append(command[i + 1:j])
            i = j + 1
        elif c == '"':
            i += 1
            while True:
                m = _DQ_SPECIAL.search(command, i)
                if m is None:
                    return None
                k = m.start()
                buf.append(command[i:k])
                if command[k] == '"':
                    i = k + 1
                    break
                if k + 1 >= n:
                    return None
                nxt = command[k + 1]
                buf.append(nxt if nxt in '"\\' else "\\" + nxt)
                i = k + 2
        elif c == "\\" and not windows:
            if i + 1 >= n:
                return None
            buf.append(command[i + 1])
            i += 2
        else:
            m = plain.match(command, i)
            end = m.end() if m is not None else i + 1
            buf.append(command[i:end])
            i = end
    if in_word:
        words.append("".join(buf))
    return words


def unwrap_command(command: str) -> str:
    """``/bin/bash -lc 'ls'`` -> ``ls``; ``"C:\\...\\powershell.exe" -NoProfile -Command dir`` -> ``dir``;
    any other command line stripped and unchanged (exec streams and records print the wrapper)."""
    s = command.strip()
    m = _FIRST_WORD.match(s)
    if m is None:
        return s
    name = shell_name(m.group(1) or m.group(2) or m.group(3) or "")
    if name not in POSIX_SHELLS and name not in _POWERSHELLS and name != "cmd":
        return s  # most commands are not wrapped
    # POSIX quoting first: Codex writes its command lines with it, Windows paths included (rust
    # shlex::try_join double-quotes them with escaped backslashes); then the Windows reading
    # (quotes, no escapes), for a line a person typed (``C:\\x\\pwsh.exe -Command dir``)
    order = (False, True)
    if (name in _POWERSHELLS or name == "cmd") and "\\" in _QUOTED.sub("", s):
        # a backslash outside quotes: Codex's lines never hold one, so a person typed this Windows line
        # (``cmd /c dir C:\\repo``) and POSIX rules would eat its path separators
        order = (True, False)
    for windows in order:
        words = _split(s, windows)
        if words:
            inner = wrapped_command(words)
            if inner is not None:
                return inner
    return s
