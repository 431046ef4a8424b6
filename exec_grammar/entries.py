"""Entries: what a script's calls mean for a reader, a pure function of the calls.

- every ``exec_command`` whose ``cmd`` decodes to a string is one shell command (cwd from ``workdir``,
  every other field kept in ``options``); so is every ``shell_command`` whose ``command`` is a string
  and every ``shell`` whose ``command`` is an argv list (shown as the inner command of ``bash -lc``):
  Codex exposes whichever shell tool the session has, and ``shell_command`` is the one Windows
  sessions call (``tools.shell_command({command: "Get-ChildItem"})``); ``write_stdin`` with a decoded
  object argument is a stdin write (with a computed argument it is named in a tool-call entry, so it
  is still shown);
- if any of these shell calls has a computed argument (or no readable command), the script gives ONE
  shell command whose command is the whole script: a partial list would silently drop the unreadable
  commands, and a guessed command is worse. The same holds when a call's tool name cannot be decided
  (``tools[name](…)``, named ``*``) or ``tools`` is used other than by direct calls (an alias of
  ``tools.exec_command``, ``.call``, ``tools`` passed on or destructured);
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

from exec_grammar.backends import Binding, _fast_constructor
from exec_grammar.backends.lexical import const_bindings
from exec_grammar.lexer import Token, TokenKind, iter_tokens
from exec_grammar.literals import _WHOLE_STRING, cook_template_text, decode_string_literal
from exec_grammar.model import (
    EXECUTED_UNKNOWN,
    Entry,
    EntryKind,
    PatchEntry,
    PatchFile,
    PatchOp,
    ShellCommandEntry,
    StdinWriteEntry,
    ToolCall,
    ToolCallEntry,
)
from exec_grammar.patch import iter_patch_headers, parse_patch
from exec_grammar.shell import command_from_argv

__all__ = ["SHELL_TOOLS", "build_entries", "const_bindings", "resolve_patch_text"]

#: Stands in for an interpolation whose value is unknown; no patch path may contain it.
UNRESOLVED = "\x00unresolved\x00"


def _significant(source: str) -> list[Token]:
    return list(iter_tokens(source, trivia=False))


Lookup = Callable[[str], "Binding | None"]


def _resolve_template(source: str, bindings: Lookup, raw: bool) -> str | None:
    """The text of a template with each ``${name}`` replaced by its const literal, other interpolations
    by :data:`UNRESOLVED`. None when the template has an invalid escape."""
    if "${" not in source:
        m = _WHOLE_STRING["`"].fullmatch(source)
        if m is not None:  # one template token, nothing after it: its body is its text, no need to lex it
            return m.group(1) if raw else cook_template_text(m.group(1))
    toks = _significant(source)
    parts: list[str] = []
    expr: list[Token] = []
    depth = 0
    closed = -1  # index of the token that closes the template
    for i, tok in enumerate(toks):
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
                closed = i
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
                closed = i
                break
            continue
        if k is TokenKind.TEMPLATE_HEAD:
            depth += 1
        elif k is TokenKind.TEMPLATE_TAIL:
            depth -= 1
        expr.append(tok)
    if closed != len(toks) - 1:
        # unterminated, or the template is only the start of a longer expression (`` `…src/` + name ``,
        # `` `…`.replace(…) ``): its text is not the patch, and a guess would name a wrong file
        return None
    return "".join(parts)


def _substitute(expr: list[Token], bindings: Lookup) -> str:
    if len(expr) == 1 and expr[0].kind is TokenKind.IDENT:
        b = bindings(expr[0].text)
        if b is not None and b.value is not None:
            return b.value
    return UNRESOLVED


#: The fields an object argument may pass the patch in: ``{patch}``, ``{ patch: … }``, ``{input: …}``
#: (scripts written for harnesses whose apply_patch takes an object; other readers accept these too).
_PATCH_FIELDS = ("patch", "input")


def _patch_field(src: str) -> tuple[str, str | None, bool] | None:
    """``(field, value source, shorthand)`` when ``src`` is an object literal whose one property is a
    patch field with a one-token value (a string, a complete template, a name), else None. Read from
    the lexer's tokens: linear, where a regex over the value backtracked cubically on whitespace runs
    (519 s on one argument before)."""
    toks = _significant(src)
    if len(toks) < 3 or toks[0].text != "{" or toks[-1].text != "}":
        return None
    key = toks[1]
    if key.kind is TokenKind.IDENT:
        name, shorthand_ok = key.text, True
    elif key.kind is TokenKind.STRING:
        name, shorthand_ok = key.text[1:-1], False
    else:
        return None
    if name not in _PATCH_FIELDS:
        return None
    rest = toks[2:-1]
    if rest and rest[-1].text == ",":
        rest = rest[:-1]
    if not rest:
        return (name, None, True) if shorthand_ok else None
    if rest[0].text != ":" or len(rest) < 2:
        return None
    value = rest[1:]
    first, last = value[0], value[-1]
    if [t.text for t in value[:3]] == ["String", ".", "raw"] and len(value) > 3:
        value = value[3:]  # String.raw`…`: _text_of_source reads it raw
    one_token = len(value) == 1 and value[0].kind in (TokenKind.STRING, TokenKind.TEMPLATE, TokenKind.IDENT)
    template = value[0].kind is TokenKind.TEMPLATE_HEAD and last.kind is TokenKind.TEMPLATE_TAIL
    if not (one_token or template):
        return None
    return name, src[first.start:last.end], False


def resolve_patch_text(call: ToolCall, bindings: Lookup) -> str | None:
    """The patch text of an ``apply_patch`` call, with :data:`UNRESOLVED` for unknown interpolations;
    None when no text can be found (an unbound variable, a call, a concatenation).

    The patch is the argument itself (a string, a template, a const-bound name) or, in an object
    argument, its only ``patch``/``input`` field (``{patch}`` shorthand names the const too)."""
    arg = call.argument
    if not call.computed and isinstance(arg, str):
        return arg
    if not call.computed and isinstance(arg, dict):
        if len(arg) == 1:
            value = arg.get("patch", arg.get("input"))
            if isinstance(value, str):
                return value
        return None
    src = call.argument_source.strip()
    if src.startswith("{"):
        field = _patch_field(src)
        if field is None:
            return None
        name, value_src, shorthand = field
        # shorthand {patch}: the const named like the field
        return _text_of_source(name if shorthand else value_src or "", bindings)
    return _text_of_source(src, bindings)


def _text_of_source(src: str, bindings: Lookup) -> str | None:
    """A patch text from an expression's source: a quoted string, a template, or a const-bound name."""
    if src[:1] in ("'", '"'):
        value = decode_string_literal(src)
        if value is not None:
            return value
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


