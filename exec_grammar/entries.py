"""Entries: what a script's calls mean for a reader (seed 001's contract), a pure function of the calls.

- every ``exec_command`` whose ``cmd`` decodes to a string is one shell command (cwd from ``workdir``,
  every other field kept in ``options``); ``write_stdin`` with a decoded object argument is a stdin
  write (with a computed argument it is named in a tool-call entry, so it is still shown);
- if any ``exec_command`` argument is computed (or has no string ``cmd``), the script gives ONE shell
  command whose command is the whole script: a partial list would silently drop the unreadable
  commands, and a guessed command is worse;
- all ``apply_patch`` calls give one patch entry naming every file from the patch headers, decoded from
  a quoted argument or read from a template's text (also through a variable bound once by ``const``).
  A header path with ``${name}`` resolves only through exactly one ``const name = "literal"`` in the
  script; otherwise that path is dropped and counted in ``unresolved_paths``, never shown as ``${name}``.
  A patch whose text cannot be found at all counts as one unresolved path;
- any other tool is a tool-call entry, so a timeline still shows the script ran it;
- every entry carries ``executed="unknown"`` (a static reading cannot tell whether a call in a branch
  ran) and ``order``, the index in the script's call list of the call it comes from.

Const bindings come from the backend's tree when it offers a lookup (tree-sitter: every kind of
declaration of the name is counted, parameters and destructuring included), otherwise from the lexer.
Known limit of the lexer's reading: parameters and destructuring patterns are not counted, so a
parameter that shadows a ``const`` is not noticed there.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from exec_grammar.backends import Binding
from exec_grammar.lexer import SIGNIFICANT, Token, TokenKind, iter_tokens
from exec_grammar.literals import cook_template_text, decode_string_literal
from exec_grammar.model import (
    Entry,
    PatchEntry,
    PatchFile,
    PatchOp,
    ShellCommandEntry,
    StdinWriteEntry,
    ToolCall,
    ToolCallEntry,
)
from exec_grammar.patch import iter_patch_headers, parse_patch

__all__ = ["build_entries", "const_bindings", "resolve_patch_text"]

#: Stands in for an interpolation whose value is unknown; no patch path may contain it.
UNRESOLVED = "\x00unresolved\x00"

_DECLARATION_KEYWORDS = frozenset({"const", "let", "var", "function", "class"})


def _significant(source: str) -> list[tuple[Token, bool]]:
    """Significant tokens, each with whether a line terminator precedes it."""
    out: list[tuple[Token, bool]] = []
    newline = False
    for tok in iter_tokens(source):
        if tok.kind in SIGNIFICANT:
            out.append((tok, newline))
            newline = False
        elif any(c in tok.text for c in "\n\r\u2028\u2029"):
            newline = True
    return out


def _template_end(toks: list[tuple[Token, bool]], i: int) -> int:
    """Index after the template starting at toks[i] (a TEMPLATE or TEMPLATE_HEAD token)."""
    if toks[i][0].kind is TokenKind.TEMPLATE:
        return i + 1
    depth = 0
    while i < len(toks):
        k = toks[i][0].kind
        if k is TokenKind.TEMPLATE_HEAD:
            depth += 1
        elif k is TokenKind.TEMPLATE_TAIL:
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    return i


def const_bindings(script: str) -> dict[str, Binding | None]:
    """Every declared name -> its binding when it is declared exactly once, by ``const``, with a string
    or template initialiser; None when it is declared more than once or otherwise."""
    toks = _significant(script)
    counts: dict[str, int] = {}
    found: dict[str, Binding] = {}
    n = len(toks)
    i = 0
    while i < n:
        tok = toks[i][0]
        prev = toks[i - 1][0].text if i else ""
        if tok.kind is TokenKind.IDENT and tok.text in _DECLARATION_KEYWORDS and prev not in (".", "?."):
            keyword = tok.text
            i += 1
            while i < n and toks[i][0].kind is TokenKind.IDENT:
                name = toks[i][0].text
                counts[name] = counts.get(name, 0) + 1
                i += 1
                if keyword != "const" or i >= n or toks[i][0].text != "=":
                    break
                i += 1
                binding, i = _initialiser(script, toks, i)
                if binding is not None:
                    found[name] = binding
                if i < n and toks[i][0].text == ",":
                    i += 1
                    continue
                break
            continue
        i += 1
    return {name: (found.get(name) if c == 1 else None) for name, c in counts.items()}


def _initialiser(script: str, toks: list[tuple[Token, bool]], i: int) -> tuple[Binding | None, int]:
    n = len(toks)
    if i >= n:
        return None, i
    tok = toks[i][0]
    raw = False
    start_tok = i
    if tok.kind is TokenKind.IDENT and tok.text == "String" and i + 3 < n:
        if toks[i + 1][0].text == "." and toks[i + 2][0].text == "raw":
            if toks[i + 3][0].kind in (TokenKind.TEMPLATE, TokenKind.TEMPLATE_HEAD):
                raw = True
                i += 3
                tok = toks[i][0]
    if tok.kind is TokenKind.STRING:
        end = i + 1
    elif tok.kind in (TokenKind.TEMPLATE, TokenKind.TEMPLATE_HEAD):
        end = _template_end(toks, i)
    else:
        return None, i + 1
    # The initialiser must be the whole expression: `"a" + b` or `"x".trim()` is not a literal.
    if end < n:
        nxt, newline = toks[end]
        if nxt.text not in (";", ",", "}", ")") and not (newline and nxt.kind is TokenKind.IDENT):
            return None, end
    source = script[toks[i][0].start : toks[end - 1][0].end]
    del start_tok
    if tok.kind is TokenKind.STRING:
        return Binding(decode_string_literal(source)), end
    if tok.kind is TokenKind.TEMPLATE and not raw:
        return Binding(cook_template_text(source[1:-1])), end
    return Binding(None, source, raw), end


Lookup = Callable[[str], "Binding | None"]


def _resolve_template(source: str, bindings: Lookup, raw: bool) -> str | None:
    """The text of a template with each ``${name}`` replaced by its const literal, other interpolations
    by :data:`UNRESOLVED`. None when the template has an invalid escape."""
    toks = _significant(source)
    parts: list[str] = []
    expr: list[Token] = []
    depth = 0
    for tok, _nl in toks:
        k = tok.kind
        if depth == 0:
            if k is TokenKind.TEMPLATE:
                chunk = tok.text[1:-1]
            elif k is TokenKind.TEMPLATE_HEAD:
                chunk = tok.text[1:-2]
                depth = 1
            else:
                return None
            cooked = chunk if raw else cook_template_text(chunk)
            if cooked is None:
                return None
            parts.append(cooked)
            if depth == 0:
                break
            continue
        if depth == 1 and k in (TokenKind.TEMPLATE_MIDDLE, TokenKind.TEMPLATE_TAIL):
            parts.append(_substitute(expr, bindings))
            expr = []
            chunk = tok.text[1:-2] if k is TokenKind.TEMPLATE_MIDDLE else tok.text[1:-1]
            cooked = chunk if raw else cook_template_text(chunk)
            if cooked is None:
                return None
            parts.append(cooked)
            if k is TokenKind.TEMPLATE_TAIL:
                break
            continue
        if k is TokenKind.TEMPLATE_HEAD:
            depth += 1
        elif k is TokenKind.TEMPLATE_TAIL:
            depth -= 1
        expr.append(tok)
    return "".join(parts)


def _substitute(expr: list[Token], bindings: Lookup) -> str:
    if len(expr) == 1 and expr[0].kind is TokenKind.IDENT:
        b = bindings(expr[0].text)
        if b is not None and b.value is not None:
            return b.value
    return UNRESOLVED


def resolve_patch_text(call: ToolCall, bindings: Lookup) -> str | None:
    """The patch text of an ``apply_patch`` call, with :data:`UNRESOLVED` for unknown interpolations;
    None when no text can be found (an unbound variable, a call, a concatenation)."""
    if not call.computed and isinstance(call.argument, str):
        return call.argument
    src = call.argument_source.strip()
    raw = False
    if src.startswith("String.raw`"):
        src, raw = src[len("String.raw") :], True
    if src.startswith("`"):
        return _resolve_template(src, bindings, raw)
    b = bindings(src) if src.isidentifier() else None
    if b is None:
        return None
    if b.value is not None:
        return b.value
    if b.template_source is not None:
        return _resolve_template(b.template_source, bindings, b.raw)
    return None


def _no_bindings(name: str) -> Binding | None:
    return None


def _patch_files(text: str) -> tuple[list[PatchFile], int]:
    """Files named by a patch text, and how many header paths were dropped as unresolved."""
    patch = parse_patch(text)
    files: list[PatchFile] = []
    unresolved = 0
    if patch.error is None or patch.files:
        candidates = list(patch.files)
        if patch.error is not None:
            # A malformed patch: trust only its headers, which the parser may have stopped short of.
            candidates = _header_files(text)
    else:
        candidates = _header_files(text)
    for f in candidates:
        if UNRESOLVED in f.path:
            unresolved += 1
            continue
        if f.move_to is not None and UNRESOLVED in f.move_to:
            unresolved += 1
            f = PatchFile(f.path, f.op, None, f.added, f.removed)
        files.append(f)
    return files, unresolved


def _header_files(text: str) -> list[PatchFile]:
    ops = {"Add File": PatchOp.ADD, "Delete File": PatchOp.DELETE, "Update File": PatchOp.UPDATE}
    out: list[PatchFile] = []
    for kind, path in iter_patch_headers(text):
        if kind == "Move to":
            if out and out[-1].op is PatchOp.UPDATE and out[-1].move_to is None:
                last = out[-1]
                out[-1] = PatchFile(last.path, last.op, path or None, last.added, last.removed)
            continue
        if path:
            out.append(PatchFile(path, ops[kind]))
    return out


def _shell_command(call: ToolCall) -> tuple[str, str | None, dict[str, Any]] | None:
    arg = call.argument
    if call.computed:
        return None
    if isinstance(arg, str):
        return arg, None, {}
    if isinstance(arg, dict) and isinstance(arg.get("cmd"), str):
        workdir = arg.get("workdir")
        options = {k: v for k, v in arg.items() if k not in ("cmd", "workdir")}
        return arg["cmd"], workdir if isinstance(workdir, str) else None, options
    return None


def build_entries(
    script: str,
    calls: Sequence[ToolCall],
    binding_of: Lookup | None = None,
) -> tuple[Entry, ...]:
    """The entries of a script, in call order (see the module docstring for the contract).

    ``binding_of(name)`` may look a const binding up in a parsed tree; by default the script is lexed."""
    entries: list[Entry] = []
    shells = {i: _shell_command(c) for i, c in enumerate(calls) if c.name == "exec_command"}
    whole_script = any(v is None for v in shells.values())
    if whole_script:
        first = min(shells)
        entries.append(
            ShellCommandEntry(
                command=script,
                whole_script=True,
                order=first,
                call_names=tuple(calls[i].name for i in sorted(shells)),
            )
        )
    bindings: Lookup | None = binding_of
    patch_files: list[PatchFile] = []
    patch_texts: list[str] = []
    unresolved = 0
    first_patch = -1
    for i, c in enumerate(calls):
        if c.name == "exec_command":
            shell = shells[i]
            if not whole_script and shell is not None:
                command, cwd, options = shell
                entries.append(
                    ShellCommandEntry(
                        command=command, cwd=cwd, options=options, order=i, call_names=(c.name,)
                    )
                )
        elif c.name == "write_stdin" and isinstance(c.argument, dict):
            chars = c.argument.get("chars")
            entries.append(
                StdinWriteEntry(
                    session_id=c.argument.get("session_id"),
                    chars=chars if isinstance(chars, str) else None,
                    order=i,
                )
            )
        elif c.name == "apply_patch":
            if first_patch < 0:
                first_patch = i
            if c.computed and bindings is None:
                bindings = const_bindings(script).get
            text = resolve_patch_text(c, bindings or _no_bindings)
            if text is None:
                unresolved += 1
                continue
            files, dropped = _patch_files(text)
            unresolved += dropped
            if UNRESOLVED not in text:
                patch_texts.append(text)
            for f in files:
                if f not in patch_files:
                    patch_files.append(f)
        else:
            entries.append(
                ToolCallEntry(name=c.name, argument_source=c.argument_source, argument=c.argument, order=i)
            )
    if first_patch >= 0:
        entries.append(
            PatchEntry(
                files=tuple(patch_files),
                unresolved_paths=unresolved,
                patch_texts=tuple(patch_texts),
                order=first_patch,
            )
        )
    entries.sort(key=lambda e: e.order)
    return tuple(entries)
