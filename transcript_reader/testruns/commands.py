"""The command side of test-run detection: which simple commands of a shell command line invoke a test
runner (``pytest``, ``python -m unittest``, ``npm test``, ``go test``, ``cargo test``, ``make check``…).
A runner named only as an argument (``grep pytest f``, ``echo npm test``, ``pip install pytest``) is
not a test run."""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable, Iterator

from exec_grammar.shell import wrapped_command

# --------------------------------------------------------------------------- command side

_SHELLS = frozenset({"bash", "sh", "zsh", "dash", "ksh", "fish"})
_PYTHON = re.compile(r"^(python(\d+(\.\d+)?)?|py|pypy\d*(\.\d+)?)$")
_ASSIGN = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
_HELP_FLAGS = frozenset({"--version", "--help", "-h", "-V"})
_OPERATORS = frozenset({"&&", "||", ";", "|", "|&", "&", ";;", "(", ")", "\n"})

#: Wrappers that run their argument as a command: prefix words to skip (value-taking options listed).
_PREFIX_WRAPPERS: dict[str, frozenset[str]] = {
    "sudo": frozenset({"-u", "-g", "-C", "-D"}),
    "env": frozenset({"-u", "-C", "-S"}),
    "time": frozenset({"-f", "-o"}),
    "nice": frozenset({"-n"}),
    "ionice": frozenset({"-c", "-n"}),
    "stdbuf": frozenset(),
    "xvfb-run": frozenset({"-s", "-n", "-e", "-f", "-p"}),
    "command": frozenset(),
    "exec": frozenset(),
    "nohup": frozenset(),
    "npx": frozenset({"-p", "--package"}),
    "pnpx": frozenset(),
    "bunx": frozenset(),
    "dotenv": frozenset({"-e", "-f"}),
}
#: ``<tool> run|exec …`` wrappers (``uv run pytest``, ``poetry run pytest``, ``bundle exec rspec``).
_RUN_WRAPPERS: dict[str, tuple[frozenset[str], frozenset[str]]] = {
    "uv": (
        frozenset({"run"}),
        frozenset({"--with", "--python", "-p", "--project", "--package", "--extra", "--group", "--directory",
                   "--env-file", "--with-requirements", "--index", "--index-url"}),
    ),
    "poetry": (frozenset({"run"}), frozenset({"-C", "--directory", "-P", "--project"})),
    "pipenv": (frozenset({"run"}), frozenset()),
    "pdm": (frozenset({"run"}), frozenset({"-p", "--project"})),
    "rye": (frozenset({"run"}), frozenset()),
    "hatch": (frozenset({"run"}), frozenset({"-e", "--env"})),
    "bundle": (frozenset({"exec"}), frozenset({"--gemfile"})),
    "pixi": (frozenset({"run"}), frozenset({"-e", "--environment", "--manifest-path"})),
    "conda": (frozenset({"run"}), frozenset({"-n", "--name", "-p", "--prefix"})),
    "nix": (frozenset({"develop", "shell"}), frozenset()),  # `nix develop -c pytest`
    "pnpm": (frozenset({"exec", "dlx"}), frozenset({"-C", "--dir", "--filter", "-F"})),
    "npm": (frozenset({"exec"}), frozenset({"--prefix", "-w", "--workspace", "-C"})),
    "yarn": (frozenset({"exec", "dlx"}), frozenset({"--cwd"})),
    "bun": (frozenset({"x"}), frozenset({"--cwd"})),
    "coverage": (frozenset({"run"}), frozenset({"--rcfile", "--source", "--omit", "--include", "--data-file"})),
}

_NODE_PM = {"npm": "npm", "pnpm": "pnpm", "yarn": "yarn", "bun": "bun"}
_NODE_PM_VALUE_OPTS = frozenset({"--prefix", "-C", "--dir", "--filter", "-F", "--cwd", "-w", "--workspace"})
_NODE_RUNNERS = {"jest": "jest", "vitest": "vitest", "mocha": "mocha", "ava": "ava", "karma": "karma",
                 "playwright": "playwright", "cypress": "cypress", "tap": "tap", "jasmine": "jasmine"}
