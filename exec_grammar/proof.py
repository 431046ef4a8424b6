"""When a static proof of a call may stand: the allow-list of constructs that cannot change what a
tool call sends, nor whether it runs.

``Analysis.proven`` names the calls on a cell's unconditional top-level path; the reader says such a
call ran (``executed: yes``, ``evidence: proof``) when the cell completed and the session writes no
record of its own. That is only true if nothing in the cell can reach the realm's shared objects: the
real Codex serialises a call's argument with V8's own JSON serialiser, which honours ``toJSON`` on any
prototype, and it looks ``tools`` and its members up at the moment of the call. A cell that sets
``Object.prototype.toJSON`` before ``await tools.exec_command({cmd: "echo benign"})`` makes Codex run
another command (recorded: ``fixtures/witness/*/hostile_cells``), and so does a getter, ``Reflect``,
``Object.assign``, ``eval``, ``Function``, ``"".constructor.constructor``, a computed ``Object[k]``, a
``Proxy`` or a ``tools`` replaced through ``globalThis``.

``proven_calls(analysis)`` gives the calls a proof stands for; the reader asks it only where a
``yes`` would rest on the proof alone, so an analysis pays nothing for it. The proof is an allow-list
over the cell's tokens (linear, total: the hand-written lexer), not a
list of known tricks. A cell keeps its proofs only when every token is one of:

- a literal, a punctuator, a comment, or a keyword of plain control flow and declarations (``with``,
  ``import``, ``export``, ``class``, ``this``, ``super``, ``delete`` and ``arguments`` are not);
- a name that is not a global of the realm (:data:`REALM_GLOBALS`, as the real Codex lists them,
  ``fixtures/witness/*/realm_globals``): the cell's own variable, or a name that throws when evaluated,
  so that the cell does not complete;
- a global of :data:`SAFE_GLOBALS`, used only the way listed there (called, ``new``-ed, a listed member
  called, a listed constant read), never as a value, so no expression in the cell evaluates to a
  shared object such as ``Object``, ``JSON`` or a prototype. A declared name that is also a realm
  global is held to the same rule (tokens do not see scopes: the name may be the global elsewhere);
- ``tools`` only as ``tools.NAME(``, ``tools?.NAME?.(`` or ``tools["NAME"](`` (any other use is an
  escape: ``exec_grammar.escapes``);
- a property read by a name (``.name``, ``?.name``) or by a number or string key (``x[0]``,
  ``x["name"]``) that is not in :data:`UNSAFE_PROPERTIES` (``prototype``, ``__proto__``,
  ``constructor``, ``toJSON``, ``valueOf``…); a computed key (``x[k]``: ``k`` may be ``"__proto__"``) only
  when the value read is consumed at once as a primitive (``${data[k]}``, ``a[i] === b``);
- an object literal key that is not in :data:`UNSAFE_PROPERTIES`, and no ``get``/``set`` accessor.

With these, every object the cell can reach is one it created (or a tool's result), so an assignment to
a property (``counts.total = 1``) cannot touch anything Codex uses. Anything else withholds the proof:
the call's ``executed`` then comes from the records, or stays ``unknown``; never a guess. A withheld
proof costs little: from Codex 0.150 on, a rollout records what each cell ran.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from exec_grammar.lexer import Token, TokenKind, iter_tokens
from exec_grammar.literals import decode_string_literal

if TYPE_CHECKING:
    from exec_grammar.model import Analysis

__all__ = ["REALM_GLOBALS", "SAFE_GLOBALS", "UNSAFE_PROPERTIES", "plainly_allowed", "proof_blocker", "proven_calls"]

#: Property names through which a value reaches a shared object, or which change how a value is
#: serialised, converted or awaited by Codex's own code.
UNSAFE_PROPERTIES = frozenset({
    "prototype", "__proto__", "constructor", "toJSON", "valueOf", "toString", "toLocaleString",
    "__defineGetter__", "__defineSetter__", "__lookupGetter__", "__lookupSetter__", "caller", "callee",
    "arguments",
})

#: A global the cell may use, and how: ``None``: only called or ``new``-ed (``String(x)``, ``new Map()``);
#: a set: also ``NAME.member`` for those members, each called (or read, for the constants in
#: :data:`_CONSTANTS`); ``"value"``: read as a value too (the primitive constants). ``ALL_TOOLS`` is not
#: here: it is an array Codex shares with the cell, so the cell could write to it.
SAFE_GLOBALS: dict[str, frozenset[str] | str | None] = {
    # the code-mode globals (text, image, store… as Codex code mode defines them)
    "text": None, "image": None, "notify": None, "store": None, "load": None, "yield_control": None,
    "exit": None, "forward_output": None, "setTimeout": None, "clearTimeout": None,
    # plain values
    "undefined": "value", "NaN": "value", "Infinity": "value",
    # builtins whose listed members read or build fresh values only
    "Object": frozenset({"keys", "values", "entries", "fromEntries", "hasOwn", "is"}),
    "Array": frozenset({"isArray", "from", "of"}),
    "JSON": frozenset({"parse", "stringify"}),
    "Promise": frozenset({"all", "allSettled", "race", "any", "resolve", "reject"}),
    "Math": frozenset({
        "abs", "ceil", "floor", "round", "trunc", "sign", "max", "min", "pow", "sqrt", "cbrt", "log", "log2",
        "log10", "exp", "random", "hypot", "sin", "cos", "tan", "atan2", "PI", "E",
    }),
    "Number": frozenset({
        "isInteger", "isFinite", "isNaN", "isSafeInteger", "parseFloat", "parseInt", "MAX_SAFE_INTEGER",
        "MIN_SAFE_INTEGER", "EPSILON", "MAX_VALUE", "MIN_VALUE", "POSITIVE_INFINITY", "NEGATIVE_INFINITY",
    }),
    "String": frozenset({"fromCharCode", "fromCodePoint", "raw"}),
    "Date": frozenset({"now", "parse", "UTC"}),
    "console": frozenset({"log", "error", "warn", "info", "debug"}),
    "Boolean": None, "BigInt": None, "Map": None, "Set": None, "WeakMap": None, "WeakSet": None,
    "RegExp": None, "Error": None, "TypeError": None, "RangeError": None, "SyntaxError": None,
    "URL": None, "URLSearchParams": None, "TextEncoder": None, "TextDecoder": None, "Uint8Array": None,
    "parseInt": None, "parseFloat": None, "isNaN": None, "isFinite": None, "encodeURIComponent": None,
    "decodeURIComponent": None, "encodeURI": None, "decodeURI": None, "atob": None, "btoa": None,
    "structuredClone": None,
}
#: Members read as values, not called (``Number.MAX_SAFE_INTEGER``, ``Math.PI``).
_CONSTANTS = frozenset({
    "PI", "E", "MAX_SAFE_INTEGER", "MIN_SAFE_INTEGER", "EPSILON", "MAX_VALUE", "MIN_VALUE",
    "POSITIVE_INFINITY", "NEGATIVE_INFINITY",
})

#: Keywords of plain control flow, declarations and operators.
_KEYWORDS = frozenset({
    "const", "let", "var", "if", "else", "for", "while", "do", "break", "continue", "return", "function",
    "async", "await", "try", "catch", "finally", "throw", "new", "typeof", "instanceof", "in", "of",
    "switch", "case", "default", "null", "true", "false", "void", "yield", "debugger",
})
#: Words that withhold the proof wherever they stand as code.
_BLOCKED_WORDS = frozenset({"with", "import", "export", "class", "this", "super", "delete", "arguments"})

#: Every name a cell's bare identifier can resolve to in Codex code mode: the own properties of
#: ``globalThis`` and of its prototype chain, as the real Codex 0.144 and 0.171 list them
#: (``fixtures/witness/*/realm_globals``, pinned by ``tests/test_witness_proof.py``), and V8 globals an
#: embedder may add. A realm global is held to :data:`SAFE_GLOBALS` even where the cell declares it.
REALM_GLOBALS = frozenset({
    # ECMAScript and V8
    "globalThis", "Object", "Function", "Array", "Number", "parseFloat", "parseInt", "Infinity", "NaN",
    "undefined", "Boolean", "String", "Symbol", "Date", "Promise", "RegExp", "Error", "AggregateError",
    "EvalError", "RangeError", "ReferenceError", "SyntaxError", "TypeError", "URIError", "JSON", "Math",
    "Intl", "ArrayBuffer", "Atomics", "Uint8Array", "Int8Array", "Uint16Array", "Int16Array", "Uint32Array",
    "Int32Array", "BigUint64Array", "BigInt64Array", "Float32Array", "Float64Array", "Float16Array",
    "Uint8ClampedArray", "DataView", "Map", "BigInt", "Set", "WeakMap", "WeakSet", "Proxy", "Reflect",
    "FinalizationRegistry", "WeakRef", "decodeURI", "decodeURIComponent", "encodeURI", "encodeURIComponent",
    "escape", "unescape", "eval", "isFinite", "isNaN", "SharedArrayBuffer", "WebAssembly", "Iterator",
    "DisposableStack", "AsyncDisposableStack", "SuppressedError",
    # what embedders commonly add (absent from Codex 0.144-0.171; held to the rule should they appear)
    "console", "queueMicrotask", "structuredClone", "atob", "btoa", "URL", "URLSearchParams", "TextEncoder",
    "TextDecoder", "self", "window", "global", "setInterval", "clearInterval", "fetch",
    # Codex code mode
    "tools", "ALL_TOOLS", "text", "image", "notify", "store", "load", "yield_control", "exit",
    "setTimeout", "clearTimeout", "generatedImage", "as_settled", "audio", "content", "stream_settled",
    "forward_output",
    # Object.prototype, which the global object inherits (a bare ``constructor`` is ``Object``)
    "constructor", "__proto__", "__defineGetter__", "__defineSetter__", "__lookupGetter__",
    "__lookupSetter__", "hasOwnProperty", "isPrototypeOf", "propertyIsEnumerable", "toLocaleString",
    "toString", "valueOf",
})

_OPENERS = {"(": ")", "[": "]", "{": "}"}
#: A token after which ``[`` reads a property (``x[0]``), not an array literal.
_VALUE_END = frozenset({TokenKind.IDENT, TokenKind.NUMBER, TokenKind.STRING, TokenKind.TEMPLATE,
                        TokenKind.TEMPLATE_TAIL, TokenKind.REGEX})
#: Keywords after which ``[`` starts an array literal.
_BEFORE_VALUE = frozenset({"return", "typeof", "in", "of", "new", "await", "yield", "case", "void", "throw",
                           "else", "do", "instanceof"})


def _significant(script: str) -> list[Token]:
    return list(iter_tokens(script, trivia=False))


def _closers(toks: list[Token]) -> dict[int, int]:
    """Index of each bracket's matching closer (unbalanced brackets are left out)."""
    closer: dict[int, int] = {}
    stack: list[int] = []
    for i, t in enumerate(toks):
        if t.kind is TokenKind.PUNCT:
            if t.text in _OPENERS:
                stack.append(i)
            elif t.text in (")", "]", "}"):
                if stack and _OPENERS[toks[stack[-1]].text] == t.text:
                    closer[stack.pop()] = i
                else:
                    stack.clear()
    return closer


