"""Strict-mode early errors: what V8 rejects in a module before running a single statement, and
tree-sitter's grammar accepts (issue 11 §2). Code-mode cells are ES modules, so strict.

One iterative walk over the tree (``early_error``), run only when :func:`may_have_early_error` finds a
cheap textual trigger in the script (most scripts have none: then ``ts_context`` checks the three
context errors agents actually make). Checked, each pinned with V8's verdict in
``tests/test_exec_verdicts.py``:

- ``with``; HTML-like comments (``<!--``, ``-->``); legacy octal and leading-zero numbers (``017``,
  ``08``), octal escapes (``'\\101'``, ``'\\08'``, ``'\\8'``, and in untagged templates); a number followed
  by an identifier (``3in[]``); ``\\u{…}`` beyond U+10FFFF; an invalid regular expression literal;
- ``delete x``; strict reserved words (``let``, ``yield``, ``implements``, ``static``…) and ``await`` as
  names, escaped or not; ``eval``/``arguments`` bound or assigned;
- ``break``/``continue`` with no target, an undefined or repeated label; a function declaration as the
  body of ``if``/a loop/a label, a lexical declaration there; ``const a;``;
- ``super`` outside a method (``super()`` outside a derived constructor), ``new.target`` outside a
  function, an undeclared private name; ``a ?? b || c`` unparenthesised, ``-a ** b``; a line break
  before ``=>``;
- duplicate parameters, a rest element not last, ``'use strict'`` with non-simple parameters; a getter
  with parameters, a setter without exactly one; two constructors, an accessor/generator/async
  constructor; a repeated ``__proto__`` in an object literal;
- the same name declared twice where V8 forbids it (``let``/``const``/``class`` with anything, a function
  in a block or at module top level, ``var`` crossing a lexical declaration, a parameter redeclared by
  ``let``, a catch parameter redeclared by ``let``);
- ``await`` in any non-async function, method, field or static block; ``return`` outside a function.

Runtime errors are never reported here: ``f() = 1`` parses in V8 (see ``ts_repair``).
"""

from __future__ import annotations

import re
from typing import Any

from exec_grammar.backends.regex_check import regex_error

__all__ = ["early_error", "may_have_early_error"]

#: A script without any of these cannot have an early error this module checks beyond the three that
#: ``ts_context`` checks on every script. Deliberately loose (a match only costs the walk).
_TRIGGER_RE = re.compile(
    rb"\bwith\b|<!--|-->|(?<![\w$.])\.?\d[\w$.]*[A-Za-z_$\\]|(?<![\w$.])0\d|\\[1-9]|\\0|\\u"
    rb"|\bdelete\b|\b(?:yield|implements|interface|package|private|protected|public|static|eval|arguments)\b"
    rb"|\blet\b\s*(?:[^\s\[{A-Za-z_$\\]|\b(?:in|of|instanceof)\b)|(?:\bvar|\blet|\bconst|\bfunction\*?|\bclass|,|\()\s*(?:await|let)\b"
    rb"|\bawait\s*(?:[=;,)\]}:]|$)|\b(?:break|continue)\b|\bconst\s+[A-Za-z_$][\w$]*\s*(?:[;,)]|$|\n)"
    rb"|[=(,:!&|?{};\[]\s*/(?![/*])|^\s*/(?![/*])|\bsuper\b|\?\?|\*\*|[\n\r]\s*=>|\basync[ \t]*[\n\r]"
    rb"|\b[gs]et\s+[\w$\[\"'#]|\bconstructor\b|__proto__|\.\.\.|\)\s*(?:function|let|const|class)\b"
    rb"|\belse\s+(?:function|let|const|class)\b|use strict|#[A-Za-z_$]|\bnew\s*\.|\bclass\b"
    rb"|(?:\bdo|\)|\belse|^|[;}])\s*[A-Za-z_$][\w$]*\s*:(?!:)|\bvar\b|\b(?:let|const)\s*[\[{]"
    rb"|\b(?:let|const)\s+[A-Za-z_$][\w$]*\s*(?:=[^,;\n]*)?,|[}\]]\s*\)\s*=(?![=>])"
    rb"|\?\.[\w$.\[\]'\"]*\s*=(?![=>])|\bfor\s*\(\s*var\s+[^;)]*=[^;)]*\bin\b",
    re.M,
)


