"""Whether a session's recorded cwd is at or under a project directory, through symlinks on either side
(``ls`` of a project, ``last``, the MCP server's ``cwd`` filter)."""

from __future__ import annotations

import os


def _realpath(path: str) -> str | None:
    """``path`` with its symlinks resolved, or None when that cannot be done safely: a relative path
    (it would resolve against this process's directory), an embedded NUL (ValueError), any OSError. A
    path that does not exist on this machine resolves as far as it exists and never fails."""
    if not os.path.isabs(path):
        return None
    try:
        return os.path.realpath(path)
    except (OSError, ValueError):
        return None


class CwdMatcher:
    """Whether a session's recorded cwd is at or under a project directory, through symlinks.

    Codex records its cwd as ``getcwd()`` gives it, the physical path, while a user who ``cd``'d through
    a symlink (macOS ``/tmp`` -> ``/private/tmp``, a symlinked worktree) types or stands in the logical
    one; an older session may have recorded a path that is a symlink today. So the project matches
    both as given and resolved, and a session's cwd that matches neither is compared resolved too: once
    per distinct cwd string (sessions share a handful of projects), never failing on a cwd that does
    not exist here (it resolves as far as it exists, so it can only match what it names)."""

    def __init__(self, root: str) -> None:
        roots = [os.path.normpath(root)]
        real = _realpath(roots[0])
        if real is not None and real not in roots:
            roots.append(real)
        self.roots = tuple(roots)
        self._resolved: dict[str, bool] = {}

    def _under(self, path: str) -> bool:
        return any(path == r or path.startswith(r.rstrip(os.sep) + os.sep) for r in self.roots)

    def __call__(self, cwd: str | None) -> bool:
        if not cwd:
            return False
        c = os.path.normpath(cwd)
        if self._under(c):
            return True
        hit = self._resolved.get(c)
        if hit is None:
            real = _realpath(c)
            hit = self._resolved[c] = real is not None and real != c and self._under(real)
        return hit