def _key_text(t: Token) -> str | None:
    """The property name a key token spells (an identifier or a string literal)."""
    if t.kind is TokenKind.IDENT:
        return t.text
    if t.kind is TokenKind.STRING:
        value = decode_string_literal(t.text)
        return value if isinstance(value, str) else None
    return None


def proven_calls(analysis: Analysis) -> tuple[int, ...]:
    """The calls a proof stands for: ``analysis.proven`` (the calls on the unconditional top-level path)
    when every token of the cell is on the allow-list, else none. Asked by whoever would say a call ran
    on the proof alone (the reader, for a session that records nothing of what a cell ran), so the
    check costs nothing to an analysis that no one asks it of."""
    if not analysis.proven or proof_blocker(analysis.source) is not None:
        return ()
    return analysis.proven


def proof_blocker(script: str) -> tuple[int, str] | None:
    """Why no call of ``script`` may be proven from its text: the offset (in code points) of the first
    token outside the allow-list and a short description of it; None when every token is on it (see
    the module docstring). Most cells are settled by :func:`plainly_allowed` without being lexed."""
    if plainly_allowed(script):
        return None
    return _token_blocker(script)


def _token_blocker(script: str) -> tuple[int, str] | None:
    """:func:`proof_blocker` by the lexer's tokens: the rule itself."""
    toks = _significant(script)
    closer = _closers(toks)
    n = len(toks)
    opened: list[str] = []  # the brackets open at each token, innermost last
    for i, t in enumerate(toks):
        kind = t.kind
        text = t.text
        if kind is TokenKind.ERROR or kind is TokenKind.PRIVATE:
            return t.start, f"unreadable text {text[:20]!r}"
        prev = toks[i - 1] if i else None
        nxt = toks[i + 1].text if i + 1 < n else ""
        if kind is TokenKind.PUNCT:
            if text in _OPENERS:
                if text == "[" and opened and opened[-1] == "{" and prev is not None and prev.text in ("{", ","):
                    # a computed key: in a pattern it reads the property it names (``const {[k]: F} =
                    # ""`` with ``k`` "constructor" reaches String, then Function), unseen by the rule
                    # for ``x[k]``; a literal's computed key is rare enough to withhold the proof too
                    return t.start, "a computed key"
                opened.append(text)
            elif text in (")", "]", "}") and opened:
                opened.pop()
            if text == "[" and prev is not None and _reads_property(prev):
                end = closer.get(i, -1)
                key = toks[i + 1 : end] if end > i else []
                if len(key) != 1 or key[0].kind not in (TokenKind.NUMBER, TokenKind.STRING):
                    if end > i and _consumed(toks, end + 1):
                        continue
                    return t.start, "a computed property name"
                name = _key_text(key[0]) if key[0].kind is TokenKind.STRING else None
                if name in UNSAFE_PROPERTIES:
                    return t.start, f"the property {name}"
            continue
        if kind is TokenKind.STRING and nxt == ":" and prev is not None and prev.text in ("{", ","):
            name = _key_text(t)
            if name in UNSAFE_PROPERTIES:
                return t.start, f"the key {name}"
            continue
        if kind is not TokenKind.IDENT:
            continue
        if prev is not None and prev.text in (".", "?."):
            if text in UNSAFE_PROPERTIES:
                return t.start, f"the property {text}"
            continue  # a property read by name: its base was checked where it stands
        if prev is not None and prev.text in ("{", ",") and (nxt == ":" or _is_method(toks, i, closer)):
            if text in UNSAFE_PROPERTIES:
                return t.start, f"the key {text}"
            continue
        if text in ("get", "set") and prev is not None and prev.text in ("{", ",") and i + 2 < n and (
                toks[i + 1].kind in (TokenKind.IDENT, TokenKind.STRING, TokenKind.NUMBER)
                or nxt == "[") and nxt not in (",", "}", ":", "("):
            return t.start, "a getter or setter"
        if text in _BLOCKED_WORDS:
            return t.start, f"the word {text}"
        if text in _KEYWORDS:
            continue
        if text == "tools":
            if _direct_tool_call(toks, i):
                continue
            return t.start, "tools used other than by a direct call"
        if text not in REALM_GLOBALS:
            continue  # the cell's own name, or none at all: evaluating it would throw, and the cell fail
        why = _global_use(toks, i)
        if why is not None:
            return t.start, why
    return None