#: A method or accessor (``{ m() {``, ``class A { m() {``): ``await`` in it is an error V8 reports.
_METHOD_RE = re.compile(
    rb"(?:[{,]|\bclass\b[^{]*\{)\s*(?:async\s+|get\s+|set\s+|static\s+|\*\s*)*"
    rb"(?!(?:if|for|while|switch|catch|function|with)\b)[\w$]+\s*\([^()]*\)\s*\{"
)


def may_have_early_error(data: bytes) -> bool:
    """True when the script has a textual trigger of an early error that only the walk checks."""
    return (
        _TRIGGER_RE.search(data) is not None
        or _repeated_words(data)
        or (b"await" in data and _METHOD_RE.search(data) is not None)
    )


_PARAMS_RE = re.compile(rb"\(([^()]*)\)")
_WORD_RE = re.compile(rb"[A-Za-z_$][\w$]*")
_DECL_RE = re.compile(rb"\b(?:let|const|class|function\*?)\s+([A-Za-z_$][\w$]*)")


def _repeated_words(data: bytes) -> bool:
    """A name declared twice, or a parenthesised list repeating a word (duplicate parameters)."""
    names = _DECL_RE.findall(data)
    if len(set(names)) != len(names):
        return True
    declared = set(names)
    for m in _PARAMS_RE.finditer(data):
        words = _WORD_RE.findall(m.group(1))
        if len(set(words)) != len(words) or declared.intersection(words):
            return True
    return False


class EarlyError(Exception):
    """Raised inside the walk at the first error; carries V8's message and the byte offset."""

    def __init__(self, message: str, byte: int) -> None:
        super().__init__(message)
        self.message = message
        self.byte = byte