#: The common entry is built by setting its slots directly (the frozen dataclass __init__ costs ~3x).
_new_shell = _fast_constructor(
    ShellCommandEntry,
    ("command", "cwd", "whole_script", "options", "order", "call_names", "executed", "kind"),
)
_EXEC_NAMES = ("exec_command",)
_SHELL = EntryKind.SHELL_COMMAND


def _no_bindings(name: str) -> Binding | None:
    return None


def _at(binding_of: Callable[..., Binding | None], offset: int) -> Lookup:
    """The bindings a call at ``offset`` sees: a name resolves in the innermost scope declaring it there
    (``const patch`` in two sibling blocks, each block patching with its own)."""
    return lambda name: binding_of(name, offset)


def _patch_files(text: str) -> tuple[list[PatchFile], int, str | None]:
    """Files named by a patch text, how many header paths were dropped as unresolved, and the parser's
    error when the text is malformed. A text with an unresolved interpolation has no error: the
    placeholder, not the patch, may be what the parser trips on."""
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
    return files, unresolved, patch.error if UNRESOLVED not in text else None


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


#: The code-mode tools that run one shell command, and the key holding it.
SHELL_TOOLS: dict[str, str] = {"exec_command": "cmd", "shell_command": "command", "shell": "command"}


def _readable(call: ToolCall) -> bool:
    """The shell call's command can be read (:func:`_shell_command` gives it), decided without
    building the entry: a script with one unreadable shell call is read whole, and its other shell
    calls' options are never needed."""
    if call.computed:
        return False
    arg = call.argument
    if type(arg) is str:
        return True
    if type(arg) is not dict:
        return _shell_command(call) is not None
    command = arg.get(SHELL_TOOLS[call.name])
    if type(command) is str:
        return True
    return _shell_command(call) is not None