#: Operators that turn the value before them into a primitive or a boolean: a property read by a
#: computed key (``data[k]``, which may be a prototype) and consumed at once by one of them, or by the
#: end of a template interpolation, never reaches a call, an assignment or a variable.
_CONSUMING = frozenset({"===", "!==", "==", "!=", "<", ">", "<=", ">=", "+", "-", "*", "/", "%", "**"})


def _consumed(toks: list[Token], j: int) -> bool:
    """The value that ends just before ``toks[j]`` is consumed as a primitive there (see
    :data:`_CONSUMING`)."""
    if j >= len(toks):
        return False
    t = toks[j]
    return t.kind in (TokenKind.TEMPLATE_MIDDLE, TokenKind.TEMPLATE_TAIL) or (
        t.kind is TokenKind.PUNCT and t.text in _CONSUMING)


def _reads_property(prev: Token) -> bool:
    """``[`` after ``prev`` reads a property (``x[0]``, ``f()[0]``, ``a?.[0]``), not an array literal."""
    if prev.kind is TokenKind.IDENT:
        return prev.text not in _BEFORE_VALUE and prev.text not in _KEYWORDS - {"null", "true", "false"}
    if prev.kind in _VALUE_END:
        return True
    return prev.text in (")", "]", "}", "?.")


