"""The names every part of the MCP server shares: tools, error codes, the refusal type, and the constants
of the wire. Imported by the fast start-up path (:mod:`.stdio`), so it imports nothing heavy."""

from __future__ import annotations

import enum

SERVER_NAME = "transcript-reader"
#: The package version ``initialize`` reports, kept here because ``importlib.metadata`` alone costs
#: ~0.15 s at start-up; a test holds it equal to the installed distribution's version.
SERVER_VERSION = "0.1.0"

#: Size of everything in a result that is not items/matches (path, stats, flags). A result's text never
#: exceeds ``maxChars + ENVELOPE_CHARS``; the server boundary enforces it on the serialized text.
ENVELOPE_CHARS = 4_000

#: Inspect has no maxChars parameter; its answer is held to the read default plus the envelope.
INSPECT_CHARS = 24_000 + ENVELOPE_CHARS

#: The largest script ``exec_script_analyze`` takes (a real cell is a few KB; bigger is ``too_large``).
MAX_SCRIPT_CHARS = 200_000

MIB = 1024 * 1024

#: Wire profiles: ours (the default) and the origin's exact shapes (peers.md §1).
WIRE_OURS = "transcript-reader"
WIRE_AGENT_CODE = "agent-code"
WIRES = (WIRE_OURS, WIRE_AGENT_CODE)


class ToolName(enum.StrEnum):
    READ = "agent_transcript_read_file"
    SEARCH = "agent_transcript_search_file"
    INSPECT = "agent_transcript_inspect_file"
    LIST_SESSIONS = "agent_transcript_list_sessions"
    ANALYZE = "exec_script_analyze"
    USAGE = "agent_transcript_usage"


class ErrorCode(enum.StrEnum):
    """The stable codes a tool error carries (internal_error only for our own bugs)."""

    PATH_REQUIRED = "path_required"
    FILE_NOT_FOUND = "file_not_found"
    SESSION_NOT_FOUND = "session_not_found"
    NOT_A_FILE = "not_a_file"
    HARD_LINKED = "hard_linked"
    PERMISSION_DENIED = "permission_denied"
    OUTSIDE_ALLOWED_ROOTS = "outside_allowed_roots"
    TOO_LARGE = "too_large"
    TIMEOUT = "timeout"
    UNSUPPORTED_FORMAT = "unsupported_format"
    PROVIDER_DETECTION_FAILED = "provider_detection_failed"
    PROVIDER_MISMATCH = "provider_mismatch"
    INVALID_ARGUMENT = "invalid_argument"
    INTERNAL_ERROR = "internal_error"


class ToolFailure(Exception):
    """A call the server refuses or cannot answer: becomes an error result, never a crash."""

    def __init__(self, code: ErrorCode | str, message: str) -> None:
        super().__init__(message)
        self.code = str(code)
        self.message = one_line(message)


def one_line(text: str, limit: int = 400) -> str:
    flat = " ".join(str(text).split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"
