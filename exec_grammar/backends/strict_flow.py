"""Strict-mode checks on context: ``break``/``continue`` targets and labels, ``super``, ``new.target``,
private names, operator mixing (``??`` with ``||``, ``-a ** b``), accessors and constructors, ``__proto__``
twice, assignment targets, and ``await``/``yield``/``return`` where the enclosing function forbids them."""

from __future__ import annotations

from typing import Any

from exec_grammar.backends.regex_check import regex_error
from exec_grammar.backends.strict_base import (
    _CLIMB,
    _FUNCTION_TYPES,
    _LOOPS,
    _NAME_NODES,
    _after_trivia,
    _fail,
    _is_async,
    _is_generator,
    _operand_follows,
    _unwrap,
)
from exec_grammar.backends.strict_scope import _Checker
from exec_grammar.backends.strict_tokens import _check_name
from exec_grammar.backends.ts_tree import _FUNCTIONS, _Seeker


def _c_break(c: _Checker, sk: _Seeker, i: int, start: int) -> None:
    stack = sk.stack
    tok = stack[i]
    if tok.type not in ("break", "continue") or i < 1:
        return
    stmt = stack[i - 1]
    is_continue = tok.type == "continue"
    label = next((ch for ch in stmt.named_children if ch.type == "statement_identifier"), None)
    name = c.text(label) if label is not None else None
    j = i - 2
    limit = max(-1, j - _CLIMB)
    while j > limit:
        n = stack[j]
        t = n.type
        if t in _FUNCTION_TYPES or t in ("class_static_block", "program"):
            break
        if name is None:
            if t in _LOOPS or (t == "switch_body" and not is_continue):
                return
        elif t == "labeled_statement":
            lab = n.child_by_field_name("label")
            if lab is not None and c.text(lab) == name:
                body = n.child_by_field_name("body")
                while body is not None and body.type == "labeled_statement":
                    body = body.child_by_field_name("body")
                if is_continue and (body is None or body.type not in _LOOPS):
                    _fail(f"Illegal continue statement: '{name}' does not denote an iteration statement", label)
                return
        j -= 1
    else:
        return  # too deep to tell: not checked
    if name is not None:
        _fail(f"Undefined label '{name}'", label)
    _fail("Illegal continue statement: no surrounding iteration statement" if is_continue
          else "Illegal break statement", tok)

def _c_label(c: _Checker, sk: _Seeker, i: int, start: int) -> None:
    stack = sk.stack
    n = stack[i]
    if n.type != "statement_identifier" or i < 1 or stack[i - 1].type != "labeled_statement":
        return
    stmt = stack[i - 1]
    body = stmt.child_by_field_name("body")
    if body is not None and body.type in ("function_declaration", "generator_function_declaration"):
        _fail("In strict mode code, functions can only be declared at top level or inside a block.", body)
    name = c.text(n)
    j = i - 2
    while j >= 0 and j > i - _CLIMB:
        a = stack[j]
        if a.type in _FUNCTION_TYPES or a.type == "class_static_block":
            return
        if a.type == "labeled_statement":
            lab = a.child_by_field_name("label")
            if lab is not None and c.text(lab) == name:
                _fail(f"Label '{name}' has already been declared", stmt)
        j -= 1

def _nearest_function(stack: list[Any], sk: _Seeker, i: int, skip_arrows: bool) -> Any:
    """The function (or field, static block) ``stack[i]`` is directly in, None at module level."""
    j = i
    while j >= 0:
        f = sk.nearest(j, _FUNCTIONS)
        k = _field_between(stack, f, j) if sk.fields else -1
        if k >= 0:
            return stack[k]
        if f < 0:
            return None
        fn = stack[f]
        if not (skip_arrows and fn.type == "arrow_function"):
            return fn
        j = f - 1
    return None

def _field_between(stack: list[Any], lo: int, hi: int) -> int:
    """Index of a class field definition strictly between ``lo`` and ``hi`` (nearest ``hi``), or -1."""
    for k in range(hi, max(lo, hi - 64), -1):
        if stack[k].type == "field_definition":
            return k
    return -1

