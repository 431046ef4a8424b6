"""The apply_patch grammar, shared by exec scripts and top-level ``apply_patch`` custom calls.

    patch     := "*** Begin Patch" NL { file } "*** End Patch" [NL]
    file      := "*** Add File: " path NL { "+" line NL }
               | "*** Delete File: " path NL
               | "*** Update File: " path NL [ "*** Move to: " path NL ] { hunk }
    hunk      := [ "@@" [ " " context ] NL ] { (" " | "+" | "-") line NL | NL } [ "*** End of File" NL ]

Like Codex's own parser, surrounding whitespace of the whole text and of marker lines is tolerated, and
a heredoc wrapper (``<<'EOF'`` … ``EOF``) around the patch is peeled off. A malformed patch is reported
(``Patch.error``) with the files read up to that point, never guessed at; an ``Update File`` without any
change line is malformed, as in Codex.
"""

from __future__ import annotations

import re

from exec_grammar.model import Patch, PatchFile, PatchOp

__all__ = ["parse_patch", "iter_patch_headers"]

BEGIN = "*** Begin Patch"
END = "*** End Patch"
ADD = "*** Add File: "
DELETE = "*** Delete File: "
UPDATE = "*** Update File: "
MOVE = "*** Move to: "
EOF_MARK = "*** End of File"

_HEADER_RE = re.compile(r"^\s*\*\*\* (Add File|Delete File|Update File|Move to): ?(.*?)\s*$", re.M)


def iter_patch_headers(text: str):
    """Yield ``(kind, path)`` for every file header line, even in a patch too broken to parse.

    Used on template text whose interpolations are unknown, where only the headers can be trusted."""
    for m in _HEADER_RE.finditer(text):
        yield m.group(1), m.group(2)


def _strip_heredoc(lines: list[str]) -> list[str]:
    if len(lines) >= 4 and re.fullmatch(r"<<\s*['\"]?(\w+)['\"]?", lines[0].strip()):
        tag = re.sub(r"[<'\"\s]", "", lines[0])
        if lines[-1].strip() == tag:
            return lines[1:-1]
    return lines


def parse_patch(text: str) -> Patch:
    """Parse an apply_patch body into its files (operation, move target, added/removed line counts)."""
    lines = text.strip().splitlines()
    lines = _strip_heredoc(lines)
    files: list[PatchFile] = []
    if not lines or lines[0].strip() != BEGIN:
        return Patch((), "the first line is not '*** Begin Patch'")
    i = 1
    n = len(lines)
    while i < n:
        line = lines[i]
        marker = line.strip()
        if marker == END:
            if any(x.strip() for x in lines[i + 1 :]):
                return Patch(tuple(files), f"text after '*** End Patch' (line {i + 2})")
            return Patch(tuple(files))
        if marker.startswith(ADD.strip()):
            path = marker[len(ADD) :].strip() if marker.startswith(ADD) else ""
            if not path:
                return Patch(tuple(files), f"line {i + 1}: Add File without a path")
            i += 1
            added = 0
            while i < n and lines[i].startswith("+"):
                added += 1
                i += 1
            files.append(PatchFile(path, PatchOp.ADD, None, added, 0))
            continue
        if marker.startswith(DELETE.strip()):
            path = marker[len(DELETE) :].strip() if marker.startswith(DELETE) else ""
            if not path:
                return Patch(tuple(files), f"line {i + 1}: Delete File without a path")
            files.append(PatchFile(path, PatchOp.DELETE))
            i += 1
            continue
        if marker.startswith(UPDATE.strip()):
            path = marker[len(UPDATE) :].strip() if marker.startswith(UPDATE) else ""
            if not path:
                return Patch(tuple(files), f"line {i + 1}: Update File without a path")
            i += 1
            move_to = None
            if i < n and lines[i].strip().startswith(MOVE.strip()):
                move_to = lines[i].strip()[len(MOVE) :].strip() or None
                if move_to is None:
                    return Patch(tuple(files), f"line {i + 1}: Move to without a path")
                i += 1
            added = removed = changes = 0
            while i < n:
                body = lines[i]
                first = body[:1]
                # Change lines first: they are most lines, and no marker starts with + or -.
                if first == "+":
                    added += 1
                    changes += 1
                    i += 1
                    continue
                if first == "-":
                    removed += 1
                    changes += 1
                    i += 1
                    continue
                stripped = body.strip()
                if stripped.startswith("*** ") and stripped != EOF_MARK:
                    break
                if stripped == EOF_MARK or body.startswith("@@"):
                    i += 1
                    continue
                if body.startswith("+"):
                    added += 1
                elif body.startswith("-"):
                    removed += 1
                elif body.startswith(" ") or body == "":
                    pass
                else:
                    files.append(PatchFile(path, PatchOp.UPDATE, move_to, added, removed))
                    return Patch(tuple(files), f"line {i + 1}: unexpected line in a hunk: {body[:60]!r}")
                changes += 1
                i += 1
            files.append(PatchFile(path, PatchOp.UPDATE, move_to, added, removed))
            if changes == 0:
                return Patch(tuple(files), f"Update File {path}: empty hunk")
            continue
        return Patch(tuple(files), f"line {i + 1}: expected a file header, got {line[:60]!r}")
    return Patch(tuple(files), "missing '*** End Patch'")