_FUNCTION_TYPES = frozenset(
    {
        "function_declaration",
        "function_expression",
        "function",
        "generator_function",
        "generator_function_declaration",
        "arrow_function",
        "method_definition",
    }
)
_LOOPS = frozenset({"for_statement", "for_in_statement", "while_statement", "do_statement"})
_BLOCK_SCOPES = frozenset({"statement_block", "switch_body", "for_statement", "for_in_statement", "class_static_block"})
_STRICT_RESERVED = frozenset(
    {"implements", "interface", "let", "package", "private", "protected", "public", "static", "yield"}
)
_NAME_NODES = frozenset({"identifier", "shorthand_property_identifier", "shorthand_property_identifier_pattern"})
_ESCAPE_RE = re.compile(r"\\u\{([0-9a-fA-F]+)\}|\\u([0-9a-fA-F]{4})")
_OCTAL_ESCAPE_RE = re.compile(rb"\\(?:[1-7]|0[0-9])")
_BIG_ESCAPE_RE = re.compile(rb"\\u\{0*([0-9a-fA-F]+)\}")
_LEGACY_NUMBER_RE = re.compile(rb"0[0-9]")
_ID_CONTINUE = frozenset(b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_$\\")


def decode_identifier(text: str) -> str:
    """An identifier's name with its ``\\uXXXX``/``\\u{…}`` escapes decoded (V8 compares names so)."""
    if "\\" not in text:
        return text

    def one(m: re.Match[str]) -> str:
        h = m.group(1) or m.group(2)
        v = int(h, 16)
        return chr(v) if v <= 0x10FFFF else "\ufffd"

    return _ESCAPE_RE.sub(one, text)


class _Fn:
    """What the walk knows about the function (or the module) it is in."""

    __slots__ = ("kind", "is_async", "generator", "method", "ctor", "derived", "labels", "breakable", "loops", "arrow")

    def __init__(self, node: Any, kind: str) -> None:
        self.kind = kind
        self.is_async = kind == "module"
        self.generator = False
        self.method = False
        self.ctor = False
        self.derived = False
        self.arrow = kind == "arrow_function"
        self.labels: list[tuple[str, bool]] = []  # (name, labels a loop)
        self.breakable = 0
        self.loops = 0
        if node is not None and kind != "module":
            for c in node.children:
                t = c.type
                if t == "async":
                    self.is_async = True
                elif t == "*":
                    self.generator = True
                elif t in ("statement_block", "formal_parameters"):
                    break
            if kind in ("generator_function", "generator_function_declaration"):
                self.generator = True


class _Scope:
    __slots__ = ("kind", "lexical", "vars", "params", "catch_simple")

    def __init__(self, kind: str) -> None:
        self.kind = kind  # "function" (module too), "block", "catch"
        self.lexical: set[str] = set()
        self.vars: set[str] = set()
        self.params: set[str] = set()
        self.catch_simple = False


def early_error(root: Any, data: bytes) -> tuple[str, int] | None:
    """The first early error V8 reports in the module, as (message, byte), or None."""
    try:
        _Walk(data).run(root)
    except EarlyError as e:
        return e.message, e.byte
    return None


class _Walk:
    def __init__(self, data: bytes) -> None:
        self.data = data
        self.fns: list[_Fn] = [_Fn(None, "module")]
        self.scopes: list[_Scope] = [_Scope("function")]
        self.privates: list[set[str]] = []
        self.private_uses: list[tuple[str, int, int]] = []  # (name, byte, class depth)

    def text(self, node: Any) -> str:
        return self.data[node.start_byte : node.end_byte].decode("utf-8", "surrogatepass")

    def fail(self, message: str, node_or_byte: Any) -> None:
        byte = node_or_byte if isinstance(node_or_byte, int) else node_or_byte.start_byte
        raise EarlyError(message, byte)

    def run(self, root: Any) -> None:
        # Iterative: (node, exit action or None). A 100,000-deep nesting must not overflow the stack.
        stack: list[tuple[Any, Any]] = [(root, None)]
        while stack:
            node, action = stack.pop()
            if action is not None:
                action()
                continue
            after = self.enter(node)
            if after is not None:
                stack.append((node, after))
            children = node.children
            for c in reversed(children):
                if c.is_named:
                    stack.append((c, None))

    # -- scopes --------------------------------------------------------------------------------
    def declare(self, name: str, kind: str, node: Any) -> None:
        """kind: "lexical", "var", "param", "catch"."""
        scopes = self.scopes
        msg = f"Identifier '{name}' has already been declared"
        if kind == "var":
            for s in reversed(scopes):
                if name in s.lexical:
                    self.fail(msg, node)
                if s.kind == "catch" and s.catch_simple and name in s.params:
                    pass
                elif s.kind == "catch" and name in s.params:
                    self.fail(msg, node)
                s.vars.add(name)
                if s.kind == "function":
                    break
            return
        s = scopes[-1]
        if kind == "param":
            s.params.add(name)
            return
        if name in s.lexical or name in s.vars or name in s.params:
            self.fail(msg, node)
        s.lexical.add(name)

    def bound_names(self, node: Any, out: list[Any]) -> None:
        stack = [node]
        while stack:
            n = stack.pop()
            t = n.type
            if t in ("identifier", "shorthand_property_identifier_pattern"):
                out.append(n)
            elif t in ("object_pattern", "array_pattern", "rest_pattern", "formal_parameters"):
                stack.extend(reversed([c for c in n.named_children if c.type != "comment"]))
            elif t in ("assignment_pattern", "object_assignment_pattern"):
                left = n.child_by_field_name("left") or (n.named_children[0] if n.named_children else None)
                if left is not None:
                    stack.append(left)
            elif t == "pair_pattern":
                v = n.child_by_field_name("value")
                if v is not None:
                    stack.append(v)

    def declare_pattern(self, node: Any, kind: str) -> None:
        names: list[Any] = []
        self.bound_names(node, names)
        for n in names:
            self.declare(decode_identifier(self.text(n)), kind, n)

    # -- the walk --------------------------------------------------------------------------------
    def enter(self, node: Any) -> Any:
        t = node.type
        handler = _HANDLERS.get(t)
        return handler(self, node) if handler is not None else None


def _h_function(w: _Walk, node: Any) -> Any:
    t = node.type
    fn = _Fn(node, t)
    parent = node.parent
    if t == "method_definition":
        fn.method = True
        fn.arrow = False
        kids = node.children
        name = node.child_by_field_name("name")
        key = decode_identifier(w.text(name)) if name is not None else ""
        if name is not None and name.type == "string":
            key = key[1:-1]
        static = any(c.type == "static" for c in kids)
        kinds = {c.type for c in kids if c.type in ("get", "set", "async", "*")}
        params = node.child_by_field_name("parameters")
        plist = [c for c in params.named_children if c.type != "comment"] if params is not None else []
        if "get" in kinds and plist:
            w.fail("Getter must not have any formal parameters.", params)
        if "set" in kinds:
            if len(plist) != 1:
                w.fail("Setter must have exactly one formal parameter.", params)
            if plist[0].type == "rest_pattern":
                w.fail("Setter function argument must not be a rest parameter", params)
        if parent is not None and parent.type == "class_body" and key == "constructor" and not static:
            if name is not None and name.type in ("property_identifier", "string"):
                if kinds:
                    w.fail("Class constructor may not be an accessor" if kinds & {"get", "set"}
                           else "Class constructor may not be a generator" if "*" in kinds
                           else "Class constructor may not be an async method", name)
                fn.ctor = True
                cls = parent.parent
                fn.derived = cls is not None and any(c.type == "class_heritage" for c in cls.children)
        fn.is_async = "async" in kinds
        fn.generator = "*" in kinds
    elif t == "function_declaration" or t == "generator_function_declaration":
        name = node.child_by_field_name("name")
        if name is not None:
            # at a function's top level a declaration is var-like; in a block or the module, lexical
            top = w.scopes[-1]
            lexical = top.kind != "function" or len(w.fns) == 1
            w.declare(decode_identifier(w.text(name)), "lexical" if lexical else "var", name)
    if t == "arrow_function":
        _check_arrow(w, node, fn)
    w.fns.append(fn)
    w.scopes.append(_Scope("function"))
    params = node.child_by_field_name("parameters") or node.child_by_field_name("parameter")
    if params is not None:
        names: list[Any] = []
        w.bound_names(params, names)
        seen: set[str] = set()
        for n in names:
            name_s = decode_identifier(w.text(n))
            if name_s in seen:
                w.fail("Duplicate parameter name not allowed in this context", n)
            seen.add(name_s)
            w.declare(name_s, "param", n)
        if params.type == "formal_parameters":
            plist = [c for c in params.named_children if c.type != "comment"]
            for c in plist[:-1]:
                if c.type == "rest_pattern":
                    w.fail("Rest parameter must be last formal parameter", c)
            if plist and plist[-1].type == "rest_pattern":
                close = params.children[-1] if params.children else None
                prev = params.children[-2] if len(params.children) >= 2 else None
                if prev is not None and prev.type == "," and close is not None:
                    w.fail("Rest parameter must be last formal parameter", prev)
            simple = all(c.type == "identifier" for c in plist)
            body = node.child_by_field_name("body")
            if not simple and body is not None and body.type == "statement_block":
                first = next((c for c in body.named_children if c.type != "comment"), None)
                if first is not None and first.type == "expression_statement":
                    s = first.named_children[0] if first.named_children else None
                    if s is not None and s.type == "string" and w.text(s)[1:-1] == "use strict":
                        w.fail("Illegal 'use strict' directive in function with non-simple parameter list", s)

    def leave() -> None:
        w.fns.pop()
        w.scopes.pop()

    return leave


def _check_arrow(w: _Walk, node: Any, fn: _Fn) -> None:
    arrow = next((c for c in node.children if c.type == "=>"), None)
    params = node.child_by_field_name("parameters") or node.child_by_field_name("parameter")
    if arrow is not None and params is not None:
        gap = w.data[params.end_byte : arrow.start_byte]
        if b"\n" in gap or b"\r" in gap or "\u2028".encode() in gap or "\u2029".encode() in gap:
            w.fail("Unexpected token '=>'", arrow)
    first = node.children[0] if node.children else None
    if first is not None and first.type == "async" and params is not None:
        gap = w.data[first.end_byte : params.start_byte]
        if b"\n" in gap or b"\r" in gap:
            w.fail("Malformed arrow function parameter list", first)
    fn.is_async = first is not None and first.type == "async"


def _h_block(w: _Walk, node: Any) -> Any:
    parent = node.parent
    if node.type == "statement_block" and parent is not None and (
        parent.type in _FUNCTION_TYPES or parent.type == "catch_clause"
    ):
        return None  # the function's (or the catch clause's) own scope
    w.scopes.append(_Scope("block"))
    if node.type in ("for_statement", "for_in_statement"):
        w.fns[-1].loops += 1
        w.fns[-1].breakable += 1
        _check_single_statement(w, node.child_by_field_name("body"))

        def leave_loop() -> None:
            w.scopes.pop()
            w.fns[-1].loops -= 1
            w.fns[-1].breakable -= 1

        return leave_loop
    if node.type == "switch_body":
        w.fns[-1].breakable += 1

        def leave_switch() -> None:
            w.scopes.pop()
            w.fns[-1].breakable -= 1

        return leave_switch
    if node.type == "class_static_block":
        fn = _Fn(None, "static_block")
        fn.method = True
        w.fns.append(fn)

        def leave_static() -> None:
            w.scopes.pop()
            w.fns.pop()

        return leave_static
    return w.scopes.pop


def _h_loop(w: _Walk, node: Any) -> Any:
    fn = w.fns[-1]
    fn.loops += 1
    fn.breakable += 1
    _check_single_statement(w, node.child_by_field_name("body"))

    def leave() -> None:
        fn.loops -= 1
        fn.breakable -= 1

    return leave


def _check_single_statement(w: _Walk, body: Any) -> None:
    if body is None:
        return
    if body.type in ("function_declaration", "generator_function_declaration"):
        w.fail("In strict mode code, functions can only be declared at top level or inside a block.", body)
    if body.type in ("lexical_declaration", "class_declaration"):
        w.fail("Lexical declaration cannot appear in a single-statement context", body)


def _h_if(w: _Walk, node: Any) -> Any:
    _check_single_statement(w, node.child_by_field_name("consequence"))
    return None


def _h_else(w: _Walk, node: Any) -> Any:
    body = next((c for c in node.named_children if c.type != "comment"), None)
    _check_single_statement(w, body)
    return None


def _h_catch(w: _Walk, node: Any) -> Any:
    s = _Scope("catch")
    param = node.child_by_field_name("parameter")
    if param is not None:
        names: list[Any] = []
        w.bound_names(param, names)
        for n in names:
            name = decode_identifier(w.text(n))
            if name in s.params:
                w.fail(f"Identifier '{name}' has already been declared", n)
            s.params.add(name)
        # `catch (e) { var e }` is allowed (Annex B); `catch ([e]) { var e }` is not
        s.catch_simple = param.type == "identifier"
    w.scopes.append(s)
    return w.scopes.pop


def _h_lexical(w: _Walk, node: Any) -> Any:
    first = node.children[0] if node.children else None
    is_const = first is not None and first.type == "const"
    parent = node.parent
    for d in node.named_children:
        if d.type != "variable_declarator":
            continue
        name = d.child_by_field_name("name")
        if name is not None:
            w.declare_pattern(name, "lexical")
        if is_const and d.child_by_field_name("value") is None:
            if parent is None or parent.type != "for_in_statement":
                w.fail("Missing initializer in const declaration", d)
    return None


def _h_var(w: _Walk, node: Any) -> Any:
    for d in node.named_children:
        if d.type == "variable_declarator":
            name = d.child_by_field_name("name")
            if name is not None:
                w.declare_pattern(name, "var")
    return None


def _h_for_in(w: _Walk, node: Any) -> Any:
    leave = _h_block(w, node)
    kind = node.child_by_field_name("kind")
    left = node.child_by_field_name("left")
    if kind is not None and node.child_by_field_name("value") is not None:
        w.fail("for-in loop variable declaration may not have an initializer.", node)
    if kind is not None and left is not None:
        k = w.text(kind)
        w.declare_pattern(left, "var" if k == "var" else "lexical")
    return leave


def _h_class(w: _Walk, node: Any) -> Any:
    if node.type == "class_declaration":
        name = node.child_by_field_name("name")
        if name is not None:
            w.declare(decode_identifier(w.text(name)), "lexical", name)
    return None


def _h_class_body(w: _Walk, node: Any) -> Any:
    names: set[str] = set()
    ctors = 0
    for m in node.named_children:
        if m.type in ("field_definition", "method_definition"):
            key = m.child_by_field_name("property") or m.child_by_field_name("name")
            if key is not None and key.type == "private_property_identifier":
                names.add(w.text(key))
            if m.type == "method_definition" and key is not None and not any(c.type == "static" for c in m.children):
                k = w.text(key)
                if (key.type == "property_identifier" and decode_identifier(k) == "constructor") or (
                    key.type == "string" and k[1:-1] == "constructor"
                ):
                    ctors += 1
                    if ctors > 1:
                        w.fail("A class may only have one constructor", key)
    w.privates.append(names)

    def leave() -> None:
        w.privates.pop()

    return leave


def _h_field(w: _Walk, node: Any) -> Any:
    fn = _Fn(None, "field")
    fn.method = True
    w.fns.append(fn)
    return w.fns.pop


def _h_private(w: _Walk, node: Any) -> Any:
    parent = node.parent
    if parent is not None and parent.type in ("field_definition", "method_definition"):
        return None
    name = w.text(node)
    if not any(name in s for s in w.privates):
        w.fail(f"Private field '{name}' must be declared in an enclosing class", node)
    return None


def _h_name(w: _Walk, node: Any) -> Any:
    raw = w.text(node)
    name = decode_identifier(raw)
    parent = node.parent
    if name in _STRICT_RESERVED:
        w.fail("Unexpected strict mode reserved word", node)
    if name == "await":
        w.fail("Unexpected reserved word", node)
    if name in ("eval", "arguments") and parent is not None and _is_binding(node, parent):
        w.fail("Unexpected eval or arguments in strict mode", node)
    if "\\" in raw and not _valid_escaped_name(raw, name):
        w.fail("Invalid or unexpected token", node)
    if "\\" in raw and name in _KEYWORDS:
        w.fail("Keyword must not contain escaped characters", node)
    return None


def _valid_escaped_name(raw: str, name: str) -> bool:
    """An escaped identifier must still spell an IdentifierName (``a\\u0020b`` does not)."""
    for m in _BIG_ESCAPE_RE.finditer(raw.encode("utf-8", "surrogatepass")):
        if int(m.group(1), 16) > 0x10FFFF:
            return False
    if "\\" in name:
        return False
    probe = name.replace("$", "_").replace("\u200c", "_").replace("\u200d", "_")
    return probe.isidentifier()


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


_KEYWORDS = frozenset(
    "break case catch class const continue debugger default delete do else export extends finally for "
    "function if import in instanceof new return super switch this throw try typeof var void while with "
    "null true false enum".split()
)


def _h_with(w: _Walk, node: Any) -> Any:
    w.fail("Strict mode code may not include a with statement", node)


def _h_html_comment(w: _Walk, node: Any) -> Any:
    w.fail("HTML comments are not allowed in modules", node)


def _h_number(w: _Walk, node: Any) -> Any:
    text = w.data[node.start_byte : node.end_byte]
    if _LEGACY_NUMBER_RE.match(text):
        if text.endswith(b"n"):
            w.fail("Invalid or unexpected token", node)
        octal = all(48 <= b <= 55 for b in text)
        w.fail("Octal literals are not allowed in strict mode." if octal
               else "Decimals with leading zeros are not allowed in strict mode.", node)
    end = node.end_byte
    if end < len(w.data) and (w.data[end] in _ID_CONTINUE or w.data[end] >= 0x80):
        w.fail("Invalid or unexpected token", end)
    return None


def _h_string(w: _Walk, node: Any) -> Any:
    _check_escapes(w, node, template=False)
    return None


def _h_template(w: _Walk, node: Any) -> Any:
    parent = node.parent
    tagged = parent is not None and parent.type == "call_expression" and parent.child_by_field_name(
        "arguments"
    ) is not None and parent.child_by_field_name("arguments").start_byte == node.start_byte
    if not tagged:
        _check_escapes(w, node, template=True)
    return None


def _check_escapes(w: _Walk, node: Any, template: bool) -> None:
    for c in node.children:
        if c.type != "escape_sequence":
            continue
        text = w.data[c.start_byte : c.end_byte]
        if _OCTAL_ESCAPE_RE.match(text) or text in (b"\\8", b"\\9"):
            if text in (b"\\8", b"\\9"):
                w.fail(f"\\8 and \\9 are not allowed in {'template strings' if template else 'strict mode'}.", c)
            w.fail("Octal escape sequences are not allowed in template strings." if template
                   else "Octal escape sequences are not allowed in strict mode.", c)
        if text == b"\\0" and c.end_byte < len(w.data) and 48 <= w.data[c.end_byte] <= 57:
            w.fail("Octal escape sequences are not allowed in template strings." if template
                   else "Octal escape sequences are not allowed in strict mode.", c)
        m = _BIG_ESCAPE_RE.match(text)
        if m and int(m.group(1), 16) > 0x10FFFF:
            w.fail("Undefined Unicode code-point", c)


def _h_regex(w: _Walk, node: Any) -> Any:
    pattern = node.child_by_field_name("pattern")
    flags = node.child_by_field_name("flags")
    message = regex_error(w.text(pattern) if pattern is not None else "", w.text(flags) if flags is not None else "")
    if message is not None:
        w.fail(f"Invalid regular expression: {message}", node)
    return None


def _h_unary(w: _Walk, node: Any) -> Any:
    op = node.child_by_field_name("operator")
    if op is not None and op.type == "delete":
        arg = node.child_by_field_name("argument")
        while arg is not None and arg.type == "parenthesized_expression":
            inner = [c for c in arg.named_children if c.type != "comment"]
            arg = inner[0] if len(inner) == 1 else None
        if arg is not None and arg.type == "identifier":
            w.fail("Delete of an unqualified identifier in strict mode.", node)
    return None


def _h_binary(w: _Walk, node: Any) -> Any:
    op = node.child_by_field_name("operator")
    if op is None:
        return None
    o = op.type
    left = node.child_by_field_name("left")
    right = node.child_by_field_name("right")
    if o == "??" or o in ("||", "&&"):
        for side in (left, right):
            if side is not None and side.type == "binary_expression":
                so = side.child_by_field_name("operator")
                if so is not None and ((o == "??") != (so.type == "??")) and so.type in ("??", "||", "&&"):
                    w.fail(f"Unexpected token '{o if side is left else so.type}'", node)
    elif o == "<" and w.data[op.end_byte : op.end_byte + 3] == b"!--":
        w.fail("HTML comments are not allowed in modules", op)
    elif o == "**" and left is not None and left.type in ("unary_expression", "await_expression"):
        w.fail("Unary operator used immediately before exponentiation expression. Parenthesis must be "
               "used to disambiguate operator precedence", node)
    return None


def _h_break(w: _Walk, node: Any) -> Any:
    fn = w.fns[-1]
    label = node.child_by_field_name("label") or next(
        (c for c in node.named_children if c.type == "statement_identifier"), None
    )
    is_continue = node.type == "continue_statement"
    if label is not None:
        name = w.text(label)
        found = [lp for n, lp in fn.labels if n == name]
        if not found:
            w.fail(f"Undefined label '{name}'", label)
        if is_continue and not found[-1]:
            w.fail(f"Illegal continue statement: '{name}' does not denote an iteration statement", label)
    elif is_continue and fn.loops == 0:
        w.fail("Illegal continue statement: no surrounding iteration statement", node)
    elif not is_continue and fn.breakable == 0:
        w.fail("Illegal break statement", node)
    return None


def _h_label(w: _Walk, node: Any) -> Any:
    fn = w.fns[-1]
    label = node.child_by_field_name("label")
    body = node.child_by_field_name("body")
    name = w.text(label) if label is not None else ""
    if any(n == name for n, _ in fn.labels):
        w.fail(f"Label '{name}' has already been declared", node)
    if body is not None and body.type in ("function_declaration", "generator_function_declaration"):
        w.fail("In strict mode code, functions can only be declared at top level or inside a block.", body)
    inner = body
    while inner is not None and inner.type == "labeled_statement":
        inner = inner.child_by_field_name("body")
    fn.labels.append((name, inner is not None and inner.type in _LOOPS))
    return fn.labels.pop


def _h_super(w: _Walk, node: Any) -> Any:
    parent = node.parent
    fn = next((f for f in reversed(w.fns) if not f.arrow), None)
    if parent is not None and parent.type == "call_expression":
        if fn is None or not fn.derived:
            w.fail("'super' keyword unexpected here", node)
    elif fn is None or not fn.method:
        w.fail("'super' keyword unexpected here", node)
    return None


def _h_meta(w: _Walk, node: Any) -> Any:
    if w.text(node).startswith("new"):
        fn = next((f for f in reversed(w.fns) if not f.arrow), None)
        if fn is None or fn.kind == "module":
            w.fail("new.target expression is not allowed here", node)
    return None


def _h_await(w: _Walk, node: Any) -> Any:
    fn = w.fns[-1]
    if not fn.is_async:
        w.fail("Unexpected reserved word", node)
    return None


def _h_yield(w: _Walk, node: Any) -> Any:
    if not w.fns[-1].generator:
        w.fail("Unexpected strict mode reserved word", node)
    return None


def _h_assign(w: _Walk, node: Any) -> Any:
    left = node.child_by_field_name("left")
    if left is None:
        return None
    if left.type == "parenthesized_expression":
        inner = [c for c in left.named_children if c.type != "comment"]
        while len(inner) == 1 and inner[0].type == "parenthesized_expression":
            inner = [c for c in inner[0].named_children if c.type != "comment"]
        if len(inner) == 1 and inner[0].type in ("object", "array", "object_pattern", "array_pattern"):
            w.fail("Invalid left-hand side in assignment", left)
    n = left
    while n is not None and n.type in ("member_expression", "subscript_expression", "call_expression"):
        if any(c.type == "optional_chain" for c in n.children):
            w.fail("Invalid left-hand side in assignment", left)
        n = n.child_by_field_name("object") or n.child_by_field_name("function")
    return None


def _h_return(w: _Walk, node: Any) -> Any:
    if all(f.kind in ("module", "field", "static_block") for f in w.fns):
        w.fail("Illegal return statement", node)
    return None


def _h_object(w: _Walk, node: Any) -> Any:
    protos = 0
    for c in node.named_children:
        if c.type == "pair":
            key = c.child_by_field_name("key")
            if key is None:
                continue
            k = w.text(key)
            if (key.type == "property_identifier" and decode_identifier(k) == "__proto__") or (
                key.type == "string" and k[1:-1] == "__proto__"
            ):
                protos += 1
                if protos > 1:
                    w.fail("Duplicate __proto__ fields are not allowed in object literals", key)
    return None


def _h_pattern(w: _Walk, node: Any) -> Any:
    kids = [c for c in node.named_children if c.type != "comment"]
    for c in kids[:-1]:
        if c.type == "rest_pattern":
            w.fail("Rest element must be last element", c)
    return None


_HANDLERS: dict[str, Any] = {
    **dict.fromkeys(_FUNCTION_TYPES, _h_function),
    "statement_block": _h_block,
    "switch_body": _h_block,
    "for_statement": _h_block,
    "for_in_statement": _h_for_in,
    "class_static_block": _h_block,
    "while_statement": _h_loop,
    "do_statement": _h_loop,
    "if_statement": _h_if,
    "else_clause": _h_else,
    "catch_clause": _h_catch,
    "lexical_declaration": _h_lexical,
    "variable_declaration": _h_var,
    "class_declaration": _h_class,
    "class": _h_class,
    "class_body": _h_class_body,
    "field_definition": _h_field,
    "private_property_identifier": _h_private,
    "identifier": _h_name,
    "shorthand_property_identifier": _h_name,
    "shorthand_property_identifier_pattern": _h_name,
    "with_statement": _h_with,
    "html_comment": _h_html_comment,
    "number": _h_number,
    "string": _h_string,
    "template_string": _h_template,
    "regex": _h_regex,
    "unary_expression": _h_unary,
    "binary_expression": _h_binary,
    "break_statement": _h_break,
    "continue_statement": _h_break,
    "labeled_statement": _h_label,
    "super": _h_super,
    "meta_property": _h_meta,
    "await_expression": _h_await,
    "return_statement": _h_return,
    "yield_expression": _h_yield,
    "assignment_expression": _h_assign,
    "augmented_assignment_expression": _h_assign,
    "object": _h_object,
    "object_pattern": _h_pattern,
    "array_pattern": _h_pattern,
}