def _c_super(c: _Checker, sk: _Seeker, i: int, start: int) -> None:
    stack = sk.stack
    if stack[i].type != "super" or i < 1:
        return
    fn = _nearest_function(stack, sk, i, skip_arrows=True)
    parent = stack[i - 1]
    if parent.type == "call_expression":
        ok = fn is not None and fn.type == "method_definition" and _is_derived_ctor(c, fn)
    else:
        ok = fn is not None and fn.type in ("method_definition", "field_definition", "class_static_block")
    if not ok:
        _fail("'super' keyword unexpected here", start)

def _is_derived_ctor(c: _Checker, fn: Any) -> bool:
    name = fn.child_by_field_name("name")
    if name is None or c.name_of(name).strip("'\"") != "constructor":
        return False
    body = fn.parent
    cls = body.parent if body is not None else None
    return cls is not None and any(ch.type == "class_heritage" for ch in cls.children)

def _c_meta(c: _Checker, sk: _Seeker, i: int, start: int) -> None:
    stack = sk.stack
    j = i
    while j >= 0 and stack[j].type != "meta_property":
        j -= 1
        if j < i - 3:
            return
    if j < 0:
        return
    fn = _nearest_function(stack, sk, j, skip_arrows=True)
    if fn is None:
        _fail("new.target expression is not allowed here", start)

def _c_private(c: _Checker, sk: _Seeker, i: int, start: int) -> None:
    stack = sk.stack
    n = stack[i]
    if n.type != "private_property_identifier" or i < 1:
        return
    name = c.text(n)
    if stack[i - 1].type in ("field_definition", "method_definition"):
        member = stack[i - 1]
        body = stack[i - 2] if i >= 2 else None
        if body is not None and body.type == "class_body":
            kinds = {ch.type for ch in member.children if ch.type in ("get", "set", "static")}
            kind = "get" if "get" in kinds else "set" if "set" in kinds else "field"
            seen = c.privates.setdefault(body.id, {})
            before = seen.get(name)
            # a getter and a setter may share a name (both static or both not)
            if before is not None and not ({before[0], kind} == {"get", "set"} and before[1] == ("static" in kinds)):
                _fail(f"Identifier '{name}' has already been declared", n)
            seen[name] = (kind, "static" in kinds)
        return
    for j in range(i - 1, -1, -1):
        body = stack[j]
        if body.type != "class_body":
            continue
        for m in body.named_children:
            key = m.child_by_field_name("property") or m.child_by_field_name("name")
            if key is not None and key.type == "private_property_identifier" and c.text(key) == name:
                return
    _fail(f"Private field '{name}' must be declared in an enclosing class", n)

def _c_try(c: _Checker, sk: _Seeker, i: int, start: int) -> None:
    stack = sk.stack
    if stack[i].type != "try" or i < 1 or stack[i - 1].type != "try_statement":
        return
    stmt = stack[i - 1]
    if stmt.child_by_field_name("handler") is None and stmt.child_by_field_name("finalizer") is None:
        _fail("Missing catch or finally after try", stmt)


def _c_comma(c: _Checker, sk: _Seeker, i: int, start: int) -> None:
    stack = sk.stack
    if stack[i].type == "," and i >= 1 and stack[i - 1].type in (
        "arguments", "object", "object_pattern", "formal_parameters", "named_imports", "export_clause"
    ):
        _fail("Unexpected token ','", start)


def _c_newline(c: _Checker, sk: _Seeker, i: int, start: int) -> None:
    n = sk.stack[i]
    if n.type == "string" or (n.type == "string_fragment" and i >= 1 and sk.stack[i - 1].type == "string"):
        _fail("Invalid or unexpected token", start)


