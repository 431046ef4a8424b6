"""The analyzer's shortcuts give what the longer road gives: escaped names found from each ``\\u``
(not by matching every word), double-quoted string bodies handed to JSON as they stand, a const-bound
JSON string read by orjson, a whole template's text read without lexing it, and a shell call's
readability decided without building its entry."""

from __future__ import annotations

from typing import Any

from hypothesis import example, given, settings
from hypothesis import strategies as st

from exec_grammar import analyze
from exec_grammar.backends.ts_routes import _ESCAPED_NAME_RE, _escaped_names, decode_identifier
from exec_grammar.entries import SHELL_TOOLS, _readable, _resolve_template, _shell_command
from exec_grammar.js_text import _decode_escapes, _NotLiteral
from exec_grammar.literals import _Reader, _string_body, decode_string_literal
from exec_grammar.model import Position, ToolCall

_PIECES = [b"\\u", b"\\", b"u", b"0074", b"{74}", b"{", b"}", b"ools", b" ", b"$", b"Z", b"\\u006f", b"\\u{6f}", b"a",
           b"(", "é".encode(), b"\\u0065val", b"tools"]


def _finditer_names(data: bytes) -> list[tuple[int, int, bytes]]:
    """The escaped names as a scan of every word of the text gives them."""
    out = []
    for m in _ESCAPED_NAME_RE.finditer(data):
        if b"\\" in m.group():
            name = decode_identifier(m.group().decode("ascii", "replace")).encode("utf-8", "replace")
            out.append((m.start(), m.end(), name))
    return out


@given(st.lists(st.sampled_from(_PIECES), max_size=14).map(b"".join))
@settings(deadline=None, max_examples=500)
@example(b"\\u\\u0074ools")  # a bad escape, then a name that starts at its `u`
@example(b"a\\u00zz\\u0074ools")
@example(b"x\\u{74}\\u006fols \\u0074ools")
def test_escaped_names_are_the_runs_a_whole_scan_finds(data: bytes) -> None:
    assert _escaped_names(data) == _finditer_names(data)


# A double-quoted string's body: any character but a bare quote, a backslash or a raw line break, or
# an escape (a backslash and anything but a line break).
_DQ_PIECE = st.one_of(
    st.characters(blacklist_characters='"\\\n\r'),
    st.characters(blacklist_characters="\n\r").map(lambda c: "\\" + c),
    st.sampled_from(['\\"', "\\n", "\\u0041", "\\ud800", "\\ud83d\\ude00", "\\x41", "\\u{1F600}", "\t", "\u2028", "\\'"]),
)
_DQ_BODY = st.lists(_DQ_PIECE, max_size=10).map("".join)


def _reader_string(text: str) -> Any:
    try:
        value, end = _Reader(text).string(0)
    except _NotLiteral:
        return None
    return value if end == len(text) else None


def _same(a: Any, b: Any) -> bool:
    return type(a) is type(b) and a == b


@given(_DQ_BODY)
@settings(deadline=None, max_examples=300)
@example('a\\"b\\\\')
@example("\\ud800\\udc00\\u2028")
def test_a_double_quoted_body_goes_to_json_as_it_stands(body: str) -> None:
    try:
        expected = _decode_escapes(body, template=False)
    except _NotLiteral:
        return
    assert _same(_string_body(body, False, True), expected), body


@given(_DQ_BODY)
@settings(deadline=None, max_examples=300)
@example("*** Begin Patch\\n*** Add File: a\\n+x\\n*** End Patch")
@example("\\ud800")
@example("\t")
def test_a_json_string_reads_as_the_reader_reads_it(body: str) -> None:
    text = '"' + body + '"'
    assert _same(decode_string_literal(text), _reader_string(text)), text


def _no_binding(name: str) -> None:
    return None


@given(
    st.lists(st.one_of(st.characters(blacklist_characters="`$"), st.sampled_from(["\\`", "\\n", "\\x4", "\\u{41}", "$", "\r\n", "\\$", "\\"])),
             max_size=10).map("".join),
    st.booleans(),
)
@settings(deadline=None, max_examples=300)
@example("a\\`b", False)
@example("\\x4", False)
@example("a\r\nb", True)
def test_a_whole_template_reads_as_its_lexed_token(body: str, raw: bool) -> None:
    """The text of a whole template (read from its body) is the lexer's reading of the same template:
    with a blank after it the shortcut does not apply, and the lexer's token decides."""
    source = "`" + body + "`"
    assert _resolve_template(source, _no_binding, raw) == _resolve_template(source + " ", _no_binding, raw)


