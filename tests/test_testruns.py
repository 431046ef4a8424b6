"""Test-run detection as a table: which commands run tests, and the result each exit code / summary
gives. Each row reads ``command, exit code, output -> framework, result, passed, failed, skipped``."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from transcript_reader.model import TestResult
from transcript_reader.testruns import FRAMEWORKS, Runner, TestRunInfo, detect_test_run
from transcript_reader.testruns import RUNNERS as DECLARED
from transcript_reader.testruns.summaries import runner_never_ran

P, F, U = TestResult.PASS, TestResult.FAIL, TestResult.UNKNOWN

# ------------------------------------------------------------------------------ which commands run tests

RUNNERS = [
    ("pytest", "pytest"),
    ("pytest -q tests/test_calc.py", "pytest"),
    ("py.test -x", "pytest"),
    ("python -m pytest -q", "pytest"),
    ("python3.11 -m pytest", "pytest"),
    (".venv/bin/python -m pytest tests", "pytest"),
    (".venv/bin/pytest", "pytest"),
    ("uv run pytest -x", "pytest"),
    ("uv run --with pytest-cov pytest", "pytest"),
    ("poetry run pytest", "pytest"),
    ("pipenv run python -m pytest", "pytest"),
    ("coverage run -m pytest", "pytest"),
    ("PYTHONPATH=src pytest -q", "pytest"),
    ("env CI=1 pytest", "pytest"),
    ("timeout 120 pytest -q", "pytest"),
    ("python -m unittest discover -s tests", "unittest"),
    ("python3 -m unittest -v test_calc", "unittest"),
    ("python manage.py test", "django"),
    ("tox -e py311", "tox"),
    ("nox -s tests", "nox"),
    ("npm test", "npm"),
    ("npm t", "npm"),
    ("npm run test", "npm"),
    ("npm run test:unit -- --watch=false", "npm"),
    ("npm --prefix web test", "npm"),
    ("pnpm test", "pnpm"),
    ("pnpm -C packages/core run test", "pnpm"),
    ("yarn test", "yarn"),
    ("yarn run test", "yarn"),
    ("bun test", "bun"),
    ("bun run test", "bun"),
    ("npx jest src", "jest"),
    ("jest --ci", "jest"),
    ("yarn jest", "jest"),
    ("npx vitest run", "vitest"),
    ("pnpm vitest run", "vitest"),
    ("vitest", "vitest"),
    ("mocha test/*.js", "mocha"),
    ("./node_modules/.bin/mocha", "mocha"),
    ("go test ./...", "go"),
    ("go test -run TestAdd -v ./pkg/calc", "go"),
    ("cargo test", "cargo"),
    ("cargo +nightly test --all", "cargo"),
    ("cargo nextest run", "nextest"),
    ("mvn test", "maven"),
    ("mvn -q -B clean verify", "maven"),
    ("./mvnw test -Dtest=CalcTest", "maven"),
    ("gradle test", "gradle"),
    ("./gradlew test", "gradle"),
    ("./gradlew :app:test --info", "gradle"),
    ("./gradlew check", "gradle"),
    ("dotnet test", "dotnet"),
    ("dotnet test MySln.sln --no-build", "dotnet"),
    ("rspec", "rspec"),
    ("bundle exec rspec spec/models", "rspec"),
    ("bundle exec rake test", "rake"),
    ("phpunit", "phpunit"),
    ("vendor/bin/phpunit --filter CalcTest", "phpunit"),
    ("ctest --output-on-failure", "ctest"),
    ("make test", "make"),
    ("make check", "make"),
    ("make -C build test", "make"),
    ("make -j4 tests", "make"),
    ("deno test --allow-read", "deno"),
    ("bazel test //...", "bazel"),
    ("bazelisk test //pkg:calc_test", "bazel"),
    ("swift test", "swift"),
    ("mix test", "mix"),
    # compound commands and shell wrappers
    ("cd x && pytest -q", "pytest"),
    ("cd web && npm ci && npm test", "npm"),
    ("source .venv/bin/activate && pytest", "pytest"),
    ("bash -lc 'cd /repo && python -m pytest -q'", "pytest"),
    ("/bin/bash -lc \"go test ./...\"", "go"),
    ("sh -c 'cargo test 2>&1 | tail -n 20'", "cargo"),
    ("pytest -q 2>&1 | tail -n 5", "pytest"),
    ("set -e\ncd app\npytest", "pytest"),
    ("ls; make check || true", "make"),
    ("(cd sub && npm test)", "npm"),
    ("yarn workspace @app/web test", "yarn"),
    ("cargo t", "cargo"),
    ("cat > notes.txt <<'EOF'\nnothing to run\nEOF\npytest -q", "pytest"),
    ("cat <<EOF > cfg.ini && make check\n[x]\nEOF", "make"),
]


@pytest.mark.parametrize(("command", "framework"), RUNNERS)
def test_runner_detected(command: str, framework: str) -> None:
    info = detect_test_run(command, None, None)
    assert info is not None, command
    assert info.framework == framework


NOT_RUNNERS = [
    "grep pytest setup.cfg",
    "grep -rn 'npm test' .",
    "echo npm test",
    "echo 'run pytest'",
    "pip install pytest",
    "pip install -U pytest pytest-cov",
    "uv pip install pytest",
    "cat tests/test_x.py",
    "ls tests",
    "sed -n 1,20p pytest.ini",
    "npm install --save-dev jest",
    "npm run build",
    "npm run lint",
    "yarn add vitest",
    "go build ./...",
    "go vet ./...",
    "cargo build",
    "cargo check",
    "mvn package -DskipTests",
    "./gradlew build",
    "dotnet build",
    "make",
    "make all",
    "make install",
    "python -c 'import pytest'",
    "python setup.py sdist",
    "python tests/helper.py",
    "which pytest",
    "pytest --version",
    "npx jest --help",
    "git commit -m 'make test pass'",
    "rg 'cargo test'",
    "find . -name '*_test.go'",
    "apply_patch <<'EOF'\n*** Begin Patch\n*** End Patch\nEOF",
    "cat > run_tests.sh <<'EOF'\n#!/bin/sh\npytest -q\nEOF",  # a script written, not run
    "cat > Makefile <<EOF\ntest:\n\tgo test ./...\nEOF",
    "yarn workspace @app/web build",
    "",
    "   ",
    "echo 'unterminated",
]


@pytest.mark.parametrize("command", NOT_RUNNERS)
def test_not_a_test_run(command: str) -> None:
    assert detect_test_run(command, 0, "3 passed in 0.1s") is None


# ------------------------------------------------------------------------------------------ results

RESULTS = [
    # exit code first
    ("pytest -q", 0, "", "pytest", P, None, None, None),
    ("pytest -q", 1, "", "pytest", F, None, None, None),
    ("pytest -q", 0, "1 failed, 2 passed in 0.1s", "pytest", P, 2, 1, 0),  # the exit code wins
    ("go test ./...", 2, "ok  \texample.com/calc\t0.01s\n", "go", F, None, None, None),
    # no exit code: the runner's summary
    ("pytest", None, "==== 3 passed, 1 failed, 2 skipped in 0.10s ====", "pytest", F, 3, 1, 2),
    ("pytest", None, "============ 5 passed in 1.23s ============", "pytest", P, 5, 0, 0),
    ("pytest -q", None, "....\n4 passed, 1 warning in 0.02s\n", "pytest", P, 4, 0, 0),
    ("pytest", None, "=== 1 passed, 2 errors in 0.3s ===", "pytest", F, 1, 2, 0),
    ("pytest", None, "\x1b[32m==== 2 passed in 0.01s ====\x1b[0m", "pytest", P, 2, 0, 0),
    ("pytest", None, "=== no tests ran in 0.01s ===", "pytest", U, 0, 0, 0),
    ("py.test", None, "===== 2 passed, 1 skipped in 0.05 seconds =====", "pytest", P, 2, 0, 1),  # old pytest
    ("python -m unittest", None, "....\n----\nRan 4 tests in 0.001s\n\nOK\n", "unittest", P, 4, 0, 0),
    ("python -m unittest", None, "Ran 5 tests in 0.01s\n\nFAILED (failures=1)\n", "unittest", F, 4, 1, 0),
    ("python -m unittest", None, "Ran 6 tests in 0.01s\n\nFAILED (failures=1, errors=1, skipped=1)",
     "unittest", F, 3, 2, 1),
    ("python -m unittest", None, "Ran 3 tests in 0.01s\n\nOK (skipped=1)", "unittest", P, 2, 0, 1),
    ("npx jest", None, "Tests:       1 failed, 4 passed, 5 total\nTime: 1s", "jest", F, 4, 1, 0),
    ("npx jest", None, "Tests:       1 skipped, 4 passed, 5 total", "jest", P, 4, 0, 1),
    ("npx vitest run", None, " Test Files  1 passed (1)\n      Tests  4 passed (4)\n", "vitest", P, 4, 0, 0),
    ("npx vitest run", None, "      Tests  1 failed | 3 passed (4)\n", "vitest", F, 3, 1, 0),
    ("npm test", None, "> jest\n\nTests:       2 passed, 2 total\n", "npm", P, 2, 0, 0),
    ("mocha", None, "\n  3 passing (12ms)\n  1 failing\n", "mocha", F, 3, 1, 0),
    ("mocha", None, "\n  3 passing (12ms)\n  2 pending\n", "mocha", P, 3, 0, 2),
    ("go test ./...", None, "ok  \texample.com/calc\t0.01s\n", "go", P, None, None, None),
    # without -v, go prints only failing tests: how many passed or were skipped is not stated
    ("go test ./...", None, "--- FAIL: TestAdd (0.00s)\nFAIL\nFAIL\texample.com/calc\t0.01s\n", "go", F,
     None, 1, None),
    ("go test -v ./...", None, "=== RUN TestA\n--- PASS: TestA (0.00s)\n--- SKIP: TestB (0.00s)\nPASS\n"
     "ok  \tx\t0.1s\n", "go", P, 1, 0, 1),
    ("cargo test", None, "test result: ok. 3 passed; 0 failed; 1 ignored; 0 measured; 0 filtered out",
     "cargo", P, 3, 0, 1),
    ("cargo test", None, "test result: ok. 2 passed; 0 failed; 0 ignored;\n"
     "test result: FAILED. 1 passed; 1 failed; 0 ignored;", "cargo", F, 3, 1, 0),
    ("cargo nextest run", None, "     Summary [   0.123s] 5 tests run: 4 passed, 1 failed, 0 skipped",
     "nextest", F, 4, 1, 0),
    ("bundle exec rspec", None, "Finished in 0.1 seconds\n5 examples, 1 failure\n", "rspec", F, 4, 1, 0),
    ("rspec", None, "5 examples, 0 failures, 2 pending\n", "rspec", P, 3, 0, 2),
    ("phpunit", None, "OK (5 tests, 9 assertions)\n", "phpunit", P, 5, 0, 0),
    ("phpunit", None, "FAILURES!\nTests: 5, Assertions: 9, Failures: 1.\n", "phpunit", F, 4, 1, 0),
    ("phpunit", None, "OK, but incomplete, skipped, or risky tests!\nTests: 5, Assertions: 9, Skipped: 1.\n",
     "phpunit", P, 4, 0, 1),
    ("dotnet test", None, "Passed!  - Failed:     0, Passed:     5, Skipped:     0, Total:     5", "dotnet",
     P, 5, 0, 0),
    ("dotnet test", None, "Failed!  - Failed:     1, Passed:     4, Skipped:     1, Total:     6", "dotnet",
     F, 4, 1, 1),
    ("dotnet test", None, "Test summary: total: 5, failed: 0, succeeded: 5, skipped: 0, duration: 1s",
     "dotnet", P, 5, 0, 0),
    ("mvn test", None, "[INFO] Tests run: 5, Failures: 1, Errors: 0, Skipped: 0\n[INFO] BUILD FAILURE",
     "maven", F, 4, 1, 0),
    ("mvn test", None, "[INFO] Tests run: 2, Failures: 0, Errors: 0, Skipped: 0, Time elapsed: 0.1 s - in A\n"
     "[INFO] Results:\n[INFO] Tests run: 7, Failures: 0, Errors: 0, Skipped: 1\n[INFO] BUILD SUCCESS",
     "maven", P, 6, 0, 1),
    ("mvn test", None, "[INFO] Tests run: 12, Failures: 0, Errors: 0, Skipped: 10, Time elapsed: 1 s - in A\n"
     "[INFO] Tests run: 40, Failures: 2, Errors: 1, Skipped: 0\n", "maven", F, 37, 3, 0),  # the total, not a class
    ("mvn test", None, "[INFO] Tests run: 12, Failures: 0, Errors: 0, Skipped: 10, Time elapsed: 1 s - in A\n",
     "maven", U, None, None, None),  # one class's line is no run total
    ("./gradlew test", None, "5 tests completed, 1 failed\n\nBUILD FAILED in 3s", "gradle", F, 4, 1, 0),
    ("./gradlew test", None, "BUILD SUCCESSFUL in 2s", "gradle", P, None, None, None),
    ("ctest", None, "100% tests passed, 0 tests failed out of 3\n", "ctest", P, 3, 0, None),
    ("ctest", None, "67% tests passed, 1 tests failed out of 3\n", "ctest", F, 2, 1, None),
    ("deno test", None, "ok | 5 passed | 0 failed (12ms)\n", "deno", P, 5, 0, 0),
    ("deno test", None, "FAILED | 4 passed | 1 failed | 2 ignored (20ms)\n", "deno", F, 4, 1, 2),
    ("bun test", None, " 5 pass\n 1 fail\n 9 expect() calls\nRan 6 tests across 2 files.", "bun", F, 5, 1, 0),
    ("bazel test //...", None, "Executed 3 out of 3 tests: 3 tests pass.", "bazel", P, 3, None, None),
    ("make test", None, "python -m pytest\n=== 2 passed in 0.1s ===\n", "make", P, 2, 0, 0),
    ("tox", None, "=== 1 failed, 1 passed in 0.2s ===\npy311: FAIL code 1", "tox", F, 1, 1, 0),
    # neither tells
    ("pytest", None, None, "pytest", U, None, None, None),
    ("pytest", None, "collecting ...", "pytest", U, None, None, None),
    ("make check", None, "all good", "make", U, None, None, None),
    # the runner's status is not the command's: the summary decides
    ("pytest -q | tail -n 3", 0, "1 failed, 2 passed in 0.1s", "pytest", F, 2, 1, 0),
    ("pytest -q | tail -n 3", 0, "", "pytest", U, None, None, None),
    ("pytest; echo done", 0, "3 passed in 0.1s", "pytest", P, 3, 0, 0),
    ("pytest || true", 0, "1 failed in 0.1s", "pytest", F, 0, 1, 0),
    ("pytest && echo ok", 0, "", "pytest", P, None, None, None),  # && needed pytest to pass
    ("pytest && npm run lint", 1, "", "pytest", U, None, None, None),  # which one failed?
    ("pytest && npm run lint", 1, "2 passed in 0.1s", "pytest", P, 2, 0, 0),
    ("cd app && pytest", 1, "", "pytest", F, None, None, None),
]


@pytest.mark.parametrize(
    ("command", "exit_code", "output", "framework", "result", "passed", "failed", "skipped"), RESULTS
)
def test_result_and_counts(
    command: str,
    exit_code: int | None,
    output: str | None,
    framework: str,
    result: TestResult,
    passed: int | None,
    failed: int | None,
    skipped: int | None,
) -> None:
    assert detect_test_run(command, exit_code, output) == TestRunInfo(
        framework=framework, result=result, passed=passed, failed=failed, skipped=skipped
    )


def test_the_last_summary_wins() -> None:
    """A re-run in one command: the summary printed last is the run's final word."""
    out = "=== 1 failed, 1 passed in 0.1s ===\n... fixing ...\n=== 2 passed in 0.1s ===\n"
    info = detect_test_run("pytest; pytest", None, out)
    assert info == TestRunInfo("pytest", P, 2, 0, 0)


