"""Strict-mode checks on tokens: ``with``, HTML-like comments, numbers, escapes, names (reserved words,
``eval``/``arguments`` bound, escaped keywords), ``delete x``, regular expression literals."""

from __future__ import annotations

import re
from typing import Any

from exec_grammar.backends.regex_check import regex_error
from exec_grammar.backends.strict_base import (
    _BIG_ESCAPE_RE,
    _ID_CONTINUE,
    _KEYWORDS,
    _NAME_NODES,
    _STRICT_RESERVED,
    _fail,
    _unwrap,
    decode_identifier,
)
from exec_grammar.backends.strict_scope import _Checker, _scope_key
from exec_grammar.backends.ts_tree import _Seeker


def _c_with(c: _Checker, sk: _Seeker, i: int, start: int) -> None:
    if sk.stack[i].type == "with" and i >= 1 and sk.stack[i - 1].type == "with_statement":
        _fail("Strict mode code may not include a with statement", start)

#: Nodes whose text is not code: a hit there is quoted, commented or in a regex.
_TEXT_NODES = frozenset(
    {"string", "string_fragment", "template_string", "comment", "regex", "regex_pattern", "escape_sequence"}
)

def _c_html(c: _Checker, sk: _Seeker, i: int, start: int) -> None:
    # tree-sitter reads `<!--`/`-->` as a comment, or `a <!--b` as `a < !--b`: a module has neither
    t = sk.stack[i].type
    if t == "html_comment" or (t not in _TEXT_NODES and c.data.startswith(b"<!--", start)):
        _fail("HTML comments are not allowed in modules", start)

_LEGACY = re.compile(rb"0[0-9]")

def _c_number(c: _Checker, sk: _Seeker, i: int, start: int) -> None:
    n = sk.stack[i]
    if n.type != "number":
        return
    text = c.data[n.start_byte : n.end_byte]
    if _LEGACY.match(text):
        if text.endswith(b"n"):
            _fail("Invalid or unexpected token", n)
        octal = all(48 <= b <= 55 for b in text)
        _fail("Octal literals are not allowed in strict mode." if octal
              else "Decimals with leading zeros are not allowed in strict mode.", n)
    if b"_" in text and _BAD_SEPARATOR.search(text):
        _fail("Numeric separators are not allowed here", n)
    end = n.end_byte
    if end < len(c.data) and (c.data[end] in _ID_CONTINUE or c.data[end] >= 0x80):
        _fail("Invalid or unexpected token", end)


#: `_` not between two digits (`1__0`, `1_`, `0_1`, `1_.5`, `0x_1`, `1e_1`)
_BAD_SEPARATOR = re.compile(rb"__|_$|^0_|_[^0-9a-fA-F]|[^0-9a-fA-F]_|^0[xXoObB]_|[eE]_")

def _c_escape(c: _Checker, sk: _Seeker, i: int, start: int) -> None:
    n = sk.stack[i]
    if n.type != "escape_sequence" or i < 1:
        return
    container = sk.stack[i - 1]
    template = container.type == "template_string"
    if template:
        call = sk.stack[i - 2] if i >= 2 else None
        args = call.child_by_field_name("arguments") if call is not None and call.type == "call_expression" else None
        if args is not None and args.id == container.id:
            return  # a tagged template's text may hold any escape
    elif container.type != "string":
        return
    text = c.data[n.start_byte : n.end_byte]
    after = c.data[n.end_byte : n.end_byte + 1]
    if text in (b"\\8", b"\\9"):
        _fail(f"\\8 and \\9 are not allowed in {'template strings' if template else 'strict mode'}.", n)
    if (len(text) >= 2 and 49 <= text[1] <= 55) or (text[:2] == b"\\0" and (len(text) > 2 or after.isdigit())):
        _fail("Octal escape sequences are not allowed in template strings." if template
              else "Octal escape sequences are not allowed in strict mode.", n)
    m = _BIG_ESCAPE_RE.match(text)
    if m and int(m.group(1), 16) > 0x10FFFF:
        _fail("Undefined Unicode code-point", n)

def _c_uname(c: _Checker, sk: _Seeker, i: int, start: int) -> None:
    n = sk.stack[i]
    if n.type not in _NAME_NODES and n.type not in ("property_identifier", "private_property_identifier"):
        return
    raw = c.text(n)
    name = decode_identifier(raw)
    probe = name.lstrip("#").replace("$", "_").replace("\u200c", "_").replace("\u200d", "_")
    if "\\" in name or not ("_" + probe).isidentifier() or not (probe[:1] == "_" or probe.isidentifier()):
        _fail("Invalid or unexpected token", n)
    if n.type in _NAME_NODES:
        if name in _KEYWORDS:
            _fail("Keyword must not contain escaped characters", n)
        _check_name(c, sk, i, name)

def _check_name(c: _Checker, sk: _Seeker, i: int, name: str) -> None:
    n = sk.stack[i]
    if name in _STRICT_RESERVED:
        if name == "yield":
            _fail("Unexpected strict mode reserved word", n)
        _fail("Unexpected strict mode reserved word", n)
    if name == "await":
        _fail("Unexpected reserved word", n)
    if name in ("eval", "arguments") and i >= 1 and _is_binding(n, sk.stack[i - 1]):
        _fail("Unexpected eval or arguments in strict mode", n)

