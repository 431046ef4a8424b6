"""Nothing from a transcript acts on the terminal: a session whose metadata (cwd, Codex version, model,
originator, thread name) holds escape sequences and bidi controls is shown by every command, in a real
pseudo-terminal (``tests/ptyterm.py``), with those characters made visible, never obeyed; JSON keeps
the exact values (escaped, parsed back to the same strings)."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest

from tests import ptyterm
from tests import sessions_home as H
from transcript_reader.present.text import clean, clean_json, clean_rendered

#: OSC 0 (sets the window title, the tmux pane title), a BEL, ESC[2J (clears the screen), RLO and LRI.
HOSTILE = "\x1b]0;PWNED\x07\x1b[2J\u202e\u2066"
SHOWN = "\\x1b]0;PWNED\\x07\\x1b[2J\\u202e\\u2066"
#: What must never arrive raw: an OSC, a BEL, the clear, any bidi control, a lone surrogate.
RAW = re.compile("\x1b\\]|\x07|\x1b\\[2J|[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")


def hostile_home(tmp_path: Path) -> tuple[H.FakeHome, Path]:
    """The fixtures home, with the code-mode session's metadata and thread name made hostile."""
    h = H.build_home(tmp_path)
    f = h.file_of(H.CODE_MODE)
    lines = []
    for line in f.read_text(encoding="utf-8").splitlines():
        d = json.loads(line)
        p = d.get("payload")
        if d.get("type") == "session_meta":
            p["cwd"] += HOSTILE
            p["cli_version"] += HOSTILE
            p["originator"] += HOSTILE
        elif d.get("type") == "turn_context":
            p["model"] += HOSTILE
            p["cwd"] += HOSTILE
        lines.append(json.dumps(d))
    f.write_text("\n".join(lines) + "\n", encoding="utf-8")
    index = h.home / "session_index.jsonl"
    index.write_text(index.read_text(encoding="utf-8") + json.dumps(
        {"id": H.CODE_MODE, "thread_name": "Cells" + HOSTILE, "updated_at": "2026-11-30T18:10:00Z"}) + "\n",
        encoding="utf-8")
    return h, f


def _env(h: H.FakeHome, **extra: str) -> dict[str, str]:
    return {"HOME": str(h.home.parent / "userhome"), "CODEX_HOME": str(h.home), "TZ": "UTC",
            "XDG_CACHE_HOME": str(h.home.parent / "cache"), "PAGER": "cat", **extra}


# ---- the one function ---------------------------------------------------------------------------------


def test_clean_shows_controls_bidi_and_lone_surrogates_and_is_idempotent() -> None:
    assert clean("a" + HOSTILE + "b") == "a" + SHOWN + "b"
    for ch in "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069":
        assert clean(ch) == f"\\u{ord(ch):04x}"
    assert clean("x\udc80y") == "x\\udc80y" and clean("\x9b31m") == "\\x9b31m"
    assert clean("tab\there\r\nnext") == "tab     here\nnext"
    for text in ("a" + HOSTILE, "plain", "x\udc80", "\x9b\x7f"):
        assert clean(clean(text)) == clean(text)
    assert clean("naïve — 日本語 ✓") == "naïve — 日本語 ✓"  # printable text is untouched


def test_rendered_text_keeps_richs_styles_and_nothing_else() -> None:
    styled = "\x1b[1mbold\x1b[0m " + HOSTILE + " \x1b]8;id=1;https://x.test\x1b\\link\x1b]8;;\x1b\\"
    out = clean_rendered(styled)
    assert out.startswith("\x1b[1mbold\x1b[0m " + SHOWN)
    assert "\x1b]8;id=1;https://x.test\x1b\\link" in out  # rich's own hyperlink
    assert not RAW.search(out.replace("\x1b]8;", ""))


def test_clean_json_is_the_same_value_and_safe() -> None:
    value = {"cwd": "/p" + HOSTILE + "\x85\u2028", "lone": "\udc80"}
    text = clean_json(json.dumps(value, ensure_ascii=False))
    assert json.loads(text) == value
    assert not RAW.search(text) and "\x85" not in text and "\u2028" not in text
    text.encode("utf-8")  # always encodable


# ---- every command, in a real terminal ---------------------------------------------------------------------


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> tuple[H.FakeHome, Path]:
    return hostile_home(tmp_path_factory.mktemp("hostile"))