def _direct_tool_call(toks: list[Token], i: int) -> bool:
    """``tools`` at ``toks[i]`` is called at once by a name: ``tools.NAME(``, ``tools?.NAME?.(``,
    ``tools["NAME"](``."""
    texts = [t.text for t in toks[i + 1 : i + 5]]
    if len(texts) >= 3 and texts[0] in (".", "?.") and toks[i + 2].kind is TokenKind.IDENT:
        return texts[2] == "(" or texts[2:4] == ["?.", "("]
    if len(texts) >= 4 and texts[0] == "[" and toks[i + 2].kind is TokenKind.STRING and texts[2] == "]":
        return texts[3] == "(" and _key_text(toks[i + 2]) not in UNSAFE_PROPERTIES
    return False


def _is_method(toks: list[Token], i: int, closer: dict[int, int]) -> bool:
    """``toks[i]`` names a method of an object literal: ``name(…) {``."""
    j = i + 1
    if j < len(toks) and toks[j].text == "(" and j in closer:
        end = closer[j]
        return end + 1 < len(toks) and toks[end + 1].text == "{"
    return False


def _global_use(toks: list[Token], i: int) -> str | None:
    """None when the global at ``toks[i]`` is used as :data:`SAFE_GLOBALS` allows, else why not."""
    name = toks[i].text
    if name not in SAFE_GLOBALS:
        return f"the name {name}"
    rule = SAFE_GLOBALS[name]
    nxt = toks[i + 1].text if i + 1 < len(toks) else ""
    prev = toks[i - 1].text if i else ""
    if rule == "value":
        return None if nxt not in _ASSIGN else f"an assignment to {name}"
    if nxt == "(" or (prev == "new" and nxt in ("(", ")", ";", ",", "]", "}", "")):
        return None  # (Codex's setTimeout refuses a string: "setTimeout expects a function callback")
    if nxt in (".", "?.") and isinstance(rule, frozenset) and i + 2 < len(toks):
        member = toks[i + 2].text
        after = toks[i + 3] if i + 3 < len(toks) else None
        if (name, member) == ("Object", "assign") and i + 4 < len(toks) and toks[i + 3].text == "(" and (
                toks[i + 4].text in ("{", "[")):
            return None  # copies into a literal it has just made: nothing shared is written
        if member in rule:
            if member in _CONSTANTS:
                return None if after is None or after.text not in _ASSIGN else f"an assignment to {name}.{member}"
            if after is not None and (after.text == "(" or (name, member) == ("String", "raw") and after.kind in (
                    TokenKind.TEMPLATE, TokenKind.TEMPLATE_HEAD)):
                return None
    return f"{name} used other than by a call"


