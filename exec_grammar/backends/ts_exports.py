"""``import`` and ``export`` declarations: rewritten so that the strict async function body V8 compiles a
cell as (``exec_grammar.v8``) checks what a module would, and the module's own export rules checked on
the tree. Each rule is pinned by a node case (``fixtures/js/hand``, ``tests/test_exec_v8.py``).

Only declarations that are statements of the cell itself are rewritten; one nested in a block or a
function is left as it stands, and V8 rejects it as a module does (``Unexpected token 'export'``).
Every rewrite keeps the length of the cell and its line breaks (``treesitter._edited``), so V8's
positions stay the cell's:

- ``import a, {b as c} from 'm' with {…};`` is compiled as ``let a, c;`` (the keyword becomes ``let``,
  each binding keeps its place, the commas between bindings are kept, the rest is blanked): a binding
  V8 would reject (``await``, ``arguments``, ``eval``, a reserved word) or one declared twice (by another
  import, a top-level ``function``, ``let``, ``var``) fails as in a module; ``import 'm'`` is blanked;
- ``export`` before a declaration is blanked, as is ``export default`` before a named function or
  class (it declares that name);
- ``export default function () {}`` (a class, an async or generator function) is compiled as
  ``function $() {}``: a declaration, as in a module;
- ``export default EXPR`` is compiled as ``$= EXPR`` (an AssignmentExpression, as the grammar wants);
- ``export {…}`` and ``export … from`` are blanked, after the checks below.

Checked on the tree (a module's early errors that no rewrite can show V8): an exported name given twice
(``Duplicate export of 'x'``; two ``export default``), ``export {x}`` of a name the module does not
declare at its top level (``Export 'x' is not defined in module``), a string as the local name of
``export {…}`` without ``from``, and an import or export name that is a string with a lone surrogate.
"""

from __future__ import annotations

from typing import Any

from exec_grammar.literals import decode_string_literal

__all__ = ["module_declarations"]

_FUNCTIONS = frozenset(
    {"function_declaration", "function_expression", "function", "arrow_function", "method_definition",
     "generator_function", "generator_function_declaration", "class_declaration", "class", "class_body"}
)
_ANON_DEFAULT = frozenset({"function_expression", "function", "generator_function", "class"})
_DECLS = frozenset({"function_declaration", "generator_function_declaration", "class_declaration"})


def _text(node: Any, data: bytes) -> bytes:
    return data[node.start_byte : node.end_byte]


def _name_of(node: Any, data: bytes) -> str:
    """An export/import name: an identifier's text or a string's value."""
    raw = _text(node, data)
    if node.type == "string":
        return decode_string_literal(raw.decode("utf-8", "surrogatepass")) or ""
    return raw.decode("utf-8", "replace")


def _lone_surrogate(name: str) -> bool:
    return any(0xD800 <= ord(c) <= 0xDFFF for c in name)


def pattern_names(node: Any) -> list[Any]:
    """The identifier nodes a binding pattern binds (explicit stack: patterns may nest deep)."""
    out = []
    stack = [node]
    while stack:
        n = stack.pop()
        t = n.type
        if t in ("identifier", "shorthand_property_identifier_pattern"):
            out.append(n)
        elif t == "pair_pattern":
            v = n.child_by_field_name("value")
            if v is not None:
                stack.append(v)
        elif t in ("assignment_pattern", "object_assignment_pattern"):
            left = n.child_by_field_name("left")
            if left is not None:
                stack.append(left)
        elif t in ("array_pattern", "object_pattern", "rest_pattern"):
            stack.extend(reversed(n.named_children))
    return out


def _declared(node: Any) -> list[Any]:
    """The name nodes a declaration statement binds."""
    t = node.type
    if t in _DECLS:
        name = node.child_by_field_name("name")
        return [name] if name is not None else []
    if t in ("lexical_declaration", "variable_declaration"):
        out: list[Any] = []
        for d in node.named_children:
            if d.type == "variable_declarator":
                name = d.child_by_field_name("name")
                if name is not None:
                    out.extend(pattern_names(name))
        return out
    return []


