"""The output side of test-run detection: each runner's own summary line (``== 1 failed, 3 passed in
0.2s ==``, ``Tests: 1 failed, 4 passed, 5 total``, ``test result: ok. 3 passed; …``) read from the end
of the command's output. Which parsers a runner uses is declared with the runner (``runners``)."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from transcript_reader.model import TestResult

#: Terminal colour and title sequences, removed before summaries are read.
ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)")


@dataclass(frozen=True, slots=True)
class Summary:
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


def parse_pytest(text: str) -> Summary | None:
    last = _last(_PYTEST_LINE.finditer(text))
    if last is None:
        m2 = _last(re.finditer(r"^=+ no tests ran in [\d.]+s =+$", text, re.M))
        return Summary(TestResult.UNKNOWN, 0, 0, 0, m2.end()) if m2 else None
    body = last.group(1)
    passed = _num(r"(\d+) passed", body)
    failed = _sum_opt(_num(r"(\d+) failed", body), _num(r"(\d+) errors?", body))
    skipped = _num(r"(\d+) skipped", body)
    if passed is None and failed is None and skipped is None:
        return None  # only warnings/deselected: not a result
    return Summary(_verdict(passed, failed), passed or 0, failed or 0, skipped or 0, last.end())


_UNITTEST = re.compile(r"^Ran (\d+) tests? in [\d.]+s[ \t]*\n(?:[ \t]*\n)*[ \t]*(OK|FAILED)(?: \(([^)]*)\))?", re.M)


def parse_unittest(text: str) -> Summary | None:
    last = _last(_UNITTEST.finditer(text))
    if last is None:
        return None
    ran = int(last.group(1))
    detail = last.group(3) or ""
    failures = (_num(r"failures=(\d+)", detail) or 0) + (_num(r"errors=(\d+)", detail) or 0)
    skipped = _num(r"skipped=(\d+)", detail) or 0
    expected = _num(r"expected failures=(\d+)", detail) or 0
    result = TestResult.PASS if last.group(2) == "OK" else TestResult.FAIL
    return Summary(result, max(ran - failures - skipped - expected, 0), failures, skipped, last.end())


_JEST = re.compile(r"^[ \t]*Tests:?[ \t]+((?:\d+ \w+(?:,| \|)?[ \t]*)+)(?:\(\d+\))?[ \t]*$", re.M)


def parse_jest_vitest(text: str) -> Summary | None:
    last = _last(_JEST.finditer(text))
    if last is None:
        return None
    body = last.group(1)
    passed = _num(r"(\d+) passed", body)
    failed = _num(r"(\d+) failed", body)
    skipped = _sum_opt(_num(r"(\d+) skipped", body), _num(r"(\d+) todo", body), _num(r"(\d+) pending", body))
    if passed is None and failed is None:
        return None
    return Summary(_verdict(passed, failed), passed or 0, failed or 0, skipped or 0, last.end())


def parse_mocha(text: str) -> Summary | None:
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
    return Summary(_verdict(passed, failed) if (passed or failed) else TestResult.UNKNOWN,
                    passed, failed, skipped, end)


def parse_go(text: str) -> Summary | None:
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
        return Summary(TestResult.FAIL if fails else TestResult.PASS, passed, failed, skipped, end)
    return Summary(TestResult.FAIL if fails else TestResult.PASS, None, failed or None, None, end)


_CARGO = re.compile(r"^test result: (ok|FAILED)\. (\d+) passed; (\d+) failed; (\d+) ignored", re.M)


def parse_cargo(text: str) -> Summary | None:
    matches = list(_CARGO.finditer(text))
    if not matches:
        return None
    passed = sum(int(m.group(2)) for m in matches)
    failed = sum(int(m.group(3)) for m in matches)
    ignored = sum(int(m.group(4)) for m in matches)
    bad = any(m.group(1) == "FAILED" for m in matches)
    return Summary(TestResult.FAIL if bad or failed else TestResult.PASS, passed, failed, ignored,
                    matches[-1].end())


_NEXTEST = re.compile(r"^[ \t]*Summary \[[^\]\n]*\][ \t]+(\d+) tests? run: ([^\n]*)$", re.M)


def parse_nextest(text: str) -> Summary | None:
    last = _last(_NEXTEST.finditer(text))
    if last is None:
        return None
    body = last.group(2)
    passed = _num(r"(\d+) passed", body) or 0
    failed = (_num(r"(\d+) failed", body) or 0) + (_num(r"(\d+) timed out", body) or 0)
    skipped = _num(r"(\d+) skipped", body) or 0
    return Summary(_verdict(passed, failed), passed, failed, skipped, last.end())


_RSPEC = re.compile(r"^(\d+) examples?, (\d+) failures?(?:, (\d+) pending)?", re.M)


def parse_rspec(text: str) -> Summary | None:
    last = _last(_RSPEC.finditer(text))
    if last is None:
        return None
    total, failed = int(last.group(1)), int(last.group(2))
    pending = int(last.group(3)) if last.group(3) else 0
    passed = max(total - failed - pending, 0)
    result = TestResult.FAIL if failed else (TestResult.PASS if passed else TestResult.UNKNOWN)
    return Summary(result, passed, failed, pending, last.end())


_PHPUNIT_OK = re.compile(r"^OK \((\d+) tests?, \d+ assertions?\)", re.M)
_PHPUNIT_COUNTS = re.compile(r"^Tests: (\d+), Assertions: \d+([^\n]*)$", re.M)


def parse_phpunit(text: str) -> Summary | None:
    ok = _last(_PHPUNIT_OK.finditer(text))
    counts = _last(_PHPUNIT_COUNTS.finditer(text))
    if ok is not None and (counts is None or ok.end() > counts.end()):
        return Summary(TestResult.PASS, int(ok.group(1)), 0, 0, ok.end())
    if counts is None:
        return None
    total = int(counts.group(1))
    rest = counts.group(2)
    failed = (_num(r"Failures: (\d+)", rest) or 0) + (_num(r"Errors: (\d+)", rest) or 0)
    skipped = (_num(r"Skipped: (\d+)", rest) or 0) + (_num(r"Incomplete: (\d+)", rest) or 0)
    passed = max(total - failed - skipped, 0)
    return Summary(TestResult.FAIL if failed else TestResult.PASS, passed, failed, skipped, counts.end())


_DOTNET = re.compile(
    r"^[ \t]*(Passed|Failed)![ \t]+-[ \t]+Failed:[ \t]+(\d+),[ \t]+Passed:[ \t]+(\d+),[ \t]+Skipped:[ \t]+(\d+)",
    re.M,
)
_DOTNET_NEW = re.compile(
    r"^[ \t]*Test summary: total: (\d+), failed: (\d+), succeeded: (\d+), skipped: (\d+)", re.M | re.I
)


def parse_dotnet(text: str) -> Summary | None:
    old = list(_DOTNET.finditer(text))
    new = list(_DOTNET_NEW.finditer(text))
    if new and (not old or new[-1].end() > old[-1].end()):
        m = new[-1]
        failed, passed, skipped = int(m.group(2)), int(m.group(3)), int(m.group(4))
        return Summary(_verdict(passed, failed), passed, failed, skipped, m.end())
    if not old:
        return None
    failed = sum(int(m.group(2)) for m in old)
    passed = sum(int(m.group(3)) for m in old)
    skipped = sum(int(m.group(4)) for m in old)
    bad = any(m.group(1) == "Failed" for m in old)
    return Summary(TestResult.FAIL if bad or failed else _verdict(passed, 0), passed, failed, skipped,
                    old[-1].end())


_MAVEN = re.compile(r"Tests run: (\d+), Failures: (\d+), Errors: (\d+), Skipped: (\d+)\b(?!,[ \t]*Time)")


def parse_maven(text: str) -> Summary | None:
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
    return Summary(result, passed, failed, skipped, last.end())


_GRADLE = re.compile(r"^(\d+) tests? completed(?:, (\d+) failed)?(?:, (\d+) skipped)?", re.M)


def parse_gradle(text: str) -> Summary | None:
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
    return Summary(result, passed, failed, skipped, end)


_CTEST = re.compile(r"^[ \t]*\d+% tests passed, (\d+) tests? failed out of (\d+)", re.M)


def parse_ctest(text: str) -> Summary | None:
    last = _last(_CTEST.finditer(text))
    if last is None:
        return None
    failed, total = int(last.group(1)), int(last.group(2))
    passed = max(total - failed, 0)
    return Summary(_verdict(passed, failed), passed, failed, None, last.end())


_DENO = re.compile(r"^(ok|FAILED) \| (\d+) passed(?: \([^)]*\))? \| (\d+) failed(?: \| (\d+) ignored)?", re.M)


def parse_deno(text: str) -> Summary | None:
    last = _last(_DENO.finditer(text))
    if last is None:
        return None
    passed, failed = int(last.group(2)), int(last.group(3))
    skipped = int(last.group(4)) if last.group(4) else 0
    result = TestResult.FAIL if last.group(1) == "FAILED" or failed else _verdict(passed, 0)
    return Summary(result, passed, failed, skipped, last.end())


_BUN = re.compile(
    r"^[ \t]*(\d+) pass[ \t]*\n(?:[ \t]*(\d+) skip[ \t]*\n)?(?:[ \t]*(\d+) todo[ \t]*\n)?[ \t]*(\d+) fail\b", re.M
)


def parse_bun(text: str) -> Summary | None:
    last = _last(_BUN.finditer(text))
    if last is None:
        return None
    passed, failed = int(last.group(1)), int(last.group(4))
    skipped = int(last.group(2) or 0) + int(last.group(3) or 0)
    return Summary(_verdict(passed, failed), passed, failed, skipped, last.end())


_BAZEL = re.compile(r"^Executed \d+ out of (\d+) tests?: ([^\n]*)$", re.M)


def parse_bazel(text: str) -> Summary | None:
    last = _last(_BAZEL.finditer(text))
    if last is None:
        return None
    body = last.group(2)
    passed = _num(r"(\d+) tests? pass", body)
    failed = _sum_opt(_num(r"(\d+) fails? locally", body), _num(r"(\d+) fails? remotely", body),
                      _num(r"(\d+) fails?\b", body) if "fails" in body and "locally" not in body else None)
    return Summary(_verdict(passed, failed), passed, failed, None, last.end())


Parser = Callable[[str], "Summary | None"]

#: Every parser: tried in turn for a runner that runs another runner (tox, make, npm…).
ALL_PARSERS: tuple[Parser, ...] = (
    parse_pytest, parse_unittest, parse_jest_vitest, parse_mocha, parse_go, parse_cargo, parse_nextest, parse_rspec, parse_phpunit, parse_dotnet, parse_maven,
    parse_gradle, parse_ctest, parse_deno, parse_bun, parse_bazel,
)


#: What a shell or interpreter prints when the runner itself could not start: the tests never ran, so
#: the command failed and no test run took place (``python -m pytest`` without pytest installed).
_NEVER_RAN = re.compile(
    r"^(?:[^\n]*: )?No module named '?[\w.]+'?[ \t]*$"  # python -m X, or an import of the runner
    r"|command not found"  # bash ("bash: line 1: pytest: command not found"), zsh ("command not found: x")
    r"|^(?:[^\n]*: )?\S+: not found[ \t]*$"  # dash ("sh: 1: pytest: not found")
    r"|is not recognized as (?:an internal or external command|the name of a cmdlet)"  # cmd, PowerShell
    r"|^npm (?:ERR!|error) Missing script:"  # npm test without a test script
    r"|^error: no such (?:command|subcommand): "  # cargo nextest / cargo-x not installed
    r"|^go: cannot find main module",
    re.M | re.I,
)

#: The exit status of a command the shell could not find (POSIX).
COMMAND_NOT_FOUND = 127


def runner_never_ran(exit_code: int | None, output: str | None) -> bool:
    """True when the command's exit code or output says the test runner could not start (missing
    module or command, no test script): the command failed; no test ran. Called only when the output
    holds no runner summary (a collection error such as ``No module named 'app'`` inside a pytest run
    comes with ``1 error in 0.1s``, and that run is a failed test run)."""
    if exit_code == COMMAND_NOT_FOUND:
        return True
    if exit_code == 0 or not output:
        return False
    return _NEVER_RAN.search(ANSI.sub("", output[-4000:])) is not None