def _c_await_slash(c: _Checker, sk: _Seeker, i: int, start: int) -> None:
    """`await / x`: in a module `await` is a keyword, so V8 reads the `/` as a regex's start."""
    stack = sk.stack
    if stack[i].type != "/" or i < 1 or stack[i - 1].type != "binary_expression":
        return
    data = c.data
    k = start + 1
    klass = False
    while k < len(data) and data[k] not in b"\n\r":
        ch = data[k]
        if ch == 0x5C:
            k += 2
            continue
        if ch == 0x5B:
            klass = True
        elif ch == 0x5D:
            klass = False
        elif ch == 0x2F and not klass:
            f = k + 1
            while f < len(data) and (data[f] in _FLAG_BYTES):
                f += 1
            pattern = data[start + 1 : k].decode("utf-8", "replace")
            message = regex_error(pattern, data[k + 1 : f].decode("ascii", "replace"))
            if message is not None:
                _fail(f"Invalid regular expression: {message}", start)
            return  # a valid regex: tree-sitter read other tokens, but V8 may well accept it
        k += 1
    _fail("Invalid regular expression: missing /", start)


_FLAG_BYTES = frozenset(b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_$")


_SIMPLE_TARGETS = frozenset({"identifier", "member_expression", "subscript_expression"})


def _c_compound(c: _Checker, sk: _Seeker, i: int, start: int) -> None:
    """`a / b ||= c`: a compound assignment needs a simple target (a call only for arithmetic ones,
    where it is a runtime error)."""
    stack = sk.stack
    if i < 1 or stack[i - 1].type != "augmented_assignment_expression":
        return
    node = stack[i - 1]
    left = _unwrap(node.child_by_field_name("left"))
    if left is None:
        return
    parent = stack[i - 2] if i >= 2 else None
    if parent is not None and parent.type in ("binary_expression", "unary_expression", "await_expression"):
        _fail("Invalid left-hand side in assignment", node)  # `a / b ||= c` read as `a / (b ||= c)`
    logical = stack[i].type in ("&&=", "||=", "??=")
    if left.type in _SIMPLE_TARGETS or (left.type == "call_expression" and not logical):
        return
    _fail("Invalid left-hand side in assignment", node)


def _c_for_of(c: _Checker, sk: _Seeker, i: int, start: int) -> None:
    stack = sk.stack
    if stack[i].type != "for" or i < 1 or stack[i - 1].type != "for_in_statement":
        return
    stmt = stack[i - 1]
    op = stmt.child_by_field_name("operator")
    right = stmt.child_by_field_name("right")
    if op is not None and op.type == "of" and right is not None and right.type == "sequence_expression":
        _fail("Unexpected token ','", right)


def _c_arrow_operand(c: _Checker, sk: _Seeker, i: int, start: int) -> None:
    """`!x => y`: an arrow function cannot be an operator's operand (tree-sitter reads `!(x => y)`)."""
    stack = sk.stack
    if stack[i].type != "=>" or i < 2 or stack[i - 1].type != "arrow_function":
        return
    if stack[i - 2].type in ("binary_expression", "unary_expression", "update_expression", "await_expression"):
        _fail("Malformed arrow function parameter list", stack[i - 1])


def _c_block_start(c: _Checker, sk: _Seeker, i: int, start: int) -> None:
    stack = sk.stack
    if stack[i].type != "{" or i < 2 or stack[i - 1].type != "object":
        return
    stmt = stack[i - 2]
    if stmt.type == "expression_statement" and stmt.start_byte == start:
        _fail("Unexpected token ':'", start)


def _c_expr_start(c: _Checker, sk: _Seeker, i: int, start: int) -> None:
    """A statement cannot start with `function` or `class` as an expression (`function f() {}, x`)."""
    stack = sk.stack
    if i < 2 or stack[i].type not in ("function", "class"):
        return
    node = stack[i - 1]
    if node.type not in ("function_expression", "class", "generator_function"):
        return
    j = i - 2
    while j >= 0 and stack[j].start_byte == node.start_byte and stack[j].type != "expression_statement":
        j -= 1
    if j >= 0 and stack[j].type == "expression_statement" and stack[j].start_byte == node.start_byte:
        _fail("Unexpected token", start)


def _c_logical(c: _Checker, sk: _Seeker, i: int, start: int) -> None:
    stack = sk.stack
    if stack[i].type != "??" or i < 1:
        return
    node = stack[i - 1]
    for side in (node.child_by_field_name("left"), node.child_by_field_name("right")):
        if side is not None and side.type == "binary_expression":
            op = side.child_by_field_name("operator")
            if op is not None and op.type in ("||", "&&"):
                _fail(f"Unexpected token '{op.type}'", node)
    parent = stack[i - 2] if i >= 2 else None
    if parent is not None and parent.type == "binary_expression":
        op = parent.child_by_field_name("operator")
        if op is not None and op.type in ("||", "&&"):
            _fail(f"Unexpected token '{op.type}'", parent)

def _c_exp(c: _Checker, sk: _Seeker, i: int, start: int) -> None:
    stack = sk.stack
    if stack[i].type != "**" or i < 1:
        return
    left = stack[i - 1].child_by_field_name("left")
    if left is not None and left.type in ("unary_expression", "await_expression"):
        _fail("Unary operator used immediately before exponentiation expression. Parenthesis must be used "
              "to disambiguate operator precedence", stack[i - 1])

def _c_async_nl(c: _Checker, sk: _Seeker, i: int, start: int) -> None:
    stack = sk.stack
    if stack[i].type == "async" and i >= 1 and stack[i - 1].type == "arrow_function":
        _fail("Malformed arrow function parameter list", start)

def _c_accessor(c: _Checker, sk: _Seeker, i: int, start: int) -> None:
    stack = sk.stack
    kw = stack[i].type
    if kw not in ("get", "set") or i < 1 or stack[i - 1].type != "method_definition":
        return
    params = stack[i - 1].child_by_field_name("parameters")
    plist = [p for p in params.named_children if p.type != "comment"] if params is not None else []
    if kw == "get" and plist:
        _fail("Getter must not have any formal parameters.", params)
    if kw == "set" and len(plist) != 1:
        _fail("Setter must have exactly one formal parameter.", params)
    if kw == "set" and plist[0].type == "rest_pattern":
        _fail("Setter function argument must not be a rest parameter", params)

def _c_ctor(c: _Checker, sk: _Seeker, i: int, start: int) -> None:
    stack = sk.stack
    key = stack[i]
    if key.type == "string_fragment" and i >= 1:
        i -= 1
        key = stack[i]
    if key.type not in ("property_identifier", "string") or i < 2:
        return
    m, body = stack[i - 1], stack[i - 2]
    if m.type != "method_definition" or body.type != "class_body":
        return
    if key.type == "string" and c.text(key)[1:-1] != "constructor":
        return
    kinds = {ch.type for ch in m.children if ch.type in ("get", "set", "async", "*", "static")}
    if "static" in kinds:
        return
    if kinds & {"get", "set"}:
        _fail("Class constructor may not be an accessor", key)
    if "*" in kinds:
        _fail("Class constructor may not be a generator", key)
    if "async" in kinds:
        _fail("Class constructor may not be an async method", key)
    c.counted[body.id] += 1
    if c.counted[body.id] > 1:
        _fail("A class may only have one constructor", key)

def _c_proto(c: _Checker, sk: _Seeker, i: int, start: int) -> None:
    stack = sk.stack
    key = stack[i]
    if key.type == "string_fragment" and i >= 1:
        i -= 1
        key = stack[i]
    if i < 2 or key.type not in ("property_identifier", "string"):
        return
    pair, obj = stack[i - 1], stack[i - 2]
    if pair.type != "pair" or obj.type != "object":
        return
    k = pair.child_by_field_name("key")
    if k is None or k.id != key.id or (key.type == "string" and c.text(key)[1:-1] != "__proto__"):
        return
    c.counted[obj.id] += 1
    if c.counted[obj.id] > 1:
        _fail("Duplicate __proto__ fields are not allowed in object literals", key)

def _c_assign(c: _Checker, sk: _Seeker, i: int, start: int) -> None:
    stack = sk.stack
    if stack[i].type != "=" or i < 1 or stack[i - 1].type not in ("assignment_expression", "augmented_assignment_expression"):
        return
    parent = stack[i - 2] if i >= 2 else None
    if parent is not None and (
        parent.type in ("binary_expression", "unary_expression", "update_expression", "await_expression")
        or (parent.type in ("member_expression", "subscript_expression", "call_expression")
            and parent.start_byte == stack[i - 1].start_byte)
    ):
        _fail("Invalid left-hand side in assignment", stack[i - 1])
    left = stack[i - 1].child_by_field_name("left")
    if left is None:
        return
    if left.type == "parenthesized_expression":
        inner = _unwrap(left)
        if inner is not None and inner.type in ("object", "array", "object_pattern", "array_pattern"):
            _fail("Invalid left-hand side in assignment", left)
    n = left
    while n is not None and n.type in ("member_expression", "subscript_expression", "call_expression"):
        if any(ch.type == "optional_chain" for ch in n.children):
            _fail("Invalid left-hand side in assignment", left)
        n = n.child_by_field_name("object") or n.child_by_field_name("function")

_CHAIN_LINKS = frozenset({"member_expression", "subscript_expression", "call_expression"})


def _c_optional_tag(c: _Checker, sk: _Seeker, i: int, start: int) -> None:
    """``a?.b`x```: a template cannot tag an optional chain (V8: "Invalid tagged template on optional
    chain"); parentheses end the chain (``(a?.b)`x``` is a tag)."""
    stack = sk.stack
    k = i if stack[i].type == "optional_chain" else i - 1
    if k < 1 or stack[k].type != "optional_chain":
        return
    n = stack[k - 1]
    for j in range(k - 2, max(-1, k - 2 - _CLIMB), -1):
        p = stack[j]
        head = p.child_by_field_name("object") or p.child_by_field_name("function") if p.type in _CHAIN_LINKS else None
        if head is None or head.start_byte != n.start_byte or head.end_byte != n.end_byte:
            return
        args = p.child_by_field_name("arguments") if p.type == "call_expression" else None
        if args is not None and args.type == "template_string":
            _fail("Invalid tagged template on optional chain", args)
        n = p

def _c_await(c: _Checker, sk: _Seeker, i: int, start: int) -> None:
    stack = sk.stack
    n = stack[i]
    if n.type == "statement_identifier":
        _fail("Unexpected reserved word", n)  # `await:` as a label
    if n.type in _NAME_NODES and not _await_then_line(c.data, stack, i):
        _check_name(c, sk, i, "await")
        return
    if n.type not in ("await", "identifier") or i < 1:
        return
    fn = _nearest_function(stack, sk, i, skip_arrows=False)
    if fn is not None and (fn.type in ("field_definition", "class_static_block") or not _is_async(fn)):
        _fail("Unexpected reserved word", start)

def _await_then_line(data: bytes, stack: list[Any], i: int) -> bool:
    """``await``, a line break, an expression: tree-sitter reads ``await;`` and a second statement, V8
    (``await`` is a keyword in a module) ``await <expression>``, which is the keyword's to check."""
    n = stack[i]
    if n.type != "identifier" or i < 1:
        return False  # also `const a = await` / `f()`: tree-sitter ends the declaration there
    if stack[i - 1].type == "expression_statement" and stack[i - 1].named_child_count != 1:
        return False
    k = _after_trivia(data, n.end_byte)
    if not any(t in data[n.end_byte : k] for t in (b"\n", b"\r")):
        return False
    return _operand_follows(data, k)  # not `await` / `if (x)`: V8 wants an operand there


def _c_yield(c: _Checker, sk: _Seeker, i: int, start: int) -> None:
    stack = sk.stack
    n = stack[i]
    if n.type in _NAME_NODES:
        _check_name(c, sk, i, "yield")
        return
    if n.type != "yield" or i < 1:
        return
    fn = _nearest_function(stack, sk, i, skip_arrows=False)
    if fn is None or fn.type in ("field_definition", "class_static_block", "arrow_function") or not _is_generator(fn):
        _fail("Unexpected strict mode reserved word", start)

def _c_return(c: _Checker, sk: _Seeker, i: int, start: int) -> None:
    stack = sk.stack
    if stack[i].type != "return" or i < 1 or stack[i - 1].type != "return_statement":
        return
    fn = _nearest_function(stack, sk, i, skip_arrows=False)
    if fn is None or fn.type in ("field_definition", "class_static_block"):
        _fail("Illegal return statement", start)
