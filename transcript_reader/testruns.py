"""Which shell commands run tests, and what their result was.

A command is a test run when one of its simple commands (after splitting ``&&``, ``||``, ``;``, ``|``
and unwrapping ``bash -lc '…'``) *invokes* a test runner: ``pytest``, ``python -m unittest``,
``npm test``, ``go test``, ``cargo test``, ``make check``… A runner named only as an argument
(``grep pytest f``, ``echo npm test``, ``pip install pytest``) is not a test run.

The result follows the exit code first, then the runner's own summary line:

- the exit code decides when the runner's status is the command's status: the runner is the last
  simple command (``cd x && pytest``), or only ``&&`` commands follow it and the exit code is 0;
- otherwise (``pytest | tail``, ``pytest; echo done``, ``pytest || true``, or no exit code recorded) the
  runner's summary line in the output decides (``== 1 failed, 3 passed in 0.2s ==``,
  ``Tests: 1 failed, 4 passed, 5 total``, ``test result: ok. 3 passed; …``);
- ``unknown`` when neither tells. A wrong pass/fail is worse than ``unknown``.

Counts come from the summary wherever the output states them (``failed`` includes pytest's and
unittest's errors, which are failures to run a test). Nothing here raises on any input.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from exec_grammar.shell import wrapped_command
from transcript_reader.model import TestResult

__all__ = ["TestRunInfo", "detect_test_run", "find_test_runner"]

#: Summaries are read from the end of the output; longer outputs keep their last this-many characters.
SCAN_CHARS = 1_000_000


@dataclass(frozen=True, slots=True)
class TestRunInfo:
    """A detected test run: the runner, the result, and the counts the output stated."""

    __test__ = False  # not a pytest class

    framework: str
    result: TestResult = TestResult.UNKNOWN
    passed: int | None = None
    failed: int | None = None
    skipped: int | None = None


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
            lexer.escape = ""  # PowerShell/cmd (QA F23): ``C:\Python311\python.exe -m pytest``
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
    # ``pwsh -Command "pytest"``, ``cmd /c "npm test"`` (Windows sessions, QA F23)
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
    if prog in ("swift", "mix", "flutter", "dart", "zig", "meson", "stack", "cabal", "lein", "sbt", "julia"):
        if prog == "zig":
            return "zig" if args[:2] == ["build", "test"] or first == "test" else None
        if prog == "julia":
            return None
        return prog if first == "test" else None
    return None


# --------------------------------------------------------------------------- output side

_ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)")


@dataclass(frozen=True, slots=True)
class _Summary:
    result: TestResult
    passed: int | None
    failed: int | None
    skipped: int | None
    end: int  # where in the output the summary ends (the latest summary wins)


def _last(matches: Iterator[re.Match[str]]) -> re.Match[str] | None:
    """The last of ``matches`` (the summary printed last is the run's final one)."""
    found = None
    for found in matches:  # noqa: B007
        pass
    return found


def _num(pattern: str, text: str) -> int | None:
    m = re.search(pattern, text)
    return int(m.group(1)) if m else None


def _sum_opt(*values: int | None) -> int | None:
    present = [v for v in values if v is not None]
    return sum(present) if present else None


def _verdict(passed: int | None, failed: int | None) -> TestResult:
    if failed:
        return TestResult.FAIL
    if passed:
        return TestResult.PASS
    return TestResult.UNKNOWN


_PYTEST_LINE = re.compile(
    r"^[= \t]*((?:\d+ (?:passed|failed|skipped|errors?|xfailed|xpassed|deselected|warnings?|rerun)"
    r"(?:, )?)+)(?: in [\d.]+ ?(?:seconds|s|ms)(?: \([^)\n]*\))?)?[= \t]*$",
    re.M,
)


def _pytest(text: str) -> _Summary | None:
    last = _last(_PYTEST_LINE.finditer(text))
    if last is None:
        m2 = _last(re.finditer(r"^=+ no tests ran in [\d.]+s =+$", text, re.M))
        return _Summary(TestResult.UNKNOWN, 0, 0, 0, m2.end()) if m2 else None
    body = last.group(1)
    passed = _num(r"(\d+) passed", body)
    failed = _sum_opt(_num(r"(\d+) failed", body), _num(r"(\d+) errors?", body))
    skipped = _num(r"(\d+) skipped", body)
    if passed is None and failed is None and skipped is None:
        return None  # only warnings/deselected: not a result
    return _Summary(_verdict(passed, failed), passed or 0, failed or 0, skipped or 0, last.end())


_UNITTEST = re.compile(r"^Ran (\d+) tests? in [\d.]+s[ \t]*\n(?:[ \t]*\n)*[ \t]*(OK|FAILED)(?: \(([^)]*)\))?", re.M)


def _unittest(text: str) -> _Summary | None:
    last = _last(_UNITTEST.finditer(text))
    if last is None:
        return None
    ran = int(last.group(1))
    detail = last.group(3) or ""
    failures = (_num(r"failures=(\d+)", detail) or 0) + (_num(r"errors=(\d+)", detail) or 0)
    skipped = _num(r"skipped=(\d+)", detail) or 0
    expected = _num(r"expected failures=(\d+)", detail) or 0
    result = TestResult.PASS if last.group(2) == "OK" else TestResult.FAIL
    return _Summary(result, max(ran - failures - skipped - expected, 0), failures, skipped, last.end())


_JEST = re.compile(r"^[ \t]*Tests:?[ \t]+((?:\d+ \w+(?:,| \|)?[ \t]*)+)(?:\(\d+\))?[ \t]*$", re.M)


def _jest_vitest(text: str) -> _Summary | None:
    last = _last(_JEST.finditer(text))
    if last is None:
        return None
    body = last.group(1)
    passed = _num(r"(\d+) passed", body)
    failed = _num(r"(\d+) failed", body)
    skipped = _sum_opt(_num(r"(\d+) skipped", body), _num(r"(\d+) todo", body), _num(r"(\d+) pending", body))
    if passed is None and failed is None:
        return None
    return _Summary(_verdict(passed, failed), passed or 0, failed or 0, skipped or 0, last.end())


def _mocha(text: str) -> _Summary | None:
    m_pass = list(re.finditer(r"^[ \t]*(\d+) passing\b", text, re.M))
    if not m_pass:
        return None
    start = m_pass[-1].start()
    tail = text[start:]
    passed = int(m_pass[-1].group(1))
    mf = re.search(r"^[ \t]*(\d+) failing\b", tail, re.M)
    mp = re.search(r"^[ \t]*(\d+) pending\b", tail, re.M)
    failed = int(mf.group(1)) if mf else 0
    skipped = int(mp.group(1)) if mp else 0
    end = start + max(mf.end() if mf else 0, mp.end() if mp else 0, m_pass[-1].end() - start)
    return _Summary(_verdict(passed, failed) if (passed or failed) else TestResult.UNKNOWN,
                    passed, failed, skipped, end)


def _go(text: str) -> _Summary | None:
    fails = list(re.finditer(r"^(?:FAIL\b|--- FAIL:)", text, re.M))
    oks = list(re.finditer(r"^(?:ok[ \t]+\S+|PASS$)", text, re.M))
    if not fails and not oks:
        return None
    passed = len(re.findall(r"^[ \t]*--- PASS:", text, re.M))
    failed = len(re.findall(r"^[ \t]*--- FAIL:", text, re.M))
    skipped = len(re.findall(r"^[ \t]*--- SKIP:", text, re.M))
    end = max([m.end() for m in fails + oks])
    # ``go test -v`` lists every test (``=== RUN``); without -v only failing tests get a ``--- FAIL:``
    # line, so passed and skipped tests are not stated and a failure count of 0 would be a guess
    if re.search(r"^[ \t]*=== RUN", text, re.M):
        return _Summary(TestResult.FAIL if fails else TestResult.PASS, passed, failed, skipped, end)
    return _Summary(TestResult.FAIL if fails else TestResult.PASS, None, failed or None, None, end)


_CARGO = re.compile(r"^test result: (ok|FAILED)\. (\d+) passed; (\d+) failed; (\d+) ignored", re.M)


def _cargo(text: str) -> _Summary | None:
    matches = list(_CARGO.finditer(text))
    if not matches:
        return None
    passed = sum(int(m.group(2)) for m in matches)
    failed = sum(int(m.group(3)) for m in matches)
    ignored = sum(int(m.group(4)) for m in matches)
    bad = any(m.group(1) == "FAILED" for m in matches)
    return _Summary(TestResult.FAIL if bad or failed else TestResult.PASS, passed, failed, ignored,
                    matches[-1].end())


_NEXTEST = re.compile(r"^[ \t]*Summary \[[^\]\n]*\][ \t]+(\d+) tests? run: ([^\n]*)$", re.M)


def _nextest(text: str) -> _Summary | None:
    last = _last(_NEXTEST.finditer(text))
    if last is None:
        return None
    body = last.group(2)
    passed = _num(r"(\d+) passed", body) or 0
    failed = (_num(r"(\d+) failed", body) or 0) + (_num(r"(\d+) timed out", body) or 0)
    skipped = _num(r"(\d+) skipped", body) or 0
    return _Summary(_verdict(passed, failed), passed, failed, skipped, last.end())


_RSPEC = re.compile(r"^(\d+) examples?, (\d+) failures?(?:, (\d+) pending)?", re.M)


def _rspec(text: str) -> _Summary | None:
    last = _last(_RSPEC.finditer(text))
    if last is None:
        return None
    total, failed = int(last.group(1)), int(last.group(2))
    pending = int(last.group(3)) if last.group(3) else 0
    passed = max(total - failed - pending, 0)
    result = TestResult.FAIL if failed else (TestResult.PASS if passed else TestResult.UNKNOWN)
    return _Summary(result, passed, failed, pending, last.end())


_PHPUNIT_OK = re.compile(r"^OK \((\d+) tests?, \d+ assertions?\)", re.M)
_PHPUNIT_COUNTS = re.compile(r"^Tests: (\d+), Assertions: \d+([^\n]*)$", re.M)


def _phpunit(text: str) -> _Summary | None:
    ok = _last(_PHPUNIT_OK.finditer(text))
    counts = _last(_PHPUNIT_COUNTS.finditer(text))
    if ok is not None and (counts is None or ok.end() > counts.end()):
        return _Summary(TestResult.PASS, int(ok.group(1)), 0, 0, ok.end())
    if counts is None:
        return None
    total = int(counts.group(1))
    rest = counts.group(2)
    failed = (_num(r"Failures: (\d+)", rest) or 0) + (_num(r"Errors: (\d+)", rest) or 0)
    skipped = (_num(r"Skipped: (\d+)", rest) or 0) + (_num(r"Incomplete: (\d+)", rest) or 0)
    passed = max(total - failed - skipped, 0)
    return _Summary(TestResult.FAIL if failed else TestResult.PASS, passed, failed, skipped, counts.end())


_DOTNET = re.compile(
    r"^[ \t]*(Passed|Failed)![ \t]+-[ \t]+Failed:[ \t]+(\d+),[ \t]+Passed:[ \t]+(\d+),[ \t]+Skipped:[ \t]+(\d+)",
    re.M,
)
_DOTNET_NEW = re.compile(
    r"^[ \t]*Test summary: total: (\d+), failed: (\d+), succeeded: (\d+), skipped: (\d+)", re.M | re.I
)


def _dotnet(text: str) -> _Summary | None:
    old = list(_DOTNET.finditer(text))
    new = list(_DOTNET_NEW.finditer(text))
    if new and (not old or new[-1].end() > old[-1].end()):
        m = new[-1]
        failed, passed, skipped = int(m.group(2)), int(m.group(3)), int(m.group(4))
        return _Summary(_verdict(passed, failed), passed, failed, skipped, m.end())
    if not old:
        return None
    failed = sum(int(m.group(2)) for m in old)
    passed = sum(int(m.group(3)) for m in old)
    skipped = sum(int(m.group(4)) for m in old)
    bad = any(m.group(1) == "Failed" for m in old)
    return _Summary(TestResult.FAIL if bad or failed else _verdict(passed, 0), passed, failed, skipped,
                    old[-1].end())


_MAVEN = re.compile(r"Tests run: (\d+), Failures: (\d+), Errors: (\d+), Skipped: (\d+)\b(?!,[ \t]*Time)")


def _maven(text: str) -> _Summary | None:
    last = _last(_MAVEN.finditer(text))
    if last is None:
        return None
    run, failures, errors, skipped = (int(last.group(i)) for i in range(1, 5))
    failed = failures + errors
    passed = max(run - failed - skipped, 0)
    result = TestResult.FAIL if failed else (TestResult.PASS if passed else TestResult.UNKNOWN)
    build = _last(re.finditer(r"BUILD (SUCCESS|FAILURE)", text))
    if build is not None and build.group(1) == "FAILURE" and build.end() > last.end():
        result = TestResult.FAIL
    return _Summary(result, passed, failed, skipped, last.end())


_GRADLE = re.compile(r"^(\d+) tests? completed(?:, (\d+) failed)?(?:, (\d+) skipped)?", re.M)


def _gradle(text: str) -> _Summary | None:
    counts = _last(_GRADLE.finditer(text))
    build = _last(re.finditer(r"^BUILD (SUCCESSFUL|FAILED)", text, re.M))
    if counts is None and build is None:
        return None
    passed = failed = skipped = None
    end = 0
    if counts is not None:
        total = int(counts.group(1))
        failed = int(counts.group(2) or 0)
        skipped = int(counts.group(3) or 0)
        passed = max(total - failed - skipped, 0)
        end = counts.end()
    if build is not None:
        result = TestResult.PASS if build.group(1) == "SUCCESSFUL" else TestResult.FAIL
        end = max(end, build.end())
    else:
        result = _verdict(passed, failed)
    return _Summary(result, passed, failed, skipped, end)


_CTEST = re.compile(r"^[ \t]*\d+% tests passed, (\d+) tests? failed out of (\d+)", re.M)


def _ctest(text: str) -> _Summary | None:
    last = _last(_CTEST.finditer(text))
    if last is None:
        return None
    failed, total = int(last.group(1)), int(last.group(2))
    passed = max(total - failed, 0)
    return _Summary(_verdict(passed, failed), passed, failed, None, last.end())


_DENO = re.compile(r"^(ok|FAILED) \| (\d+) passed(?: \([^)]*\))? \| (\d+) failed(?: \| (\d+) ignored)?", re.M)


def _deno(text: str) -> _Summary | None:
    last = _last(_DENO.finditer(text))
    if last is None:
        return None
    passed, failed = int(last.group(2)), int(last.group(3))
    skipped = int(last.group(4)) if last.group(4) else 0
    result = TestResult.FAIL if last.group(1) == "FAILED" or failed else _verdict(passed, 0)
    return _Summary(result, passed, failed, skipped, last.end())


_BUN = re.compile(
    r"^[ \t]*(\d+) pass[ \t]*\n(?:[ \t]*(\d+) skip[ \t]*\n)?(?:[ \t]*(\d+) todo[ \t]*\n)?[ \t]*(\d+) fail\b", re.M
)


def _bun(text: str) -> _Summary | None:
    last = _last(_BUN.finditer(text))
    if last is None:
        return None
    passed, failed = int(last.group(1)), int(last.group(4))
    skipped = int(last.group(2) or 0) + int(last.group(3) or 0)
    return _Summary(_verdict(passed, failed), passed, failed, skipped, last.end())


_BAZEL = re.compile(r"^Executed \d+ out of (\d+) tests?: ([^\n]*)$", re.M)


def _bazel(text: str) -> _Summary | None:
    last = _last(_BAZEL.finditer(text))
    if last is None:
        return None
    body = last.group(2)
    passed = _num(r"(\d+) tests? pass", body)
    failed = _sum_opt(_num(r"(\d+) fails? locally", body), _num(r"(\d+) fails? remotely", body),
                      _num(r"(\d+) fails?\b", body) if "fails" in body and "locally" not in body else None)
    return _Summary(_verdict(passed, failed), passed, failed, None, last.end())


_Parser = Callable[[str], "_Summary | None"]

_ALL_PARSERS: tuple[_Parser, ...] = (
    _pytest, _unittest, _jest_vitest, _mocha, _go, _cargo, _nextest, _rspec, _phpunit, _dotnet, _maven,
    _gradle, _ctest, _deno, _bun, _bazel,
)

#: The runner's own summary parsers; frameworks not listed (tox, nox, make, npm…) run another runner, so
#: every parser is tried and the summary printed last wins.
_PARSERS: dict[str, tuple[_Parser, ...]] = {
    "pytest": (_pytest,),
    "unittest": (_unittest,),
    "django": (_unittest,),
    "setuptools": (_unittest, _pytest),
    "nose": (_unittest,),
    "nose2": (_unittest,),
    "jest": (_jest_vitest,),
    "vitest": (_jest_vitest,),
    "mocha": (_mocha,),
    "go": (_go,),
    "cargo": (_cargo,),
    "nextest": (_nextest,),
    "rspec": (_rspec,),
    "phpunit": (_phpunit,),
    "dotnet": (_dotnet,),
    "maven": (_maven,),
    "gradle": (_gradle,),
    "ctest": (_ctest,),
    "deno": (_deno,),
    "bazel": (_bazel,),
}


def _summary(framework: str, output: str | None) -> _Summary | None:
    if not output:
        return None
    text = _ANSI.sub("", output[-SCAN_CHARS:]).replace("\r\n", "\n")
    best: _Summary | None = None
    for parser in _PARSERS.get(framework, _ALL_PARSERS):
        found = parser(text)
        if found is not None and (best is None or found.end > best.end):
            best = found
    return best


# --------------------------------------------------------------------------- entry point


def detect_test_run(command: str, exit_code: int | None, output: str | None) -> TestRunInfo | None:
    """A :class:`TestRunInfo` when ``command`` runs a test runner, else None. Never raises."""
    try:
        return _detect(command, exit_code, output)
    except (ValueError, TypeError, IndexError, RecursionError):  # defensive: odd text must never crash a read
        return None


#: Every runner find_test_runner knows names one of these words; a command with none is no test run
#: (a cheap pre-filter: most commands an agent runs are ``ls``/``cat``/``sed``).
_CANDIDATE = re.compile(
    r"test|check|verify|spec|tox|nox|nose|green|jest|mocha|ava|karma|tap|jasmine|cypress|playwright|phpunit"
    r"|pest|trial|ward|coverage|\bt\b|tst",
    re.IGNORECASE,
)
#: The same test for ASCII text, 5-20x faster: the case-insensitive alternation costs 3-10 µs a command
#: (the engine tries every word at every position), the lowercased text's ``in`` tests under 1 µs. For
#: ASCII, IGNORECASE is exactly ASCII lowercasing; other text keeps the regex (Unicode case folding
#: matches more, e.g. ``ſ`` as ``s``). ``t(?<=\bt)\b`` is ``\bt\b`` written to start with a literal,
#: which the engine scans for directly.
_CANDIDATE_WORDS = tuple(w for w in _CANDIDATE.pattern.split("|") if w.isalpha())
_LONE_T = re.compile(r"t(?<=\bt)\b")


def _is_candidate(command: str) -> bool:
    if not command.isascii():
        return _CANDIDATE.search(command) is not None
    low = command.lower()
    for word in _CANDIDATE_WORDS:
        if word in low:
            return True
    return _LONE_T.search(low) is not None


def _detect(command: str, exit_code: int | None, output: str | None) -> TestRunInfo | None:
    if not isinstance(command, str) or not _is_candidate(command):
        return None
    framework: str | None = None
    after: list[str] = []
    for words, connectors in _segments(command):
        framework = find_test_runner(words)
        if framework is not None:
            after = connectors()
            break
    if framework is None:
        return None
    summary = _summary(framework, output if isinstance(output, str) else None)
    counts = (summary.passed, summary.failed, summary.skipped) if summary else (None, None, None)
    summary_result = summary.result if summary else TestResult.UNKNOWN
    if isinstance(exit_code, bool) or not isinstance(exit_code, int):
        exit_code = None
    if exit_code is not None and not after:
        result = TestResult.PASS if exit_code == 0 else TestResult.FAIL
    elif exit_code == 0 and all(op == "&&" for op in after):
        result = TestResult.PASS  # every command after the runner needed it to succeed
    else:
        result = summary_result
    return TestRunInfo(framework=framework, result=result, passed=counts[0], failed=counts[1], skipped=counts[2])
