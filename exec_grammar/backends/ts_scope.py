"""The names an ES module declares in its own scope, read from the tree-sitter tree: what ``export {x}``
may name (``Export 'x' is not defined in module`` otherwise) and what ``export <declaration>`` exports."""

from __future__ import annotations

from typing import Any

from exec_grammar.lexer import identifier_name

__all__ = ["declaration_names", "module_statements", "pattern_names", "top_level_names"]

#: scopes a module-level ``var`` does not reach past
_SCOPES = frozenset(
    {"function_declaration", "function_expression", "function", "arrow_function", "method_definition",
     "generator_function", "generator_function_declaration", "class_declaration", "class", "class_body"}
)
_DECLS = frozenset({"function_declaration", "generator_function_declaration", "class_declaration"})


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
    if t in ("lexical_declaration", "variable_declaration", "using_declaration"):
        out: list[Any] = []
        for d in node.named_children:
            if d.type == "variable_declarator":
                name = d.child_by_field_name("name")
                # `using` binds plain names only: tree-sitter reads `using[a, b]` (an element of the
                # variable `using`) as a declaration of a pattern, which declares nothing
                if name is not None and (t != "using_declaration" or name.type == "identifier"):
                    out.extend(pattern_names(name))
        return out
    return []


def _text(node: Any, data: bytes) -> str:
    """A declared name, escapes read (``let \\u0062`` declares ``b``)."""
    return identifier_name(data[node.start_byte : node.end_byte].decode("utf-8", "replace"))


def declaration_names(root: Any, data: bytes, export_start: int, decl_start: int) -> list[tuple[str, int]]:
    """``(name, byte)`` of each name the ``export <declaration>`` at ``export_start`` binds, the
    declaration starting at ``decl_start`` (tree-sitter may read ``export`` then a line break as a name
    and the declaration as a statement of its own)."""
    node = root.descendant_for_byte_range(export_start, export_start + 6)
    stmt = node.parent if node is not None else None
    decl = None
    if stmt is not None and stmt.type == "export_statement" and stmt.start_byte == export_start:
        decl = stmt.child_by_field_name("declaration")
    else:
        node = root.descendant_for_byte_range(decl_start, decl_start + 1)
        bare = node.parent if node is not None and node.type == "identifier" else None
        if bare is not None and _bare(bare, b"let") and bare.start_byte == decl_start:
            # `export⏎let⏎out = 1`: tree-sitter split the declaration at both line breaks
            after = bare.next_named_sibling
            return [(_text(n, data), n.start_byte) for n in _let_split(after)] if after is not None else []
        for _ in range(3):  # the keyword, its declaration (and an async function's wrapper)
            if node is None or node.start_byte != decl_start:
                break
            if node.type in _DECLS or node.type in ("lexical_declaration", "variable_declaration"):
                decl = node
                break
            node = node.parent
    return [(_text(n, data), n.start_byte) for n in _declared(decl)] if decl is not None else []


def module_statements(root: Any) -> list[Any]:
    """The module's top-level statements as V8 reads them. tree-sitter ends a bare ``await`` at a line
    break (``await`` then ``class b {}`` on the next line: a statement naming ``await``, then a class
    declaration); in a module ``await`` is never a name, so V8 reads the next line as its operand, a class
    or function *expression* that declares nothing. Such a declaration is left out."""
    out: list[Any] = []
    operand = False
    for child in root.named_children:
        if operand and child.type in _DECLS:
            operand = False
            continue
        operand = _bare(child, b"await")
        out.append(child)
    return out


def _bare(node: Any, word: bytes) -> bool:
    """``node`` is a statement of the one word ``word``, ended by a line break (no ``;``)."""
    return (node.type == "expression_statement" and node.child_count == 1
            and node.named_children[0].type == "identifier" and node.named_children[0].text == word)


def _let_split(stmt: Any) -> list[Any]:
    """The names ``let`` binds when tree-sitter split ``let`` from its declarators at a line break
    (``let⏎out = f()``: a statement naming ``let``, then an assignment). V8 reads one declaration: in
    a module ``let`` is never a name."""
    expr = stmt.named_children[0] if stmt.type == "expression_statement" and stmt.named_child_count else None
    if expr is None:
        return []
    parts = expr.named_children if expr.type == "sequence_expression" else [expr]
    names: list[Any] = []
    for part in parts:
        target = part.child_by_field_name("left") if part.type == "assignment_expression" else part
        if target is not None:
            names.extend(pattern_names(target))
    return names


def top_level_names(root: Any, data: bytes) -> set[str]:
    """Every name the module declares in its own scope but its imports: top-level declarations, and
    ``var`` anywhere outside a function or class (one walk, not entering them)."""
    names: set[str] = set()
    statements = module_statements(root)
    for k, child in enumerate(statements):
        if k and _bare(statements[k - 1], b"let"):
            names.update(_text(n, data) for n in _let_split(child))
        node = child
        if node.type == "export_statement":
            node = node.child_by_field_name("declaration") or node
        names.update(_text(n, data) for n in _declared(node))
    stack = list(root.named_children)
    while stack:
        n = stack.pop()
        if n.type in _SCOPES:
            continue
        if n.type == "variable_declaration":
            names.update(_text(x, data) for x in _declared(n))
        elif n.type == "for_in_statement" and any(c.type == "var" for c in n.children):
            left = n.child_by_field_name("left")
            if left is not None:
                names.update(_text(x, data) for x in pattern_names(left))
        stack.extend(n.named_children)
    return names