def _c_name(c: _Checker, sk: _Seeker, i: int, start: int) -> None:
    n = sk.stack[i]
    if n.type in _NAME_NODES or n.type == "statement_identifier":  # `let:` as a label too
        _check_name(c, sk, i, c.text(n))

#: parent type -> the field whose node is bound or assigned (None: any child is)
_TARGET_FIELDS: dict[str, str | None] = {
    "assignment_expression": "left",
    "augmented_assignment_expression": "left",
    "for_in_statement": "left",
    "arrow_function": "parameter",
    "function_declaration": "name",
    "function_expression": "name",
    "generator_function_declaration": "name",
    "generator_function": "name",
    "class_declaration": "name",
    "class": "name",
    "variable_declarator": "name",
    "catch_clause": "parameter",
    "assignment_pattern": "left",
    "object_assignment_pattern": "left",
    "pair_pattern": "value",
    "formal_parameters": None,
    "array_pattern": None,
    "object_pattern": None,
    "rest_pattern": None,
    "update_expression": None,
}

def _is_binding(node: Any, parent: Any) -> bool:
    """``node`` is a name ``parent`` binds or assigns (``eval = 1``, ``let arguments``, ``eval++``)."""
    if node.type == "shorthand_property_identifier_pattern":
        return True
    pt = parent.type
    if pt not in _TARGET_FIELDS:
        return False
    field = _TARGET_FIELDS[pt]
    if field is None:
        return True
    target = parent.child_by_field_name(field)
    return target is not None and target.start_byte == node.start_byte and target.type == node.type

def _c_delete(c: _Checker, sk: _Seeker, i: int, start: int) -> None:
    if sk.stack[i].type != "delete" or i < 1:
        return
    arg = _unwrap(sk.stack[i - 1].child_by_field_name("argument"))
    if arg is not None and arg.type == "identifier":
        _fail("Delete of an unqualified identifier in strict mode.", start)

def _c_regex(c: _Checker, sk: _Seeker, i: int, start: int) -> None:
    if i < 1 or sk.stack[i].type != "/" or sk.stack[i - 1].type != "regex":
        return
    node = sk.stack[i - 1]
    if node.start_byte != start:
        return
    pattern = node.child_by_field_name("pattern")
    flags = node.child_by_field_name("flags")
    message = regex_error(c.text(pattern) if pattern is not None else "", c.text(flags) if flags is not None else "")
    if message is not None:
        _fail(f"Invalid regular expression: {message}", node)

_LET_WORD_RE = re.compile(rb"[A-Za-z_$][\w$]*")
_PUNCT_RUN_RE = re.compile(rb"[-=|&?*+/%<>!^~:.]+")
_LINE_BREAKS = (b"\n", b"\r", b"\xe2\x80\xa8", b"\xe2\x80\xa9")


def _c_let_newline(c: _Checker, sk: _Seeker, i: int, start: int) -> None:
    """``let``, a line break, a name: tree-sitter reads ``let`` as an expression statement and the name
    as the start of the next statement (ASI); V8 in strict code reads ``let NAME`` as a declaration (a
    strict ``let`` is never a name), so what follows the name must continue or end one: ``=``, ``,``,
    ``;``, ``}``, the end, or a line break before a token that may start a statement. Else V8 rejects
    the module (``let\\nout ||= 1``: "Unexpected token '||='")."""
    stack = sk.stack
    if i < 1 or stack[i].type != "identifier" or stack[i - 1].type != "expression_statement":
        return
    if stack[i - 1].named_child_count != 1:
        return
    data = c.data
    k = stack[i].end_byte
    n = len(data)
    while k < n and data[k] in b" \t\r\n\v\f":
        k += 1
    m = _LET_WORD_RE.match(data, k)
    if m is None:
        return  # a pattern, a comment, an escape: not read here
    word = m.group().decode("ascii")
    if word in _KEYWORDS or word in _STRICT_RESERVED or word == "await":
        _fail("Unexpected strict mode reserved word", stack[i])
    key, _, _ = _scope_key(stack, i - 2)
    c.decls[word].append(("lexical", key, (), m.start()))  # `var x; let\nx = 1` redeclares x
    k = m.end()
    broke = False
    while k < n:
        if data[k] in b" \t\v\f":
            k += 1
        elif data.startswith(_LINE_BREAKS, k):
            broke = True
            k += 1 if data[k] < 0x80 else 3
        else:
            break
    if k >= n or data[k] in b",;}":
        return
    if data[k] == 0x3D and data[k + 1 : k + 2] not in (b"=", b">"):  # `=`: the initialiser
        return
    if data[k] == 0x2F or data[k] >= 0x80:
        return  # a comment or a non-ASCII byte: not read here
    if broke and (data[k] in _ID_CONTINUE or data[k] in b"([{'\"`!~+-#@" or (data[k] == 0x2E and data[k + 1 : k + 2].isdigit())):
        return  # ASI after `let NAME`, then a statement
    tok = _PUNCT_RUN_RE.match(data, k)
    text = (tok.group() if tok is not None else data[k : k + 1]).decode("ascii", "replace")
    _fail(f"Unexpected token '{text}'", k)
