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
- ``unknown`` when neither tells. A wrong pass/fail is worse than ``unknown``;
- no test run at all when the runner never started (``No module named pytest``, ``command not found``,
  exit code 127, with no summary in the output): that command failed, but no test failed.

Counts come from the summary wherever the output states them (``failed`` includes pytest's and
unittest's errors, which are failures to run a test). Nothing here raises on any input.

Modules: ``commands`` (which simple command invokes a runner), ``summaries`` (the runners' summary
lines), ``runners`` (every runner declared once: framework, pre-filter words, example, parsers).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from transcript_reader.model import TestResult
from transcript_reader.testruns.commands import _segments, find_test_runner
from transcript_reader.testruns.runners import BY_FRAMEWORK, CANDIDATE_WORDS, FRAMEWORKS, RUNNERS, Runner
from transcript_reader.testruns.summaries import ALL_PARSERS, ANSI, Summary, runner_never_ran

__all__ = ["TestRunInfo", "detect_test_run", "find_test_runner", "FRAMEWORKS", "PREFILTER_WORDS", "RUNNERS", "Runner"]

#: The words the reader itself adds to a test run's text (its framework name): cross-session search
#: must not require a query piece among them to be in the raw file (``search.scan``).
PREFILTER_WORDS: frozenset[str] = FRAMEWORKS

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


def _summary(framework: str, output: str | None) -> Summary | None:
    if not output:
        return None
    text = ANSI.sub("", output[-SCAN_CHARS:]).replace("\r\n", "\n")
    best: Summary | None = None
    runner = BY_FRAMEWORK.get(framework)
    for parser in (runner.parsers if runner is not None and runner.parsers else ALL_PARSERS):
        found = parser(text)
        if found is not None and (best is None or found.end > best.end):
            best = found
    return best



def detect_test_run(command: str, exit_code: int | None, output: str | None) -> TestRunInfo | None:
    """A :class:`TestRunInfo` when ``command`` runs a test runner, else None. Never raises."""
    try:
        return _detect(command, exit_code, output)
    except (ValueError, TypeError, IndexError, RecursionError):  # defensive: odd text must never crash a read
        return None


#: Every runner's command names one of its declared words (``runners.RUNNERS``); a command with none
#: is no test run (a cheap pre-filter: most commands an agent runs are ``ls``/``cat``/``sed``).
_CANDIDATE = re.compile("|".join([*CANDIDATE_WORDS, r"\bt\b"]), re.IGNORECASE)
#: The same test for ASCII text, 5-20x faster: the case-insensitive alternation costs 3-10 µs a command
#: (the engine tries every word at every position), the lowercased text's ``in`` tests under 1 µs. For
#: ASCII, IGNORECASE is exactly ASCII lowercasing; other text keeps the regex (Unicode case folding
#: matches more, e.g. ``ſ`` as ``s``). ``t(?<=\bt)\b`` is ``\bt\b`` written to start with a literal,
#: which the engine scans for directly.
_CANDIDATE_WORDS = CANDIDATE_WORDS
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
    if summary is None and runner_never_ran(exit_code if isinstance(exit_code, int) else None,
                                            output if isinstance(output, str) else None):
        return None  # the runner never started (``No module named pytest``): a failed command, no test run
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