_ARGUMENTS = st.one_of(
    st.none(),
    st.text(max_size=3),
    st.integers(),
    st.lists(st.one_of(st.text(max_size=2), st.integers()), max_size=3),
    st.dictionaries(
        st.sampled_from(["cmd", "command", "workdir", "x"]),
        st.one_of(st.text(max_size=2), st.integers(), st.none(), st.lists(st.text(max_size=2), max_size=2)),
        max_size=4,
    ),
)


@given(st.sampled_from(sorted(SHELL_TOOLS)), _ARGUMENTS, st.booleans())
@settings(deadline=None, max_examples=300)
def test_a_shell_call_is_readable_exactly_when_its_command_reads(name: str, argument: Any, computed: bool) -> None:
    at = Position(0, 1, 0)
    call = ToolCall(name, at, at, "", None if computed else argument, computed)
    assert _readable(call) == (_shell_command(call) is not None)


def test_options_keep_their_order_without_the_command_and_the_cwd() -> None:
    a = analyze('await tools.exec_command({z: 1, cmd: "ls", y: 2, workdir: "/w", x: 3});')
    (entry,) = a.entries
    assert list(entry.options.items()) == [("z", 1), ("y", 2), ("x", 3)]
    assert (entry.command, entry.cwd) == ("ls", "/w")


def test_one_unreadable_shell_call_reads_the_whole_script() -> None:
    script = 'await tools.exec_command({cmd: "ls", w: 1});\nawait tools.exec_command({cmd: c});'
    (entry,) = analyze(script).entries
    assert entry.whole_script and entry.command == script and entry.call_names == ("exec_command", "exec_command")


_TOP_SHAPES = [
    "await tools.exec_command({cmd: 'a'});",
    "await tools.exec_command({cmd: 'a'})",
    "await\ntools.exec_command({cmd: 'a'})\n;",
    "const r = await tools.exec_command({cmd: 'a'});",
    "let r=await tools.exec_command({cmd: 'a'})",
    "var r = await tools.exec_command({cmd: 'a'});",
    "const r = await tools.exec_command({cmd: 'a'}), s = 1;",
    "const r = await tools.exec_command({cmd: 'a'}).then(f);",
    "const {r} = await tools.exec_command({cmd: 'a'});",
    "r = await tools.exec_command({cmd: 'a'});",
    "await (tools.exec_command({cmd: 'a'}));",
    "await tools.exec_command({cmd: 'a'}) /* c */;",
    "await tools.exec_command({cmd: 'a'})\n(f)",
    "await tools.exec_command({cmd: tools.web__run({q: 1})});",
    "const r = await tools.exec_command({cmd: 'a'}) + 1;",
    "if (x) await tools.exec_command({cmd: 'a'});",
    "await tools.exec_command({cmd: 'a'}) ? 1 : 2;",
    "const r = await tools.exec_command({cmd: 'a'}); await tools.exec_command({cmd: 'b'})",
]


def test_a_top_level_awaited_call_read_from_the_text_is_the_one_the_tree_reads(monkeypatch: Any) -> None:
    """The text test of ``TopPaths.of`` (``await CALL;``, ``const r = await CALL;``) marks the calls the
    tree marks, in every shape around it: a prefix of statements, and the shapes it leaves to the tree."""
    from exec_grammar.backends import treesitter, ts_routes

    for shape in _TOP_SHAPES:
        for script in (shape, "text('x');\n" + shape, shape + "\nawait tools.exec_command({cmd: 'z'});"):
            by_text = treesitter.parse_calls(script).calls
            monkeypatch.setattr(ts_routes, "_TOP_HEAD_MAX", -1)
            by_tree = treesitter.parse_calls(script).calls
            monkeypatch.undo()
            assert by_text == by_tree, script
    assert analyze("const r = await tools.exec_command({cmd: 'a'});").proven == (0,)


_STARTS = ["{cmd, ", "{ cmd}", "{...base, ", "{m(", "{cmd: `ls ${d}", "{'a b': `x${", '{"k":`', "`a${b}", "`a\\${b}`",
           "{cmd: `ok`", "{get x() {", "patch", "true", "null", "undefined", "{\u00e9, ", "{a\u20ac, ", "{ /*c*/ cmd, "]


@given(st.sampled_from(_STARTS), st.lists(st.sampled_from(list("ab,:}{`$\"' \\\n1") + ["${"]), max_size=12).map("".join))
@settings(deadline=None, max_examples=400)
@example("{cmd, ", 'workdir: "/w"}')
@example("`a${b}", "`")
def test_a_start_the_reader_refuses_is_computed_whatever_follows(start: str, rest: str) -> None:
    from exec_grammar.literals import _decode_general, decode_literal

    text = start + rest
    assert repr(decode_literal(text)) == repr(_decode_general(text)), text