#: Tools whose ``test`` subcommand runs the tests (the framework is the tool's name).
_TEST_SUBCOMMAND_TOOLS = ("swift", "mix", "flutter", "dart", "zig", "meson", "stack", "cabal", "lein", "sbt")
_MAKE_TARGET = re.compile(r"^(test|tests|check|unittest|test[-_:][\w.:-]*|check[-_:][\w.:-]*)$")
_GRADLE_TASK = re.compile(r"^(:?[\w-]+:)*(test\w*|check|\w+Test|connected\w*Test)$")


#: Windows executables: ``python.exe``, ``gradlew.bat``, ``npm.cmd``, ``pytest.ps1`` name the same runner.
_WINDOWS_EXT = re.compile(r"\.(?:exe|cmd|bat|ps1)$", re.IGNORECASE)
#: A Windows path in a command line (``C:\x``, ``.\x``): its backslashes are separators, not escapes.
_WINDOWS_PATH = re.compile(r"(?:^|[\s'\"&;(])(?:[A-Za-z]:|\.{1,2})?\\[\w.$-]")


def _basename(word: str) -> str:
    base = word.rsplit("/", 1)[-1]
    if "\\" in base:
        base = base.rsplit("\\", 1)[-1]
    if "." in base and _WINDOWS_EXT.search(base):
        base = _WINDOWS_EXT.sub("", base)
    return base


#: A here-document: ``<<'EOF'`` … ``EOF``. Its body is data (a script written to a file), not commands.
_HEREDOC = re.compile(r"<<-?[ \t]*(['\"]?)([A-Za-z_][\w.-]*)\1([^\n]*)\n.*?^[ \t]*\2[ \t]*$", re.S | re.M)


def _tokens(command: str) -> list[str] | None:
    """Shell tokens with operators split out (here-document bodies dropped); None when the command
    cannot be tokenised."""
    if 0 < command.count("<<") <= 50:  # bounded: each here-document scans ahead for its delimiter
        command = _HEREDOC.sub(lambda m: m.group(3), command)
    try:
        lexer = shlex.shlex(command.replace("\r", " "), posix=True, punctuation_chars=True)
        if "\\" in command and _WINDOWS_PATH.search(command):
            lexer.escape = ""  # PowerShell/cmd: ``C:\Python311\python.exe -m pytest``
            lexer.wordchars += "\\"
        lexer.whitespace = " \t"  # keep newlines: they separate commands
        lexer.wordchars += "+:@%,^{}[]!$#"  # `cargo +nightly test`, `./gradlew :app:test`
        lexer.commenters = "#"
        return list(lexer)
    except ValueError:
        return None


def _segments(command: str, depth: int = 0) -> Iterator[tuple[list[str], Callable[[], list[str]]]]:
    """Simple commands of ``command`` as (words, a function giving the connectors that follow them).

    ``bash -lc '<script>'`` is unwrapped into the script's own simple commands. The connectors are
    computed only for the runner found (a long script has thousands of simple commands).
    """
    tokens = _tokens(command)
    if tokens is None:
        return
    pieces: list[tuple[list[str], str | None]] = []
    words: list[str] = []
    skip_next = False
    for tok in tokens:
        if skip_next:
            skip_next = False
            continue
        if tok in _OPERATORS or (tok and set(tok) <= set(";&|()\n")):
            pieces.append((words, tok))
            words = []
        elif tok and set(tok) <= set("<>&|"):
            skip_next = True  # a redirection: drop its target
        else:
            words.append(tok)
    pieces.append((words, None))

    def connectors_from(index: int) -> Callable[[], list[str]]:
        return lambda: [op for _, op in pieces[index:] if op is not None]

    def joined(first: Callable[[], list[str]], then: Callable[[], list[str]]) -> Callable[[], list[str]]:
        return lambda: first() + then()

    for index, (seg, _) in enumerate(pieces):
        if not seg:
            continue
        after = connectors_from(index)
        inner = _shell_script(seg)
        if inner is not None and depth < 4:
            for sub, sub_after in _segments(inner, depth + 1):
                yield sub, joined(sub_after, after)
        else:
            yield seg, after


