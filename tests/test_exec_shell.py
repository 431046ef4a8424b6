"""Shell wrappers: the command inside ``bash -lc``, PowerShell ``-Command`` and ``cmd /c``, from an
argv (records, ``tools.shell``) or a command line (``exec --json`` streams), so that a script's command
and the record of its run compare equal on every platform."""

from __future__ import annotations

import shlex

import pytest
from hypothesis import given
from hypothesis import strategies as st

from exec_grammar.shell import command_from_argv, shell_name, unwrap_command

PS = "C:\\WINDOWS\\System32\\WindowsPowerShell\\v1.0\\powershell.exe"
PWSH = "C:\\Program Files\\PowerShell\\7\\pwsh.exe"
CMD = "C:\\WINDOWS\\system32\\cmd.exe"


@pytest.mark.parametrize(
    ("argv", "want"),
    [
        (["/bin/bash", "-lc", "ls -la"], "ls -la"),
        (["bash", "-c", "ls"], "ls"),
        (["/opt/homebrew/bin/zsh", "-lc", "make test"], "make test"),  # a non-/bin shell (macOS Homebrew)
        (["/usr/local/bin/fish", "-c", "echo hi"], "echo hi"),
        ([PS, "-NoProfile", "-Command", "Get-ChildItem -Force"], "Get-ChildItem -Force"),  # codex-rs non-login
        ([PS, "-Command", "dir"], "dir"),  # login shell: no -NoProfile
        ([PWSH, "-NoLogo", "-NoProfile", "-Command", "python -m pytest"], "python -m pytest"),
        (["pwsh", "-c", "ls"], "ls"),
        ([CMD, "/c", "dir /b"], "dir /b"),
        (["cmd", "/C", "echo x"], "echo x"),
    ],
)
def test_wrapped_argv_gives_the_inner_command(argv: list[str], want: str) -> None:
    assert command_from_argv(argv) == want
    # the command line Codex prints for the same argv unwraps to the same command
    assert unwrap_command(shlex.join(argv)) == want


@pytest.mark.parametrize(
    "argv",
    [
        ["git", "status"],
        ["bash", "script.sh"],  # runs a file, wraps nothing
        ["bash", "-lc", "ls", "extra"],
        [PS, "-File", "x.ps1"],
        [PS, "-ExecutionPolicy", "Bypass", "-Command", "dir"],  # a switch with a value: not Codex's wrapper
        [CMD, "/k", "dir"],
        ["Bash", "-lc", "ls"],  # POSIX names are case-sensitive
    ],
)
def test_other_argv_is_joined_unchanged(argv: list[str]) -> None:
    assert command_from_argv(argv) == shlex.join(argv)


@pytest.mark.parametrize(
    ("line", "want"),
    [
        ("/bin/bash -lc 'ls -la'", "ls -la"),
        ('bash -lc "cd /r && pytest -q"', "cd /r && pytest -q"),
        ('"C:\\Program Files\\PowerShell\\7\\pwsh.exe" -Command "Get-Content C:\\repo\\a.txt"',
         "Get-Content C:\\repo\\a.txt"),  # backslashes inside the command survive
        ("C:\\WINDOWS\\system32\\cmd.exe /c \"dir /b\"", "dir /b"),
        ("  ls -la  ", "ls -la"),
        ("sh build.sh", "sh build.sh"),
        ("bash -lc 'unbalanced", "bash -lc 'unbalanced"),
        ("cmdline-tool --x", "cmdline-tool --x"),
        # Codex writes command lines with rust shlex::try_join: Windows paths double-quoted, backslashes escaped
        ('"C:\\\\WINDOWS\\\\System32\\\\WindowsPowerShell\\\\v1.0\\\\powershell.exe" -NoProfile -Command '
         '"Get-Content C:\\\\a.txt"', "Get-Content C:\\a.txt"),
        ('"C:\\\\WINDOWS\\\\system32\\\\cmd.exe" /c "echo \'x\' \\"y\\""', "echo 'x' \"y\""),
        # typed by a person: the rest of the line is the command
        ("cmd /c npm test", "npm test"),
        ("pwsh -NoProfile -Command python -m pytest", "python -m pytest"),
        # an unquoted backslash: a person typed it, Windows reading
        ("cmd /c dir C:\\repo\\src", "dir C:\\repo\\src"),
        ("pwsh -Command Get-Content C:\\a.txt", "Get-Content C:\\a.txt"),
    ],
)
def test_command_lines_unwrap(line: str, want: str) -> None:
    assert unwrap_command(line) == want


def test_shell_names() -> None:
    assert shell_name("/usr/bin/bash") == "bash"
    assert shell_name(PS) == "powershell"
    assert shell_name("PWSH.EXE") == "pwsh"
    assert shell_name("C:\\Program Files\\Git\\bin\\bash.exe") == "bash"


@given(st.text(min_size=1), st.sampled_from(["/bin/bash", "zsh", "/usr/local/bin/bash", "sh"]),
       st.sampled_from(["-lc", "-c"]))
def test_posix_wrapper_round_trip(command: str, shell: str, flag: str) -> None:
    argv = [shell, flag, command]
    assert command_from_argv(argv) == command
    assert unwrap_command(shlex.join(argv)) == command.strip() or unwrap_command(shlex.join(argv)) == command


@given(st.text())
def test_unwrap_is_total(line: str) -> None:
    assert isinstance(unwrap_command(line), str)


def test_posix_escapes_inside_a_posix_wrapper_are_honoured() -> None:
    assert unwrap_command('bash -lc "echo \\"hi\\" a\\\\b"') == 'echo "hi" a\\b'
    assert unwrap_command('/bin/zsh -lc \'printf "%s\\n" x\'') == 'printf "%s\\n" x'


@given(st.text(alphabet=" \t\n\r'\"\\ab$`#;&|x", max_size=16))
def test_posix_split_is_shlex_split(line: str) -> None:
    """The linear splitter gives what ``shlex.split`` gives, and None where it raises."""
    from exec_grammar.shell import posix_split

    try:
        want: list[str] | None = shlex.split(line)
    except ValueError:
        want = None
    assert posix_split(line) == want


def test_long_command_lines_split_in_linear_work() -> None:
    """``shlex`` grows each word a character at a time (seconds on a 1 MB heredoc command); the
    splitter copies runs. Checked by output on a 1 MB line and by scanning steps, not by time."""
    from exec_grammar.shell import posix_split

    body = 'line \\"q\\" $x\n' * 70_000
    line = "bash -lc \"cat > x <<'EOF'\n" + body + 'EOF"'
    words = posix_split(line)
    assert words is not None and len(words) == 3 and words[2].endswith("EOF")
    assert unwrap_command(line) == words[2]