def test_huge_output_is_read_from_the_end() -> None:
    out = "x" * 3_000_000 + "\n=== 7 passed in 9.0s ===\n"
    info = detect_test_run("pytest", None, out)
    assert info is not None and (info.result, info.passed) == (P, 7)


# ------------------------------------------------------------------------------------------ property


@settings(max_examples=400, deadline=None)
@given(
    st.one_of(st.text(max_size=80), st.sampled_from([c for c, _ in RUNNERS] + NOT_RUNNERS)),
    st.one_of(st.none(), st.integers(min_value=-(2**40), max_value=2**40)),
    st.one_of(st.none(), st.text(max_size=300), st.sampled_from([r[2] for r in RESULTS if r[2]])),
)
def test_never_raises(command: str, exit_code: int | None, output: str | None) -> None:
    """Arbitrary text never raises, and a detected run is always well formed."""
    info = detect_test_run(command, exit_code, output)
    if info is not None:
        assert info.framework and info.result in set(TestResult)
        for count in (info.passed, info.failed, info.skipped):
            assert count is None or count >= 0


_PLAIN = [c for c, _ in RUNNERS if not any(op in c for op in ("&&", "||", ";", "|", "\n", "-c "))]


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(_PLAIN), st.integers(min_value=-255, max_value=255), st.text(max_size=200))
def test_exit_code_decides_for_a_plain_runner(command: str, exit_code: int, output: str) -> None:
    """When the runner is the whole command, its exit code is the result whatever the output says, once
    the runner started (a runner that never started is no test run: see the test below)."""
    info = detect_test_run(command, exit_code, output)
    if runner_never_ran(exit_code, output):
        assert info is None
        return
    assert info is not None
    assert info.result is (P if exit_code == 0 else F)