def _shell_script(words: list[str]) -> str | None:
    words = _strip_prefixes(words)
    if len(words) >= 3 and _basename(words[0]) in _SHELLS:
        for i, flag in enumerate(words[1:-1], start=1):
            if flag.startswith("-") and "c" in flag and not flag.startswith("--"):
                return words[i + 1]
            if not flag.startswith("-"):
                return None
        return None
    # ``pwsh -Command "pytest"``, ``cmd /c "npm test"`` (Windows sessions)
    return wrapped_command(words) if len(words) >= 3 else None


def _skip_options(words: list[str], start: int, value_opts: frozenset[str]) -> int:
    """Index of the first non-option word at or after ``start``."""
    i = start
    while i < len(words):
        word = words[i]
        if word == "--":
            return i + 1
        if not word.startswith("-") or word == "-":
            return i
        i += 2 if (word in value_opts and "=" not in word) else 1
    return i


def _strip_prefixes(words: list[str]) -> list[str]:
    """Drop env assignments and wrappers (``FOO=1``, ``sudo``, ``timeout 60``, ``uv run``…)."""
    for _ in range(8):
        if not words:
            return words
        while words and _ASSIGN.match(words[0]):
            words = words[1:]
        if not words:
            return words
        head = _basename(words[0])
        if head in _PREFIX_WRAPPERS:
            words = words[_skip_options(words, 1, _PREFIX_WRAPPERS[head]):]
            while words and _ASSIGN.match(words[0]):  # env FOO=1 cmd
                words = words[1:]
            continue
        if head == "timeout":
            i = _skip_options(words, 1, frozenset({"-s", "--signal", "-k", "--kill-after"}))
            words = words[i + 1:]  # the duration
            continue
        if head in _RUN_WRAPPERS:
            subs, value_opts = _RUN_WRAPPERS[head]
            i = _skip_options(words, 1, value_opts)
            if i < len(words) and words[i] in subs:
                if head == "nix":
                    try:
                        j = next(k for k, w in enumerate(words) if w in ("-c", "--command"))
                    except StopIteration:
                        return words
                    words = words[j + 1:]
                    continue
                if head == "coverage":  # coverage run -m pytest / coverage run script.py
                    return ["python", *words[i + 1:]]
                words = words[_skip_options(words, i + 1, value_opts):]
                continue
        return words
    return words


