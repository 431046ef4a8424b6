"""Every test runner the reader knows, declared once: the framework name a test run reports, the
words a command invoking it always contains (the cheap pre-filter: a command with none of them is no
test run, and cross-session search knows a framework name may appear in a test run's text), a command
that runs it (the tests check it is detected, through the pre-filter), and its own summary parsers.

Adding a runner: teach ``commands.find_test_runner`` to recognise its command, and declare it here
with its words and example; a runner without a declaration fails ``tests/test_testruns.py``."""

from __future__ import annotations

from dataclasses import dataclass

from transcript_reader.testruns.summaries import (
    Parser,
    parse_bazel,
    parse_cargo,
    parse_ctest,
    parse_deno,
    parse_dotnet,
    parse_go,
    parse_gradle,
    parse_jest_vitest,
    parse_maven,
    parse_mocha,
    parse_nextest,
    parse_phpunit,
    parse_pytest,
    parse_rspec,
    parse_unittest,
)


@dataclass(frozen=True, slots=True)
class Runner:
    framework: str
    #: lower-case words, at least one of which every command invoking the runner contains (``t`` only
    #: as a word of its own: ``npm t``)
    words: tuple[str, ...]
    example: str
    #: the runner's own summary parsers; () for a runner that runs another (tox, make, npm…): then every
    #: parser is tried and the summary printed last wins
    parsers: tuple[Parser, ...] = ()


_NODE_PM_WORDS = ("test", "t", "tst")

RUNNERS: tuple[Runner, ...] = (
    Runner("pytest", ("test",), "pytest -q", (parse_pytest,)),
    Runner("unittest", ("test",), "python -m unittest", (parse_unittest,)),
    Runner("django", ("test",), "python manage.py test", (parse_unittest,)),
    Runner("setuptools", ("test",), "python setup.py test", (parse_unittest, parse_pytest)),
    Runner("nose", ("nose",), "nosetests", (parse_unittest,)),
    Runner("nose2", ("nose",), "nose2", (parse_unittest,)),
    Runner("green", ("green",), "python -m green"),
    Runner("tox", ("tox",), "tox -e py311"),
    Runner("nox", ("nox",), "nox -s tests"),
    Runner("trial", ("trial",), "trial mypkg"),
    Runner("ward", ("ward",), "ward"),
    Runner("npm", _NODE_PM_WORDS, "npm t"),
    Runner("pnpm", _NODE_PM_WORDS, "pnpm test"),
    Runner("yarn", _NODE_PM_WORDS, "yarn run test:unit"),
    Runner("bun", _NODE_PM_WORDS, "bun test"),
    Runner("jest", ("jest",), "jest --ci", (parse_jest_vitest,)),
    Runner("vitest", ("test",), "vitest run", (parse_jest_vitest,)),
    Runner("mocha", ("mocha",), "mocha", (parse_mocha,)),
    Runner("ava", ("ava",), "ava"),
    Runner("karma", ("karma",), "karma start"),
    Runner("playwright", ("playwright",), "playwright test"),
    Runner("cypress", ("cypress",), "cypress run"),
    Runner("tap", ("tap",), "tap"),
    Runner("jasmine", ("jasmine",), "jasmine"),
    Runner("go", ("test",), "go test ./...", (parse_go,)),
    Runner("cargo", ("test", "t"), "cargo t", (parse_cargo,)),
    Runner("nextest", ("test",), "cargo nextest run", (parse_nextest,)),
    Runner("maven", ("test", "verify"), "mvn verify", (parse_maven,)),
    Runner("gradle", ("test", "check"), "./gradlew check", (parse_gradle,)),
    Runner("dotnet", ("test",), "dotnet test", (parse_dotnet,)),
    Runner("rspec", ("spec",), "rspec", (parse_rspec,)),
    Runner("rake", ("test", "spec"), "rake spec"),
    Runner("phpunit", ("phpunit", "test"), "paratest", (parse_phpunit,)),
    Runner("pest", ("pest",), "pest"),
    Runner("ctest", ("test",), "ctest", (parse_ctest,)),
    Runner("make", ("test", "check"), "make check"),
    Runner("ninja", ("test", "check"), "ninja test"),
    Runner("deno", ("test",), "deno test", (parse_deno,)),
    Runner("bazel", ("test", "coverage"), "bazel coverage //...", (parse_bazel,)),
    *(Runner(tool, ("test",), f"{tool} test") for tool in (
        "swift", "mix", "flutter", "dart", "zig", "meson", "stack", "cabal", "lein", "sbt")),
)

BY_FRAMEWORK: dict[str, Runner] = {r.framework: r for r in RUNNERS}

#: Every framework name a test run may report (the words the reader adds to a test run's text).
FRAMEWORKS: frozenset[str] = frozenset(BY_FRAMEWORK)

#: The pre-filter's words (``t`` is matched as a word of its own, the rest as substrings).
CANDIDATE_WORDS: tuple[str, ...] = tuple(dict.fromkeys(w for r in RUNNERS for w in r.words if w != "t"))