@pytest.mark.parametrize("command,exit_code,output", [
    ("python -m pytest -q", 1, "/usr/bin/python3: No module named pytest\n"),
    ("python3 -m unittest discover", 1, "/usr/bin/python3: No module named unittest\n"),
    ("pytest -q", 127, "bash: line 1: pytest: command not found\n"),
    ("pytest -q", 127, ""),
    ("cd app && pytest", 127, "sh: 1: pytest: not found\n"),
    ("npm test", 1, 'npm error Missing script: "test"\n'),
    ("cargo nextest run", 101, "error: no such command: `nextest`\n"),
    ("pytest", 1, "'pytest' is not recognized as an internal or external command,\n"),
])
def test_a_runner_that_never_started_is_no_test_run(command: str, exit_code: int, output: str) -> None:
    """Issue #14: "No module named pytest" is not a failed test run. The runner never ran: the command
    failed (its shell_command item keeps the exit code and ``failed``), but no test did."""
    assert detect_test_run(command, exit_code, output) is None


@pytest.mark.parametrize("command,output,failed", [
    # a collection error is a run of the runner: its summary says so
    ("python -m pytest -q", "E   ModuleNotFoundError: No module named 'app'\n=== 1 error in 0.12s ===\n", 1),
    ("python -m pytest -q", "F.\n=== 1 failed, 1 passed in 0.1s ===\n", 1),
])
def test_a_runner_that_started_and_failed_is_a_failed_run(command: str, output: str, failed: int) -> None:
    info = detect_test_run(command, 1, output)
    assert info is not None and info.result is F and info.failed == failed


