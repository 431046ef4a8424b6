"""``exec_script_analyze`` runs in a child process, so a hostile script costs one call its time budget and
never the server: a thread cannot be stopped, and a parse in C holds the interpreter while it runs (a
120 KB script once held every other call for 37 s). The child reads ``{"script", "parser"}`` as JSON on
stdin and writes the analysis JSON (``exec_grammar.render.analysis_to_json``) on stdout; over the budget
it is killed and the call is ``timeout``.

    python -m transcript_reader.mcp.worker   # the child's entry point
"""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

from transcript_reader.mcp.names import ErrorCode, ToolFailure


def analyze_in_worker(script: str, parser: str, timeout_s: float) -> dict[str, Any]:
    """The analysis of ``script`` from a fresh child process, within ``timeout_s`` seconds."""
    request = json.dumps({"script": script, "parser": parser}).encode("utf-8")
    try:
        proc = subprocess.Popen([sys.executable, "-m", "transcript_reader.mcp.worker"], stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, close_fds=True)
    except OSError as exc:
        raise ToolFailure(ErrorCode.INTERNAL_ERROR, f"the analyzer could not start: {exc.strerror}") from None
    try:
        out, _ = proc.communicate(request, timeout=timeout_s)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
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
    request = json.loads(sys.stdin.buffer.read())
    import exec_grammar
    from exec_grammar.render import analysis_to_json

    try:
        analysis = exec_grammar.analyze(request["script"], parser=request["parser"])
    except ValueError as exc:  # an unknown parser name reaches here only if the enum and the analyzer disagree
        sys.stdout.write(json.dumps({"error": {"code": ErrorCode.INVALID_ARGUMENT, "message": str(exc)}}))
        return 0
    sys.stdout.write(json.dumps(analysis_to_json(analysis)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