def _top_level_names(root: Any, data: bytes) -> set[str]:
    """Every name the module declares in its own scope: top-level declarations and imports, and ``var``
    anywhere outside a function or class (one walk, not entering them)."""
    names: set[str] = set()
    for child in root.named_children:
        node = child
        if node.type == "export_statement":
            node = node.child_by_field_name("declaration") or node
        names.update(_text(n, data).decode("utf-8", "replace") for n in _declared(node))
        if child.type == "import_statement":
            names.update(_text(n, data).decode("utf-8", "replace") for n, _ in _import_bindings(child)[0])
    stack = list(root.named_children)
    while stack:
        n = stack.pop()
        if n.type in _FUNCTIONS:
            continue
        if n.type == "variable_declaration":
            names.update(_text(x, data).decode("utf-8", "replace") for x in _declared(n))
        elif n.type == "for_in_statement" and any(c.type == "var" for c in n.children):
            left = n.child_by_field_name("left")
            if left is not None:
                names.update(_text(x, data).decode("utf-8", "replace") for x in pattern_names(left))
        stack.extend(n.named_children)
    return names


def _import_bindings(stmt: Any) -> tuple[list[tuple[Any, Any]], list[Any]]:
    """``([(binding identifier, the comma before it or None)], import names that are strings)``."""
    bindings: list[tuple[Any, Any]] = []
    strings: list[Any] = []
    comma = None
    clause = next((c for c in stmt.named_children if c.type == "import_clause"), None)
    if clause is None:
        return bindings, strings
    for part in clause.children:
        if part.type == ",":
            comma = part
        elif part.type == "identifier":
            bindings.append((part, comma))
            comma = None
        elif part.type == "namespace_import":
            ident = next((c for c in part.named_children if c.type == "identifier"), None)
            if ident is not None:
                bindings.append((ident, comma))
            comma = None
        elif part.type == "named_imports":
            for spec in part.children:
                if spec.type == ",":
                    comma = comma or spec
                elif spec.type == "import_specifier":
                    name = spec.child_by_field_name("name")
                    alias = spec.child_by_field_name("alias")
                    if name is not None and name.type == "string":
                        strings.append(name)
                    target = alias or name
                    if target is not None:
                        bindings.append((target, comma))
                    comma = None
    return bindings, strings


def _import_edits(stmt: Any, data: bytes) -> tuple[list[tuple[int, int, bytes]], str | None, int]:
    """The edits compiling ``stmt`` as ``let a, b;``, and an error (message, byte) V8 cannot see."""
    bindings, strings = _import_bindings(stmt)
    for s in strings:
        if _lone_surrogate(_name_of(s, data)):
            return [], "SyntaxError: Invalid module export name: contains unpaired surrogate", s.start_byte
    for b, _ in bindings:
        if b.type == "string":  # `import {'s'} from …`: a string cannot be a binding
            return [], "SyntaxError: Unexpected string", b.start_byte
    start, end = stmt.start_byte, stmt.end_byte
    if not bindings:
        return [(start, end, b"")], None, 0
    edits: list[tuple[int, int, bytes]] = [(start, start + 6, b"let   ")]
    at = start + 6
    for i, (b, comma) in enumerate(bindings):
        if i > 0:
            if comma is None:  # a comma between bindings is always there; be safe
                return [(start, end, b"")], None, 0
            edits.append((at, comma.start_byte, b""))
            edits.append((comma.start_byte, comma.end_byte, b","))
            at = comma.end_byte
        edits.append((at, b.start_byte, b""))
        at = b.end_byte
    edits.append((at, end - 1, b""))
    edits.append((end - 1, end, b";"))
    return edits, None, 0