def find_test_runner(words: list[str]) -> str | None:
    """The test framework a simple command invokes, or None (an argument named pytest is no run)."""
    words = _strip_prefixes(list(words))
    if not words:
        return None
    if any(w in _HELP_FLAGS for w in words[1:]):
        return None
    prog = _basename(words[0])
    args = words[1:]
    first = args[0] if args else None
    if prog in ("pytest", "py.test"):
        return "pytest"
    if _PYTHON.match(prog):
        i = 0
        while i < len(args):
            if args[i] == "-m" and i + 1 < len(args):
                module = args[i + 1]
                return {"pytest": "pytest", "unittest": "unittest", "tox": "tox", "nox": "nox",
                        "nose": "nose", "nose2": "nose2", "green": "green"}.get(module)
            if args[i].startswith("-m") and len(args[i]) > 2:  # python -mpytest
                return {"pytest": "pytest", "unittest": "unittest"}.get(args[i][2:])
            if not args[i].startswith("-"):
                # `python manage.py test` (Django), `python setup.py test`, `python runtests.py`
                script = _basename(args[i])
                rest = args[i + 1:]
                if script in ("manage.py", "setup.py") and rest[:1] == ["test"]:
                    return "django" if script == "manage.py" else "setuptools"
                return None
            i += 2 if args[i] in ("-X", "-W", "-c") else 1
        return None
    if prog in ("tox", "nox", "nose2", "nosetests", "trial", "ward"):
        return {"nosetests": "nose"}.get(prog, prog)
    if prog in _NODE_PM:
        i = _skip_options(words, 1, _NODE_PM_VALUE_OPTS)
        sub = words[i] if i < len(words) else None
        if sub in ("test", "t", "tst"):
            return _NODE_PM[prog]
        if prog == "yarn" and sub == "workspace" and i + 2 < len(words):  # yarn workspace <pkg> test
            return _NODE_PM[prog] if re.match(r"^(test|tests)([:_-][\w:.-]*)?$", words[i + 2]) else None
        if sub in ("run", "run-script") and i + 1 < len(words):
            j = _skip_options(words, i + 1, _NODE_PM_VALUE_OPTS)
            script = words[j] if j < len(words) else ""
            if re.match(r"^(test|tests)([:_-][\w:.-]*)?$", script):
                return _NODE_PM[prog]
            return None
        if prog in ("yarn", "pnpm", "bun") and sub is not None and _basename(sub) in _NODE_RUNNERS:
            return _NODE_RUNNERS[_basename(sub)]  # `yarn jest`, `pnpm vitest`
        return None
    if prog in _NODE_RUNNERS:
        if prog in ("playwright", "cypress") and first not in ("test", "run"):
            return None
        if prog == "vitest" and first in ("bench", "init", "list"):
            return None
        return _NODE_RUNNERS[prog]
    if prog == "go":
        return "go" if first == "test" else None
    if prog == "cargo":
        i = 1
        while i < len(words) and words[i].startswith("+"):
            i += 1
        sub = words[i] if i < len(words) else None
        if sub in ("test", "t"):
            return "cargo"
        if sub == "nextest" and i + 1 < len(words) and words[i + 1] == "run":
            return "nextest"
        return None
    if prog in ("mvn", "mvnw", "maven"):
        targets = [a for a in args if not a.startswith("-")]
        return "maven" if any(t in ("test", "verify", "integration-test") or t.endswith(":test")
                              for t in targets) else None
    if prog in ("gradle", "gradlew"):
        targets = [a for a in args if not a.startswith("-")]
        return "gradle" if any(_GRADLE_TASK.match(t) for t in targets) else None
    if prog == "dotnet":
        return "dotnet" if first in ("test", "vstest") else None
    if prog in ("rspec",):
        return "rspec"
    if prog in ("rake", "rails", "bin/rails"):
        return "rake" if first in ("test", "spec") or (first or "").startswith("test:") else None
    if prog in ("phpunit", "pest", "paratest"):
        return "phpunit" if prog != "pest" else "pest"
    if prog == "ctest":
        return "ctest"
    if prog in ("make", "gmake", "ninja"):
        i = 1
        targets = []
        while i < len(words):
            w = words[i]
            if w in ("-C", "-f", "-j", "--directory", "--file") and i + 1 < len(words):
                i += 2
                continue
            if not w.startswith("-") and not _ASSIGN.match(w):
                targets.append(w)
            i += 1
        return prog.replace("gmake", "make") if any(_MAKE_TARGET.match(t) for t in targets) else None
    if prog == "deno":
        return "deno" if first == "test" else None
    if prog in ("bazel", "bazelisk"):
        i = _skip_options(words, 1, frozenset())
        return "bazel" if i < len(words) and words[i] in ("test", "coverage") else None
    if prog in _TEST_SUBCOMMAND_TOOLS or prog == "julia":
        if prog == "zig":
            return "zig" if args[:2] == ["build", "test"] or first == "test" else None
        if prog == "julia":
            return None
        return prog if first == "test" else None
    return None