#: Operators that assign to the name before them.
_ASSIGN = frozenset({"=", "+=", "-=", "*=", "/=", "%=", "**=", "<<=", ">>=", ">>>=", "&=", "|=", "^=", "&&=",
                     "||=", "??=", "++", "--"})


# ----------------------------------------------------------------------------------------------------------
# The fast path: the text read by regular expressions, as if strings and comments were code (so every
# token of the code is among what they see), accepting only what the token rule accepts.

_WORDS = sorted(REALM_GLOBALS | _BLOCKED_WORDS | UNSAFE_PROPERTIES | {"get", "set"}, key=len, reverse=True)
#: The places worth a look: a word the rule treats specially, an opening bracket, a backslash (an
#: escape may spell a name).
_SPOTS = re.compile(r"(?<![\w$])(" + "|".join(map(re.escape, _WORDS)) + r")(?![\w$])|\[|\\")
_CALLED = re.compile(r"[ \t]*\(")
_TOOL_CALL = re.compile(r"[ \t]*\??\.[ \t]*[A-Za-z_$][\w$]*[ \t]*(?:\?\.[ \t]*)?\(")
_MEMBER_CALL = re.compile(r"[ \t]*\.[ \t]*([A-Za-z_$][\w$]*)[ \t]*\(")
_ASSIGNED = re.compile(r"[ \t]*(?:\+\+|--|(?:\*\*|<<|>>>?|&&|\|\||\?\?|[-+*/%&|^])?=(?!=))")
#: ``x[0]``, ``x["name"]``, ``x['name']``: a literal key (a name it spells is a spot of its own).
_LITERAL_KEY = re.compile(r"\[[ \t]*(?:\d[\w.]*|\"[^\"\\\n]*\"|'[^'\\\n]*')[ \t]*\]")
_WORD_BEFORE = re.compile(r"[\w$]+$")
_ARRAY_AFTER = (_BEFORE_VALUE | _KEYWORDS) - {"null", "true", "false"}


