"""Strict-mode early errors: what V8 rejects in a module before running a single statement, and
tree-sitter's grammar accepts (issue 11 §2). Code-mode cells are ES modules, so strict.

Found like the calls: each check has a textual trigger (a keyword, an operator, an escape), every
trigger hit is looked up in the tree in one forward ``_Seeker`` pass (linear; a hit inside a string or
comment drops out at once), and the check reads the few nodes around the hit and its ancestors on the
seeker's stack. Python never walks the whole tree: a full walk cost 3.7x the parse. The triggers are
cheap by construction (``strict_hits``): patterns ``re`` would try at every byte run by RE2, skipped
when an RE2 set pass says they match nowhere (``strict_scan``); hits of the kinds that fill patch text
in strings, and declaration words, are dropped by a bounded C lookup when they fall in text; a name is
looked up for redeclaration only when a binding of it is repeated. Checked, each pinned with V8's
verdict in ``tests/test_exec_verdicts.py``:

- ``with``; HTML-like comments (``<!--``, ``-->``); legacy octal and leading-zero numbers (``017``,
  ``08``), octal escapes (``'\\101'``, ``'\\08'``, ``'\\8'``, and in untagged templates); a number followed
  by an identifier (``3in[]``); ``\\u{…}`` beyond U+10FFFF; an invalid regular expression literal;
- ``delete x``; strict reserved words (``let``, ``yield``, ``implements``, ``static``…) and ``await`` as
  names, escaped or not; ``eval``/``arguments`` bound or assigned; an escaped keyword;
- ``break``/``continue`` with no target, an undefined or repeated label; a function declaration as the
  body of ``if``/a loop/a label, a lexical declaration there; ``const a;``; an initialised ``for-in`` var;
- ``super`` outside a method (``super()`` outside a derived constructor), ``new.target`` outside a
  function, an undeclared private name; ``a ?? b || c`` unparenthesised, ``-a ** b``; a line break
  before ``=>``; ``({a}) = 1`` and ``a?.b = 1``;
- duplicate parameters, a rest element not last, ``'use strict'`` with non-simple parameters; a getter
  with parameters, a setter without exactly one; two constructors, an accessor/generator/async
  constructor; a repeated ``__proto__`` in an object literal;
- a name declared twice where V8 forbids it (``let``/``const``/``class`` with anything in one scope, a
  function in a block or at module top level, ``var`` crossing a lexical declaration, a parameter or a
  catch parameter redeclared by ``let``);
- ``await`` in any non-async function, method, field or static block; ``yield`` outside a generator;
  ``return`` outside a function;
- a property where a declaration binds a name (``const {...o.x} = v``); ``let``, a line break and a
  name read as V8's declaration, not tree-sitter's ``let;`` and a second statement (``let``/``out ||=
  1``), and ``await``, a line break and an expression as one await expression.

Known limits: a ``break``/``continue`` nested more than 256 levels inside its loop is not checked.
A label repeated further inside its own body than directly (``a: b: a:``) is ``ts_blocks``'s.
Runtime errors are never reported here: ``f() = 1`` parses in V8 (see ``ts_repair``).
"""

from __future__ import annotations

from typing import Any

from exec_grammar.backends import strict_flow as F
from exec_grammar.backends import strict_scope as S
from exec_grammar.backends import strict_tokens as T
from exec_grammar.backends.strict_base import EarlyError, decode_identifier
from exec_grammar.backends.strict_hits import _hits
from exec_grammar.backends.strict_scan import literal, present
from exec_grammar.backends.strict_scope import _Checker
from exec_grammar.backends.ts_tree import _Seeker

__all__ = ["decode_identifier", "early_error"]


def early_error(root: Any, data: bytes) -> tuple[str, int] | None:
    """The first early error V8 reports in the module, as (message, byte), or None."""
    gate = present(data)
    hits = _hits(root, data, gate)
    if not hits:
        return None
    checker = _Checker(root, data)
    first: tuple[str, int] | None = None
    seeker = _Seeker(root)
    seeker.fields = literal(b"class") in gate
    for start, end, kind in hits:
        if first is not None and start > first[1]:
            break
        i = seeker.seek(start, end)
        try:
            _CHECKS[kind](checker, seeker, i, start)
        except EarlyError as e:
            if first is None or e.byte < first[1]:
                first = (e.message, e.byte)
    if first is None:
        tail = _unterminated_at_end(root, data)
        if tail is not None:
            first = tail
    try:
        checker.redeclarations()
    except EarlyError as e:
        if first is None or e.byte < first[1]:
            first = (e.message, e.byte)
    return first

def _unterminated_at_end(root: Any, data: bytes) -> tuple[str, int] | None:
    """A template or string that runs to the end of the text: tree-sitter closes it there, V8 does not."""
    if not data or data[-1:] in (b"`", b"'", b'"'):
        return None
    node = root.descendant_for_byte_range(len(data) - 1, len(data))
    for _ in range(4):
        if node is None:
            return None
        if node.type in ("template_string", "string"):
            if node.end_byte == len(data):
                return "Unexpected end of input", node.start_byte
            return None
        node = node.parent
    return None


_CHECKS: dict[str, Any] = {
    "with": T._c_with,
    "single": S._c_single,
    "html": T._c_html,
    "number": T._c_number,
    "escape": T._c_escape,
    "uname": T._c_uname,
    "delete": T._c_delete,
    "name": T._c_name,
    "break": F._c_break,
    "decl": S._c_decl,
    "regex": T._c_regex,
    "super": F._c_super,
    "meta": F._c_meta,
    "private": F._c_private,
    "logical": F._c_logical,
    "exp": F._c_exp,
    "arrow": S._c_arrow,
    "async_nl": F._c_async_nl,
    "accessor": F._c_accessor,
    "ctor": F._c_ctor,
    "proto": F._c_proto,
    "rest": S._c_rest,
    "directive": S._c_directive,
    "label": F._c_label,
    "assign": F._c_assign,
    "optional_tag": F._c_optional_tag,
    "await": F._c_await,
    "yield": F._c_yield,
    "return": F._c_return,
    "try": F._c_try,
    "comma": F._c_comma,
    "newline": F._c_newline,
    "await_slash": F._c_await_slash,
    "expr_start": F._c_expr_start,
    "compound": F._c_compound,
    "for_of": F._c_for_of,
    "arrow_operand": F._c_arrow_operand,
    "block_start": F._c_block_start,
    "params": S._c_params,
    "let_newline": T._c_let_newline,
}