@pytest.mark.parametrize(
    "output",
    [
        "=\n" * 100_000,  # pytest's ==== rules without a summary
        "\n " * 100_000,
        "Ran 1 tests in 1s" + "\n" * 100_000,  # unittest header, no verdict
        "\x1b]" * 100_000,  # unterminated terminal escapes
        " 1 pass\n" * 100_000,
        "Tests: " + "1 passed " * 100_000,
    ],
    ids=["rules", "blank-lines", "unittest-no-verdict", "escapes", "bun-no-fail", "jest-no-end"],
)
def test_pathological_output_is_read_in_one_pass(output: str) -> None:
    """Summary patterns never scan ahead across lines (these inputs took minutes with ``^\\s*…``
    patterns); each gives a plain answer."""
    info = detect_test_run("make test", None, output)
    assert info is not None and info.framework == "make"
    assert info.failed in (None, 0)


def test_long_scripts_are_read_in_one_pass() -> None:
    """Thousands of simple commands before the runner (connectors are computed only for the runner)."""
    script = "echo step\n" * 20_000 + "pytest -q"
    assert detect_test_run(script, 0, "") == TestRunInfo("pytest", P)


@pytest.mark.parametrize(
    ("command", "framework"),
    [
        (".\\gradlew.bat test", "gradle"),
        ("mvn.cmd test", "maven"),
        ("npx.cmd jest", "jest"),
        ("pnpm.cmd test", "pnpm"),
        ("python.exe -m pytest -q", "pytest"),
        ("C:\\Python311\\python.exe -m pytest", "pytest"),
        ("& .\\.venv\\Scripts\\python.exe -m pytest tests", "pytest"),  # PowerShell's call operator
        ("Set-Location C:\\repo; npm test", "npm"),
        ("pwsh -NoProfile -Command \"python -m pytest -q\"", "pytest"),
        ("cmd /c \"dotnet test\"", "dotnet"),
    ],
)
def test_windows_commands_are_test_runs(command: str, framework: str) -> None:
    """Windows sessions run tests through ``.exe``/``.cmd``/``.bat`` launchers, backslash paths and
    PowerShell or cmd wrappers; the runner is the same."""
    run = detect_test_run(command, 0, "3 passed in 0.10s")
    assert run is not None and run.framework == framework