def plainly_allowed(script: str) -> bool:
    """True when regular expressions over the text alone show that every token is on the allow-list;
    False says nothing (the lexer then decides). Each place where the rule looks closer (a global, a
    blocked word, an unsafe name, ``get``/``set``, a bracket that may read a property, a backslash) must
    stand in a context the rule accepts, read from the raw text next to it."""
    for m in _SPOTS.finditer(script):
        word = m.group(1)
        start, end = m.span()
        if word is None:
            if m.group() == "\\":
                if script.startswith("u", end):
                    return False  # \u may spell a name
                continue
            if not _bracket_plain(script, start):
                return False
            continue
        if start and script[start - 1] == ".":
            if word in UNSAFE_PROPERTIES:
                return False
            continue  # a property read by name
        if word == "tools":
            if _TOOL_CALL.match(script, end) is None:
                return False
            continue
        if word in ("get", "set"):
            if _CALLED.match(script, end) is None:
                return False
            continue
        if word not in SAFE_GLOBALS:
            return False
        rule = SAFE_GLOBALS[word]
        if rule == "value":
            if _ASSIGNED.match(script, end) is not None:
                return False
        elif _CALLED.match(script, end) is None:
            call = _MEMBER_CALL.match(script, end)
            if call is None or not isinstance(rule, frozenset) or call.group(1) not in rule or call.group(1) in _CONSTANTS:
                return False
    return True


def _bracket_plain(script: str, at: int) -> bool:
    """The ``[`` at ``at`` starts an array literal, or reads a property by a literal key."""
    before = script[max(0, at - 40) : at].rstrip()
    if not before:
        return True
    last = before[-1]
    if last in "{,":
        return False  # maybe a computed key of an object literal or pattern: the token rule decides
    if last in "([;:=!&|?+-*/%<>~^" and not before.endswith("?."):
        return True  # an array literal (after an operator or an opening bracket)
    if last.isalnum() or last in "_$":
        word = _WORD_BEFORE.search(before)
        if word is not None and word.group() in _ARRAY_AFTER:
            return True
    return _LITERAL_KEY.match(script, at) is not None
