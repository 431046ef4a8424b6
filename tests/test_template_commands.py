"""A command given as a template literal with holes (``{cmd: `cat ${file}`}``) in a code-mode cell: the
command is shown as the template's text with each hole kept as written, not the whole cell; which
command it gave is known only from a record it fits (``executed`` yes), never from the proof or a
missing record (unknown). Fixture ``code_mode_template_command``: the real 0.171.0 ``code_mode_only``
recording whose cell reads ``calc.py`` through a hole (the record shows ``cat calc.py``), plus a
template command no record shows."""

from __future__ import annotations

from pathlib import Path

import pytest

from exec_grammar import analyze
from exec_grammar.literal_templates import Template, decode_with_templates
from exec_grammar.literals import COMPUTED, decode_literal
from exec_grammar.render import analysis_to_json
from transcript_reader import api
from transcript_reader.assembly.rules import fits_template
from transcript_reader.model import Executed, Notice, ShellCommand

FIXTURE = Path(__file__).resolve().parent.parent / "fixtures" / "transcripts" / "code_mode_template_command.jsonl"


@pytest.mark.parametrize(("source", "value"), [
    ("`echo ${name}`", Template(("echo ", ""), ("name",))),
    ('{cmd: `echo ${name}`, workdir: "/tmp"}', {"cmd": Template(("echo ", ""), ("name",)), "workdir": "/tmp"}),
    ("`ls ${ dir }/src && grep -n ${pat} ${dir}`", Template(("ls ", "/src && grep -n ", " ", ""), ("dir", "pat", "dir"))),
    # a hole holding a template and an object of its own: the lexer finds the brace that closes it
    ("`a ${ {x: `q${y}`}.x } b`", Template(("a ", " b"), ("{x: `q${y}`}.x",))),
    ("`tab\\t${x}`", Template(("tab\t", ""), ("x",))),  # the literal parts are cooked, as JavaScript reads them
    ("`plain`", "plain"),
    ('{cmd: "ls"}', {"cmd": "ls"}),
])
def test_a_template_with_holes_reads_as_its_parts_and_holes(source: str, value: object) -> None:
    assert decode_literal(source) is COMPUTED or "${" not in source
    assert decode_with_templates(source) == value


@pytest.mark.parametrize("source", ["{cmd: c}", "`x ${}`", "`open ${a", "`a` + b", "{cmd: `x ${a}`, ...rest}"])
def test_what_is_not_a_literal_nor_a_template_stays_computed(source: str) -> None:
    assert decode_with_templates(source) is COMPUTED


def test_template_text_keeps_each_hole_as_written() -> None:
    assert Template(("ls ", "/src && grep ", ""), ("dir", "pat")).text() == "ls ${dir}/src && grep ${pat}"


def test_a_script_with_a_template_command_lists_each_command_not_the_whole_cell() -> None:
    a = analyze('const n = x();\nawait tools.exec_command({cmd: `echo ${n}`, workdir: "/w"});\n'
                'await tools.exec_command({cmd: "git status"});\n')
    shells = [(e.command, e.cwd, e.whole_script, e.holes) for e in a.entries]
    assert shells == [("echo ${n}", "/w", False, ("n",)), ("git status", None, False, ())]
    entry = analysis_to_json(a)["entries"][0]
    assert (entry["parts"], entry["holes"]) == (["echo ", ""], ["n"])


def test_a_hole_outside_the_command_still_reads_the_whole_cell() -> None:
    # the cwd is a hole too: more than the command is unknown, so the cell is read whole, as before
    a = analyze("await tools.exec_command({cmd: `ls ${d}`, workdir: `${root}/x`});\n")
    assert [e.whole_script for e in a.entries] == [True]


@pytest.mark.parametrize(("parts", "command", "fits"), [
    (("cat ", ""), "cat calc.py", True),
    (("ls ", "/src && grep -n ", " ", "/x.py"), "ls a/src && grep -n foo a/x.py", True),
    (("ls ", "/src"), "cat /src", False),
    (("a", "a"), "a", False),  # the two literal parts cannot share a character
    (("a", "a"), "aa", True),
])
def test_which_commands_a_template_may_give(parts: tuple[str, ...], command: str, fits: bool) -> None:
    assert fits_template(parts, command) is fits


def test_the_reader_shows_the_template_and_settles_it_by_a_record_it_fits() -> None:
    items = list(api.Transcript(FIXTURE).items())
    cmds = {i.command: i for i in items if isinstance(i, ShellCommand)}
    # the record of `cat calc.py` fits the template `cat ${file}`: it ran, and the record says what it was
    assert list(cmds) == ["ls -la", "cat calc.py", "wc -l ${file} ${before.exit_code}"]
    cat = cmds["cat calc.py"]
    assert (cat.executed, cat.exit_code, cat.argv, cat.whole_script) == (
        Executed.YES, 0, ("/bin/bash", "-lc", "cat calc.py"), False)
    wc = cmds["wc -l ${file} ${before.exit_code}"]
    # no record fits: the cell completed and the session writes records, yet which command the
    # template gave, and whether it ran, cannot be known (never "no", never a contradiction)
    assert (wc.executed, wc.exit_code) == (Executed.UNKNOWN, None)
    assert not any(isinstance(i, Notice) and i.category == "contradiction" for i in items)
