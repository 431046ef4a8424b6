"""``exec_script_analyze`` runs in a child process, so a hostile script costs one call its time budget and
never the server: a thread cannot be stopped, and a parse in C holds the interpreter while it runs (a
120 KB script once held every other call for 37 s). The child reads ``{"script", "parser"}`` as JSON on
stdin and writes the analysis JSON (``exec_grammar.render.analysis_to_json``) on stdout; over the budget
it is killed and the call is ``timeout``. The budget counts from the child's "ready" (its imports done),
and one spare child is kept started, so a call does not wait for an interpreter to start.

    python -m transcript_reader.mcp.worker   # the child's entry point
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from typing import Any

from transcript_reader.mcp.names import ErrorCode, ToolFailure

READY = b"ready\n"


#: How long a child may take to start (an interpreter and the analyzer's imports), apart from the budget.
START_S = 20.0
_spare: subprocess.Popen[bytes] | None = None
_spare_lock = threading.Lock()


def close_and_wait(proc: subprocess.Popen[Any], timeout: float = 60) -> None:
    """End a child that serves on its stdin: close the stdin, wait, kill it if it does not go."""
    if proc.stdin is not None:
        proc.stdin.close()
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def _start() -> subprocess.Popen[bytes]:
    return subprocess.Popen([sys.executable, "-m", "transcript_reader.mcp.worker"], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, close_fds=True)


def _take() -> subprocess.Popen[bytes]:
    """A started child: the spare one when there is one (then another spare is started for the next
    call), else a new one. The time budget counts from the child's "ready", not from its start."""
    global _spare
    with _spare_lock:
        proc, _spare = _spare, None
        if proc is None or proc.poll() is not None:
            proc = _start()
        _spare = _start()
    return proc


def _ready(proc: subprocess.Popen[bytes]) -> bool:
    assert proc.stdout is not None
    box: list[bytes] = []
    reader = threading.Thread(target=lambda: box.append(proc.stdout.readline() if proc.stdout else b""), daemon=True)
    reader.start()
    reader.join(START_S)
    return bool(box) and box[0] == READY


def analyze_in_worker(script: str, parser: str, timeout_s: float) -> dict[str, Any]:
    """The analysis of ``script`` from a child process, within ``timeout_s`` seconds of analysis."""
    request = json.dumps({"script": script, "parser": parser}).encode("utf-8")
    try:
        proc = _take()
    except OSError as exc:
        raise ToolFailure(ErrorCode.INTERNAL_ERROR, f"the analyzer could not start: {exc.strerror}") from None
    try:
        if not _ready(proc):
            raise ToolFailure(ErrorCode.INTERNAL_ERROR, "the analyzer did not start; see the server log")
        out, _ = proc.communicate(request, timeout=timeout_s)
    except subprocess.TimeoutExpired:
        raise ToolFailure(ErrorCode.TIMEOUT, f"the analysis ran over the server's time budget ({timeout_s:g} s; "
                          "--call-timeout)") from None
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    try:
        answer: dict[str, Any] = json.loads(out)
    except ValueError:
        answer = {}
    if proc.returncode != 0 or "error" in answer:
        code = answer.get("error", {}).get("code", ErrorCode.INTERNAL_ERROR)
        message = answer.get("error", {}).get("message", "the analyzer failed; see the server log")
        raise ToolFailure(code, message)
    return answer


def main() -> int:
    import exec_grammar
    from exec_grammar.render import analysis_to_json

    for parser in ("tree-sitter", "esprima", "lexer"):  # load each parser now: the budget is the analysis's
        exec_grammar.analyze("tools.exec_command({cmd: 'true'})", parser=parser)
    sys.stdout.buffer.write(READY)
    sys.stdout.flush()
    data = sys.stdin.buffer.read()
    if not data:  # the server went away (a spare child is never used then)
        return 0
    request = json.loads(data)

    try:
        analysis = exec_grammar.analyze(request["script"], parser=request["parser"])
    except ValueError as exc:  # an unknown parser name reaches here only if the enum and the analyzer disagree
        sys.stdout.write(json.dumps({"error": {"code": ErrorCode.INVALID_ARGUMENT, "message": str(exc)}}))
        return 0
    sys.stdout.write(json.dumps(analysis_to_json(analysis)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
