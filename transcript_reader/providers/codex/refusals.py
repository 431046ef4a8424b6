"""How Codex words an answer that means a call did not run, was cut off, or timed out: one table, each
wording with the place in the openai/codex source (codex-rs) that writes it. Direct calls
(``exec_command``, ``shell``, ``shell_command``, ``local_shell``, ``apply_patch``) and whole ``exec``
code-mode cells are read with the same table (``common.parse_output``).

The verdicts:

- ``refused``: Codex answered instead of running the call (the user or the auto-reviewer declined it,
  a policy forbade it, the tool does not exist, the cell's input could not start): ``executed: no``.
- ``aborted``: the turn was interrupted while the call ran; the call may have started (codex-rs writes
  the wall time it had run), so it is a failure whose ``executed`` is ``unknown`` unless a record
  proves it, never ``no``.
- ``timed_out``: the call ran and was killed at its deadline (a ``wait`` or tool result): a failure.
- ``failed``: the call started and Codex lost it (a code-mode runtime that died): a failure, whose
  ``executed`` the records decide.

Every pattern is matched at the start of the call's whole output (a command's own output always comes
after a header, ``Exit code:`` / ``Chunk ID:``, so words a program prints never match)."""

from __future__ import annotations

import re
from typing import Final

REFUSED: Final = "refused"
ABORTED: Final = "aborted"
TIMED_OUT: Final = "timed_out"
FAILED: Final = "failed"

#: (pattern matched at the start of an output, verdict). Each line names where codex-rs writes it.
WORDINGS: tuple[tuple[str, str], ...] = (
    # core/src/tools/events.rs ToolEmitter::finish: "rejected by user" normalised for shell and unified
    # exec; before the tool runtimes, core/src/codex.rs handle_container_exec_with_params on
    # ReviewDecision::Denied | Abort
    (r"exec command rejected by user", REFUSED),
    # core/src/tools/events.rs ToolEmitter::finish, the apply_patch emitter
    (r"patch rejected by user", REFUSED),
    # core/src/unified_exec/errors.rs UnifiedExecError::UserRejected
    (r"unified exec command rejected by user", REFUSED),
    # core/src/codex.rs SafetyCheck::Reject { reason } (format "exec command rejected: {reason}"), later
    # core/src/executor ExecPlan::Reject ("exec command rejected: {reason:?}")
    (r"exec command rejected: ", REFUSED),
    # core/src/apply_patch.rs SafetyCheck::Reject { reason } (format "patch rejected: {reason}")
    (r"patch rejected: ", REFUSED),
    # core/src/tools/orchestrator.rs reject_if_not_approved: ToolError::Rejected("rejected by user") as a
    # tool other than shell / apply_patch reports it
    (r"rejected by user\b", REFUSED),
    # core/src/exec_policy.rs derive_forbidden_reason: "`{command}` rejected: {justification}",
    # "... rejected: policy forbids commands starting with `{prefix}`", "... rejected: blocked by policy"
    (r"`[^\n]*` rejected: ", REFUSED),
    # core/src/exec_policy.rs PROMPT_CONFLICT_REASON, REJECT_SANDBOX_APPROVAL_REASON,
    # REJECT_RULES_APPROVAL_REASON (an approval the policy may not ask for: Forbidden)
    (r"approval required by policy(?: rule)?, but AskForApproval", REFUSED),
    # core/src/guardian/review.rs guardian_rejection_message (the auto-reviewer denied the action)
    (r"This action was rejected due to unacceptable risk\.", REFUSED),
    # core/src/guardian/review.rs guardian_timeout_message (ReviewDecision::TimedOut: Rejected, not run)
    (r"The automatic permission approval review did not finish before its deadline\.", REFUSED),
    # core/src/codex.rs handle_function_call: a tool the session does not have ("unsupported call: {name}")
    (r"unsupported call\b", REFUSED),
    # core/src/tools/registry.rs unsupported_tool_call_message: a custom tool the session does not have,
    # e.g. an `exec` cell sent to a model without code mode ("unsupported custom tool call: {name}")
    (r"unsupported custom tool call: ", REFUSED),
    # core/src/tools/code_mode/execute_handler.rs: an exec cell whose input is not raw JavaScript
    (r"exec expects raw JavaScript source text", REFUSED),
    # code-mode/src/service.rs CodeModeService::execute: a cell id already live (the cell never started)
    (r"exec cell \S+ already exists", REFUSED),
    # not located in codex-rs; kept from the first readers of this project (the TypeScript CLI era and
    # hand-written transcripts say so) and only ever read as a refusal
    (r"command rejected|user rejected|declined", REFUSED),
    # core/src/tools/parallel.rs abort_message: the turn was interrupted while the call ran, shell family
    # ("Wall time: {secs:.1} seconds\naborted by user") and any other tool ("aborted by user after {secs}s")
    (r"Wall time: [\d.]+ seconds\naborted by user", ABORTED),
    (r"aborted by user", ABORTED),
    # code-mode/src/service.rs CodeModeService::execute: the cell's runtime died before it answered
    (r"exec runtime ended unexpectedly", FAILED),
    # core/src/tools/js_repl/mod.rs and the Desktop's node REPL tools (cua_repl.js, node_repl/js): the
    # kernel was killed at its deadline ("js execution timed out; kernel reset, rerun your request")
    (r"(?:js|js_repl) execution timed out; kernel reset", TIMED_OUT),
    # core/src/mcp_tool_call.rs: an MCP call past its tool timeout
    # ("tool call error: tool call failed for `x`\nCaused by:\n    timed out awaiting tools/call after Ns")
    (r"tool call (?:error: tool call )?failed for `[^`\n]*`\s*Caused by:\s*timed out awaiting", TIMED_OUT),
)

_TABLE = re.compile("|".join(f"(?P<w{i}>{p})" for i, (p, _) in enumerate(WORDINGS)), re.I)

#: The characters a wording can open with, in any case the table's case-blind match allows: most outputs
#: open with another one (``Exit code:``, ``Script completed``, ``Chunk ID:`` aside), and are then no
#: verdict without the table being tried (it tries each wording in turn). ``tests/test_what_ran.py``
#: checks the set against the table's first characters over every code point.
OPENERS = frozenset("`" + "".join(c + c.upper() for c in "acdejprtuw"))


def verdict(text: str) -> str | None:
    """``refused``, ``aborted``, ``timed_out`` or ``failed`` when ``text`` (a call's whole output) opens with one of
    Codex's wordings for it, else None."""
    if text[:1] not in OPENERS:
        return None
    m = _TABLE.match(text)
    if m is None or m.lastgroup is None:
        return None
    return WORDINGS[int(m.lastgroup[1:])][1]
