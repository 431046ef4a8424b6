"""Shell wrappers: the command a person typed, from the argv or the command line Codex ran it with.

Codex runs a model's command through the user's shell: ``["/bin/bash", "-lc", CMD]`` on Linux and macOS
(any shell path: ``/opt/homebrew/bin/zsh``, ``/usr/local/bin/bash``), ``[".../powershell.exe",
"-NoProfile", "-Command", CMD]`` or ``["...\\pwsh.exe", "-Command", CMD]`` on Windows (``-NoProfile``
only for a non-login shell), ``["...\\cmd.exe", "/c", CMD]`` when the shell is cmd (codex-rs
``shell_command``: ``ShellType::PowerShell`` / ``ShellType::Cmd``). Records and ``exec --json`` streams
show that wrapped form, while a script's ``tools.exec_command({cmd})`` shows ``CMD`` alone, so a reader
must unwrap both the same way to pair them: QA F23 found every script command of a Windows session
reported as not run (``executed: "no"``) beside an unpaired copy, because only ``bash -lc`` was
unwrapped. One owner here, used by the script entries (``tools.shell({command: argv})``) and by every
decoder of the reader.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Sequence

__all__ = ["POSIX_SHELLS", "command_from_argv", "shell_name", "unwrap_command", "wrapped_command"]

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
        if argv[-2].lower() in _COMMAND_FLAGS and all(a.lower() in _POWERSHELL_SWITCHES for a in argv[1:-2]):
            return argv[-1]
        return None
    if name == "cmd" and n == 3 and argv[1].lower() == "/c":
        return argv[2]
    return None


def command_from_argv(argv: Sequence[str]) -> str:
    """The command as a person would type it: the inner command of a shell wrapper, else the argv
    shell-quoted and joined (``["git", "status"]`` -> ``git status``)."""
    inner = wrapped_command(argv)
    return inner if inner is not None else shlex.join(argv)


def _split(command: str, windows: bool) -> list[str] | None:
    """Words of a command line: POSIX rules, or (``windows``) quotes without backslash escapes, so
    ``C:\\repo\\x.exe`` keeps its backslashes. None when the quotes do not balance."""
    try:
        if not windows:
            return shlex.split(command)
        lex = shlex.shlex(command, posix=True)
        lex.whitespace_split = True
        lex.escape = ""
        lex.commenters = ""
        return list(lex)
    except ValueError:
        return None


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
    # Windows command lines quote without backslash escapes (``C:\\repo``); POSIX ones escape with them
    windows = name in _POWERSHELLS or name == "cmd" or "\\" in m.group(0)
    for mode in ((True, False) if windows else (False, True)):
        words = _split(s, mode)
        if words:
            inner = wrapped_command(words)
            if inner is not None:
                return inner
    return s