def _default_edits(stmt: Any, value: Any, data: bytes) -> list[tuple[int, int, bytes]]:
    """``export default VALUE`` as a declaration or an AssignmentExpression (see the module docstring)."""
    start = stmt.start_byte
    kw = next((c for c in stmt.children if c.type == "default"), None)
    if kw is None:
        return [(start, value.start_byte, b"")]
    # `export default function …`, `class …`, `async function …` is a declaration, whatever follows it on
    # the line (tree-sitter may read `class {}.x` as one expression)
    while value.type not in _ANON_DEFAULT and value.child_count and value.children[0].start_byte == value.start_byte:
        value = value.children[0]
    if value.type in _ANON_DEFAULT and value.child_by_field_name("name") is not None:
        return [(start, value.start_byte, b"")]
    if value.type in _ANON_DEFAULT:
        # the name goes where the parameters or the class heritage/body start
        cut = next(
            (c for c in value.children if c.type in ("formal_parameters", "class_heritage", "class_body")), None
        )
        head = data[start : cut.start_byte] if cut is not None else b""
        words = [c for c in value.children if cut is not None and c.end_byte <= cut.start_byte]
        if cut is not None and head.isascii() and b"\n" not in data[value.start_byte : cut.start_byte]:
            text = b" ".join(_text(w, data) for w in words) + b" $ "
            return [(start, cut.start_byte, text.rjust(cut.start_byte - start))]
    return [(start, kw.start_byte, b""), (kw.start_byte, kw.end_byte, b"$=".ljust(kw.end_byte - kw.start_byte))]


def _exported(stmt: Any, data: bytes) -> tuple[list[tuple[str, int]], list[tuple[Any, int]], str | None, int]:
    """``(exported names with their byte, local names of export {…} without from, error, byte)``."""
    names: list[tuple[str, int]] = []
    locals_: list[tuple[Any, int]] = []
    decl = stmt.child_by_field_name("declaration")
    source = stmt.child_by_field_name("source")
    is_default = any(c.type == "default" for c in stmt.children)
    if is_default:
        names.append(("default", stmt.start_byte))
    elif decl is not None:
        names.extend((_text(n, data).decode("utf-8", "replace"), n.start_byte) for n in _declared(decl))
    for part in stmt.named_children:
        if part.type == "namespace_export":
            name = next(iter(part.named_children), None)
            if name is not None:
                names.append((_name_of(name, data), name.start_byte))
        elif part.type == "export_clause":
            for spec in part.named_children:
                if spec.type != "export_specifier":
                    continue
                local = spec.child_by_field_name("name")
                alias = spec.child_by_field_name("alias")
                if local is None:
                    continue
                if source is None:
                    if local.type == "string":
                        return [], [], "SyntaxError: Unexpected string", local.start_byte
                    locals_.append((local, local.start_byte))
                has_as = any(c.type == "as" for c in spec.children)
                if alias is not None:
                    names.append((_name_of(alias, data), alias.start_byte))
                elif has_as:  # `x as default`: the alias is a keyword token, not a field
                    names.append((_text(spec.children[-1], data).decode("utf-8", "replace"), spec.children[-1].start_byte))
                else:
                    names.append((_name_of(local, data), local.start_byte))
    for name, at in names:
        if _lone_surrogate(name):
            return [], [], "SyntaxError: Invalid module export name: contains unpaired surrogate", at
    return names, locals_, None, 0


def module_declarations(root: Any, data: bytes) -> tuple[list[tuple[int, str]], list[tuple[int, int, bytes]]]:
    """``(errors as (byte, message), edits)`` for the cell's own ``import``/``export`` statements."""
    errors: list[tuple[int, str]] = []
    edits: list[tuple[int, int, bytes]] = []
    exported: dict[str, int] = {}
    locals_: list[tuple[Any, int]] = []
    for stmt in root.named_children:
        if stmt.type == "import_statement":
            more, error, at = _import_edits(stmt, data)
            if error is not None:
                errors.append((at, error))
            edits.extend(more)
        elif stmt.type == "export_statement":
            names, locs, error, at = _exported(stmt, data)
            if error is not None:
                errors.append((at, error))
                continue
            for name, at in names:
                if name in exported:
                    errors.append((at, f"SyntaxError: Duplicate export of '{name}'"))
                exported.setdefault(name, at)
            locals_.extend(locs)
            decl = stmt.child_by_field_name("declaration")
            value = stmt.child_by_field_name("value")
            if decl is not None:
                edits.append((stmt.start_byte, decl.start_byte, b""))
            elif value is not None:
                edits.extend(_default_edits(stmt, value, data))
            else:
                edits.append((stmt.start_byte, stmt.end_byte, b""))
    if locals_:
        declared = _top_level_names(root, data)
        for local, at in locals_:
            name = _text(local, data).decode("utf-8", "replace")
            if name not in declared:
                errors.append((at, f"SyntaxError: Export '{name}' is not defined in module"))
    return errors, edits
