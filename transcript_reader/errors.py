"""Typed errors. Every error a user can see carries a stable ``code`` and, where it applies, the path,
line and reason."""

from __future__ import annotations


class TranscriptError(Exception):
    """Base of every error the library raises on purpose."""

    code = "transcript_error"

    def __init__(self, message: str, *, path: str | None = None, line: int | None = None) -> None:
        self.path = path
        self.line = line
        self.reason = message
        where = ""
        if path is not None:
            where = f"{path}:{line}: " if line is not None else f"{path}: "
        super().__init__(where + message)


class FileNotFoundTranscriptError(TranscriptError):
    """The path does not exist."""

    code = "file_not_found"


class NotAFileError(TranscriptError):
    """The path is not a regular file."""

    code = "not_a_file"


class PermissionDeniedError(TranscriptError):
    """The file cannot be read."""

    code = "permission_denied"


class UnsupportedFormatError(TranscriptError):
    """The file is not a Codex transcript in any known format (its content is never echoed)."""

    code = "unsupported_format"


class DecodeError(TranscriptError):
    """A line could not be decoded (raised only in strict mode; lenient mode yields Unreadable)."""

    code = "decode_error"


class InvalidArgumentError(TranscriptError):
    """An argument is out of range or unknown (projection name, kind, regex…)."""

    code = "invalid_argument"


class SessionNotFoundError(TranscriptError):
    """A session id, prefix or ``last~N`` matched no session (or more than one)."""

    code = "session_not_found"


class FileChangedError(TranscriptError):
    """A file being followed shrank or was replaced: what was read of it no longer describes it."""

    code = "file_changed"


class ReadTimeoutError(TranscriptError):
    """A reading ran past the time budget its caller set (``source.Descriptor.deadline``)."""

    code = "timeout"