def _shell_command(call: ToolCall) -> tuple[str, str | None, dict[str, Any]] | None:
    """(command, cwd, other fields) of a shell call, or None when its command cannot be read."""
    arg = call.argument
    if call.computed:
        return None
    if isinstance(arg, str):
        return arg, None, {}
    if not isinstance(arg, dict):
        return None
    key = SHELL_TOOLS[call.name]
    command = arg.get(key)
    if call.name == "shell" and isinstance(command, list) and command and all(isinstance(w, str) for w in command):
        command = command_from_argv(command)
    if not isinstance(command, str):
        return None
    workdir = arg.get("workdir")
    options = dict(arg)  # the other fields, in their order
    del options[key]
    options.pop("workdir", None)
    return command, workdir if isinstance(workdir, str) else None, options


def build_entries(
    script: str,
    calls: Sequence[ToolCall],
    binding_of: Callable[..., Binding | None] | None = None,
    hidden_calls: bool = False,
) -> tuple[Entry, ...]:
    """The entries of a script, in call order (see the module docstring for the contract).

    ``binding_of(name, at)`` may look a const binding up in a parsed tree, by scope from the call's
    offset; by default the script is lexed.
    The whole script is the one shell command when a shell call's argument is computed, when a
    call's tool name cannot be decided (``tools[name](…)``, named ``*``), or when ``hidden_calls`` says
    ``tools`` is used other than by direct calls (an alias of ``tools.exec_command``, ``tools`` passed
    on: ``exec_grammar.escapes``): any of these may run commands no readable call names."""
    entries: list[Entry] = []
    shells = [i for i, c in enumerate(calls) if c.name in SHELL_TOOLS]
    unnamed = [i for i, c in enumerate(calls) if c.name == "*"]
    whole_script = hidden_calls or bool(unnamed) or not all(_readable(calls[i]) for i in shells)
    if whole_script:
        involved = sorted([*shells, *unnamed])
        entries.append(
            ShellCommandEntry(
                command=script,
                whole_script=True,
                order=involved[0] if involved else 0,
                call_names=tuple(calls[i].name for i in involved),
            )
        )
    bindings: Callable[..., Binding | None] | None = binding_of
    patch_files: list[PatchFile] = []
    seen_files: set[PatchFile] = set()
    patch_texts: list[str] = []
    unresolved = 0
    patch_errors: list[str] = []
    first_patch = -1
    for i, c in enumerate(calls):
        if c.name in SHELL_TOOLS:
            shell = None if whole_script else _shell_command(c)
            if shell is not None:
                command, cwd, options = shell
                names = _EXEC_NAMES if c.name == "exec_command" else (c.name,)
                entries.append(
                    _new_shell(command, cwd, False, options, i, names, EXECUTED_UNKNOWN, _SHELL)
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
            lookup: Lookup = _no_bindings
            if bindings is not None:
                lookup = _at(bindings, c.start.offset) if bindings is binding_of else bindings
            text = resolve_patch_text(c, lookup)
            if text is None:
                unresolved += 1
                continue
            files, dropped, error = _patch_files(text)
            unresolved += dropped
            if error is not None:
                patch_errors.append(error)
            if UNRESOLVED not in text:
                patch_texts.append(text)
            for f in files:
                if f not in seen_files:  # a set: a list scan was quadratic on big patches
                    seen_files.add(f)
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
                error="; ".join(patch_errors) or None,
            )
        )
    entries.sort(key=lambda e: e.order)
    return tuple(entries)