COMMANDS = {
    "show": ["show", "{f}", "--no-pager"],
    "show-final": ["show", "{f}", "--no-pager", "--final"],
    "show-by-id": ["show", H.CODE_MODE[:12], "--no-pager", "--diff", "--scripts"],
    "ls": ["ls", "--all-projects", "--no-pager"],
    "ls-stats": ["ls", "--all-projects", "--stats", "--no-pager"],
    "inspect": ["inspect", "{f}"],
    "read": ["read", "{f}"],
    "export-md": ["export", "{f}", "--format", "md"],
    "export-html": ["export", "{f}", "--format", "html"],
    "search": ["search", "calc", "--all-projects"],
    "error": ["read", "{f}/" + HOSTILE],
    "census": ["census", "{f}"],
}


@pytest.mark.parametrize("name", list(COMMANDS))
def test_hostile_metadata_never_reaches_the_terminal_raw(home: tuple[H.FakeHome, Path], name: str) -> None:
    h, f = home
    args = [a.replace("{f}", str(f)) for a in COMMANDS[name]]
    s = ptyterm.run(args, env=_env(h), cwd=h.project, cols=160)
    assert "internal error" not in s.text and "transcript_reader/" not in s.text, s.text[-2000:]  # no traceback
    assert not RAW.findall(s.raw), (name, RAW.findall(s.raw)[:5], s.raw[-1500:])
    if name == "error":
        assert s.returncode == 1 and "\\x1b]0;PWNED" in s.text
        return
    assert s.returncode == 0, s.text[-2000:]
    if name not in ("read", "search", "census"):  # these show no metadata
        assert "PWNED" in s.text  # the field was shown, made visible, not dropped


def test_json_keeps_the_exact_values(home: tuple[H.FakeHome, Path]) -> None:
    h, f = home
    for args in (["inspect", str(f), "--json"], ["ls", "--all-projects", "--json"]):
        s = ptyterm.run(args, env=_env(h), cwd=h.project)
        assert s.returncode == 0 and not RAW.findall(s.raw), s.raw[-800:]
        values = set(_strings(json.loads(s.raw.replace("\r\n", "\n"))))
        assert str(h.project) + HOSTILE in values and "0.171.0" + HOSTILE in values, values


def _strings(value: object) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return []


def test_script_shows_escapes_a_string_literal_decodes_to(tmp_path: Path) -> None:
    js = tmp_path / "cell.js"
    js.write_text('await tools.exec_command({cmd: "echo \\u001b]0;PWNED\\u0007 \\u202e done"})\n')
    s = ptyterm.run(["script", str(js)], env={"HOME": str(tmp_path)}, cwd=tmp_path, cols=120)
    assert s.returncode == 0 and not RAW.findall(s.raw), s.raw[-1500:]
    assert "echo \\x1b]0;PWNED\\x07 \\u202e done" in s.text


def test_script_with_no_file_on_a_terminal_prints_usage(tmp_path: Path) -> None:
    s = ptyterm.run(["script"], env={"HOME": str(tmp_path)}, cwd=tmp_path, timeout=30)
    assert s.returncode == 2 and "Usage: transcript-reader script" in s.text, s.text


def test_browse_shows_the_hostile_session_without_obeying_it(home: tuple[H.FakeHome, Path], tmp_path: Path) -> None:
    pytest.importorskip("textual")
    from tests.test_browse_pty import Term

    h, _ = home
    env = {"PATH": "/usr/bin:/bin", "TERM": "xterm-256color", **_env(h, XDG_CACHE_HOME=str(tmp_path / "xdg"))}
    t = Term([sys.executable, "-m", "transcript_reader", "browse", "--all-projects"], env, h.project, (160, 34))
    try:
        t.wait_for(rb"PWNED")  # the list row: thread name, cwd, model, version
        t.send(b"\r")  # open the newest, the hostile one
        t.wait_for(rb"Turn 1")
        t.send(b"q")
        t.wait_for(rb"sessions")
        t.send(b"\x11")
    finally:
        code = t.close()
    # Textual's own sequences (the pointer shape, OSC 22; the screen clears) are not content
    raw = re.sub("\x1b\\]22;[a-z]*\x07|\x1b\\[2J", "", t.raw.decode("utf-8", "replace"))
    assert code == 0, raw[-2000:]
    assert "PWNED" in raw and not RAW.findall(raw), [raw[m.start() - 60:m.end() + 20] for m in RAW.finditer(raw)][:3]
