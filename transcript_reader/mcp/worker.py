"""``exec_script_analyze``: answered in process within its time budget, in a killable child process only
for what runs over it. A real cell is analysed in well under a millisecond, and starting a child cost
0.34-2 s a call; but a hostile script can run for seconds (deeply nested literals are quadratic; a parse
in C once held the interpreter for 37 s), and a thread cannot be stopped. So the analysis starts in a
thread with a slice of the budget (:data:`IN_PROCESS_S`, at most a quarter); past it, the call goes to a
child with the rest of the budget, killed at its end (the call is then ``timeout``). One in-process
analysis at a time: while one runs, or one left over its slice is still running, a call goes straight to
a child, so hostile scripts cost the server at most one busy thread, never the others' answers.

The child reads ``{"script", "parser"}`` as JSON on stdin and writes the analysis JSON
(``exec_grammar.render.analysis_to_json``) on stdout. Its budget counts from its "ready" (its imports
done), and once a child has been needed one spare is kept started.

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


#: The in-process slice of a call's budget: far above any real cell's analysis (0.3 ms), small enough that
#: a script running over it leaves the rest of the budget to a child.
IN_PROCESS_S = 0.5
#: Longer scripts go straight to a child: what a script left over its slice still costs the server (one
#: thread, to its end) is bounded by its size (the worst known shape, nested braces, is quadratic: about
#: 10 s of one core at this size, where a 200,000-character one would take half an hour).
IN_PROCESS_MAX_CHARS = 16_000
_in_process = threading.Semaphore(1)


def analyze_script(script: str, parser: str, timeout_s: float) -> dict[str, Any]:
    """The analysis JSON of ``script``: in process when it is done within its slice of ``timeout_s``,
    else from a child process within what is left of the budget."""
    slice_s = min(IN_PROCESS_S, timeout_s / 4)
    if len(script) > IN_PROCESS_MAX_CHARS or not _in_process.acquire(blocking=False):
        return analyze_in_worker(script, parser, timeout_s)
    box: dict[str, Any] = {}

    def run() -> None:
        try:
            from exec_grammar import analyze
            from exec_grammar.render import analysis_to_json

            box["answer"] = analysis_to_json(analyze(script, parser=parser))
        except Exception as exc:  # noqa: BLE001 - reported to the caller below, never lost in the thread
            box["error"] = exc
        finally:
            _in_process.release()

    thread = threading.Thread(target=run, daemon=True, name="mcp-analyze")
    thread.start()
    thread.join(slice_s)
    if thread.is_alive():  # over its slice: a child gets the rest of the budget (this thread is left to end)
        return analyze_in_worker(script, parser, max(timeout_s - slice_s, 0.1))
    error = box.get("error")
    if isinstance(error, ValueError):  # an unknown parser name: only if the enum and the analyzer disagree
        raise ToolFailure(ErrorCode.INVALID_ARGUMENT, str(error))
    if error is not None:
        raise ToolFailure(ErrorCode.INTERNAL_ERROR, f"the analyzer failed ({type(error).__name__})")
    answer: dict[str, Any] = box["answer"]
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