def test_posix_escapes_still_apply_without_a_windows_path() -> None:
    run = detect_test_run('echo "a\\"b" && pytest -q', 1, "1 failed, 2 passed in 0.1s")
    assert run is not None and (run.framework, run.result) == ("pytest", "fail")


# ---------------------------------------------------------------- every runner declared once


@pytest.mark.parametrize("runner", DECLARED, ids=[r.framework for r in DECLARED])
def test_every_declared_runner_is_detected_through_the_pre_filter(runner: Runner) -> None:
    """A runner's example command is detected as its framework: its words pass the pre-filter (a
    runner declared with words its commands do not contain would be silently undetectable)."""
    assert runner.words and all(w == w.lower() for w in runner.words)
    info = detect_test_run(runner.example, 0, "")
    assert info is not None and info.framework == runner.framework


def test_every_framework_the_command_side_names_is_declared() -> None:
    """Every framework name ``find_test_runner`` can return has a declaration (words, example)."""
    import ast
    import inspect

    from transcript_reader.testruns import commands

    names: set[str] = set(commands._NODE_PM.values()) | set(commands._NODE_RUNNERS.values())
    names |= set(commands._TEST_SUBCOMMAND_TOOLS)
    tree = ast.parse(inspect.getsource(commands.find_test_runner))
    for node in ast.walk(tree):
        if isinstance(node, ast.Return) and node.value is not None:
            for sub in ast.walk(node.value):
                if isinstance(sub, ast.Dict):
                    names.update(v.value for v in sub.values if isinstance(v, ast.Constant))
                elif isinstance(sub, ast.IfExp) and isinstance(sub.body, ast.Constant):
                    names.add(sub.body.value)
            if isinstance(node.value, ast.Constant) and node.value.value is not None:
                names.add(node.value.value)
    names.discard("gmake")
    names |= {"make"}  # `make`/`gmake`/`ninja` return their own name (gmake as make)
    missing = sorted(n for n in names if isinstance(n, str) and n not in FRAMEWORKS)
    assert not missing, f"runners without a declaration in testruns/runners.py: {missing}"
    assert len(names) >= 40
