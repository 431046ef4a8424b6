"""``export --redact``: a seeded session holding a secret of each kind, in every place a secret reaches
a transcript (a prompt, a command and its output, a patch, a tool call's arguments and result, an
answer), exported in every format. None survives; nothing else is removed (the redacted export is the
plain export with each secret replaced by its placeholder and the home directory by ``~``); the header
counts what was redacted, by kind, and never shows it."""

from __future__ import annotations

import html
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from transcript_reader.export.redact import Redactor

HOME = "/home/alice"

#: (kind the header names, secret value): every value is in the seeded session below.
SECRETS = [
    ("AWS Access Key", "AKIAZ4T7EXAMPLEQ7X2B"),
    ("AWS Access Key", "9xQw8Lr4Tz1Vb6Nm3Kp0Yh5Gf2Dd7Ss1Aa8Cc4Ek"),
    ("GitHub Token", "ghp_R8c2Lq0Zx4Vn6Bm1Kd9Fw3Hs7Jt5Py2Ua0Ge"),
    ("GitLab Token", "glpat-Xq7Lz2Wv9Nc4Rb8Tm1Ks"),
    ("Slack Token", "xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx"),
    ("Stripe Access Key", "sk_live_4eC39HqLyjWDarjtT1zdp7dc"),
    ("API Key", "sk-proj-Q3v8Xn2Lp7Rz4Tw9Kc1Bm6Hd0Fs5Jy8Ua3Ge7Vq2"),
    ("API Key", "sk-ant-api03-Lw4Pz8Xq2Nv6Rc1Tb9Km3Hs7Fd5Jy0Ua2Ge4Vq8Zx"),
    ("API Key", "AIzaSyD4x9Q2w8LrT1zVb6Nm3Kp0Yh5Gf2Dd7Ss"),
    ("JSON Web Token", "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4ifQ."
                       "SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"),
    ("Basic Auth Credentials", "Vt9qLm2xRw"),
    ("Secret Keyword", "Qz8fw3LpVa71"),
    ("Secret Assignment", "Hn4Pq8Zt2Wy6"),
    ("Base64 High Entropy String", "Zm9vYmFyYmF6cXV4MTIzNDU2Nzg5MGFiY2RlZmdoaWprbG1ub3A="),
]
RSA_KEY = ("-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gun\n"
           "VTLw7onLRnrq0/IzW7yWR7QkrmBL7jTKEn5u+qKhbwKfBstIs+bMY2Zkp18gnTxK\n-----END RSA PRIVATE KEY-----")
SSH_KEY = ("-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW\n"
           "QyNTUxOQAAACBq4Y3ZcXv7Q0bqLd5d3Qz8xMhS1w0QkRPsJ0Yl2n7m1wAAAJgHq2Ln\n-----END OPENSSH PRIVATE KEY-----")
KEY_BODIES = ["MIIEpAIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gun",
              "QyNTUxOQAAACBq4Y3ZcXv7Q0bqLd5d3Qz8xMhS1w0QkRPsJ0Yl2n7m1wAAAJgHq2Ln"]

#: Ordinary text next to the secrets: all of it must survive.
ORDINARY = [
    "commit 3f786850e387550fdab836ed7e6dc881de23001b",
    "sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
    "123e4567-e89b-12d3-a456-426614174000",
    "https://example.com/docs/install?lang=en#top",
    "def password_reset(user):",
    "the token budget is 4000 and the key point is speed",
    'api_key = os.environ["OPENAI_API_KEY"]',
    "src/transcript_reader/export/redact.py",
    "npm install left-pad@1.3.0",
    "/home/alicette/elsewhere",
]


def _s(kind: str) -> str:
    return next(v for k, v in SECRETS if k == kind)


def seeded_session(path: Path) -> None:
    """A rollout with every secret above in a prompt, a command, an output, a patch, tool calls, an answer."""
    aws_id, aws_secret = (v for k, v in SECRETS if k == "AWS Access Key")
    openai, anthropic, google = (v for k, v in SECRETS if k == "API Key")
    prompt = (f"deploy with {aws_id} and my key {openai}; also {google}\n{RSA_KEY}\n"
              + "\n".join(ORDINARY[:4]))
    command = (f"export GITHUB_TOKEN={_s('GitHub Token')} && DATABASE_PASSWORD={_s('Secret Assignment')} "
               f"psql postgres://app:{_s('Basic Auth Credentials')}@db.example.internal:5432/main -c 'select 1'")
    output = (f"aws_secret_access_key = \"{aws_secret}\"\nSLACK={_s('Slack Token')}\n"
              f"Authorization: Bearer {_s('JSON Web Token')}\n{ORDINARY[4]}\n{ORDINARY[5]}\n")
    patch = ("*** Begin Patch\n*** Add File: config/settings.py\n"
             f"+STRIPE = \"{_s('Stripe Access Key')}\"\n+password = \"{_s('Secret Keyword')}\"\n"
             f"+{ORDINARY[6]}\n*** End Patch\n")
    tool_args = json.dumps({"token": _s("GitLab Token"), "blob": _s("Base64 High Entropy String"),
                            "path": f"{HOME}/project/{ORDINARY[7]}"})
    answer = f"Done. I used {anthropic} as asked.\n{SSH_KEY}\n{ORDINARY[8]} and {ORDINARY[9]}"

    def line(ts: int, type_: str, payload: dict[str, object]) -> str:
        return json.dumps({"timestamp": f"2026-01-01T00:00:{ts:02d}.000Z", "type": type_, "payload": payload})

    rows = [
        line(0, "session_meta", {"id": "00000000-0000-7000-8000-00000000c0de", "timestamp": "2026-01-01T00:00:00.000Z",
                                 "cwd": f"{HOME}/project", "originator": "codex_cli_rs", "cli_version": "0.171.0",
                                 "source": "cli"}),
        line(1, "event_msg", {"type": "task_started", "turn_id": "t1"}),
        line(2, "response_item", {"type": "message", "role": "user", "content": [{"type": "input_text", "text": prompt}]}),
        line(3, "response_item", {"type": "function_call", "name": "exec_command",
                                  "arguments": json.dumps({"cmd": command, "workdir": f"{HOME}/project"}),
                                  "call_id": "c1"}),
        line(4, "response_item", {"type": "function_call_output", "call_id": "c1",
                                  "output": "Chunk ID: 1\nWall time: 0.5 seconds\nProcess exited with code 0\n"
                                            "Original token count: 9\nOutput:\n" + output}),
        line(5, "response_item", {"type": "custom_tool_call", "call_id": "c2", "name": "apply_patch", "input": patch,
                                  "status": "completed"}),
        line(6, "response_item", {"type": "custom_tool_call_output", "call_id": "c2",
                                  "output": "Success. Updated the following files:\nA config/settings.py\n"}),
        line(7, "response_item", {"type": "function_call", "name": "mcp__vault__put", "arguments": tool_args,
                                  "call_id": "c3"}),
        line(8, "response_item", {"type": "function_call_output", "call_id": "c3",
                                  "output": f"stored {_s('GitLab Token')} under {HOME}/.vault"}),
        line(9, "response_item", {"type": "message", "role": "assistant",
                                  "content": [{"type": "output_text", "text": answer}]}),
        line(10, "event_msg", {"type": "task_complete", "turn_id": "t1", "last_agent_message": answer}),
    ]
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")


def _export(session: Path, fmt: str, tmp: Path, *extra: str) -> str:
    out = tmp / f"out-{fmt}{'-'.join(extra)}.txt"
    env = {**os.environ, "HOME": HOME, "CODEX_HOME": str(tmp / "codex-home")}
    diff = ["--diff"] if fmt == "md" else []  # the patch's text too (HTML shows it always)
    r = subprocess.run([sys.executable, "-m", "transcript_reader", "export", str(session), "--format", fmt,
                        "-o", str(out), *diff, *extra], capture_output=True, text=True, timeout=120, env=env)
    assert r.returncode == 0, r.stderr
    return out.read_text(encoding="utf-8")


FORMATS = ["md", "html", "json", "otlp"]


@pytest.fixture(scope="module")
def seeded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("seeded") / "rollout-2026-01-01T00-00-00-00000000-0000-7000-8000-00000000c0de.jsonl"
    seeded_session(path)
    return path


def _pieces(fmt: str) -> list[str]:
    """How each secret can appear in ``fmt`` (escaped as the format escapes text)."""
    raw = [v for _, v in SECRETS] + KEY_BODIES
    if fmt == "html":
        return [html.escape(v) for v in raw]
    if fmt in ("json", "otlp"):
        return [json.dumps(v)[1:-1] for v in raw]
    return raw


@pytest.mark.parametrize("fmt", FORMATS)
def test_the_seeded_secrets_are_there_without_redact(seeded: Path, tmp_path: Path, fmt: str) -> None:
    """The witness that the test means something: every secret reaches every plain export."""
    plain = _export(seeded, fmt, tmp_path)
    missing = {p for p in _pieces(fmt) if p not in plain}
    # a trace keeps no patch text (its span names the files and counts the lines)
    patch_only = {_s("Stripe Access Key"), _s("Secret Keyword")} if fmt == "otlp" else set()
    assert missing == patch_only
    assert HOME in plain


@pytest.mark.parametrize("fmt", FORMATS)
def test_no_secret_survives_redact_and_the_header_counts_them(seeded: Path, tmp_path: Path, fmt: str) -> None:
    red = _export(seeded, fmt, tmp_path, "--redact")
    for piece in _pieces(fmt):
        assert piece not in red, f"{piece[:16]}… survived --redact in {fmt}"
        assert piece[4:20] not in red  # nor any long part of it
    assert "/home/alice/" not in red and "/home/alice\"" not in red
    for ordinary in ORDINARY:
        want = {"html": html.escape(ordinary), "json": json.dumps(ordinary)[1:-1],
                "otlp": json.dumps(ordinary)[1:-1]}.get(fmt, ordinary)
        if fmt == "otlp" and ordinary in (ORDINARY[6],):
            continue  # a patch's text is not put on its span
        assert want in red, f"{ordinary!r} was removed in {fmt}"
    if fmt in ("md", "html"):
        assert "secrets redacted (" in red and "home directory shown as ~" in red
        assert "Private Key 2" in red
    if fmt == "json":
        doc = json.loads(red)
        assert doc["redaction"]["by_kind"]["Private Key"] == 2
        assert doc["redaction"]["secrets"] >= len(SECRETS)
        assert doc["redaction"]["home_directory"] >= 1


@pytest.mark.parametrize("fmt", ["md", "html", "json"])
def test_nothing_else_is_removed(seeded: Path, tmp_path: Path, fmt: str) -> None:
    """The redacted export is the plain one with each secret replaced by its placeholder and the home
    by ``~``: only the header's line about the redaction differs."""
    plain = _export(seeded, fmt, tmp_path)
    red = _export(seeded, fmt, tmp_path, "--redact")
    expected = plain
    enc = {"html": html.escape, "json": lambda v: json.dumps(v)[1:-1]}.get(fmt, lambda v: v)
    for key in (RSA_KEY, SSH_KEY):
        expected = expected.replace(enc(key), "[REDACTED:Private Key]")
        # the title is the first prompt with its whitespace collapsed
        expected = expected.replace(enc(" ".join(key.split())), "[REDACTED:Private Key]")
        expected = expected.replace("\n> ".join(key.split("\n")), "[REDACTED:Private Key]")  # a quoted prompt
    for kind, value in sorted(SECRETS, key=lambda kv: -len(kv[1])):
        expected = expected.replace(enc(value), f"[REDACTED:{kind}]")
    expected = expected.replace(HOME + "/", "~/").replace(HOME + "\"", "~\"").replace(HOME + "<", "~<")
    if fmt == "json":
        doc, want = json.loads(red), json.loads(expected)
        doc.pop("redaction")
        for item in doc["items"] + want["items"]:
            item.pop("output_chars", None)  # the full length follows the text it measures
        assert doc == want
        return
    drop = [ln for ln in red.splitlines() if "secrets redacted" in ln]
    assert len(drop) == 1
    assert [ln for ln in red.splitlines() if ln not in drop] == expected.splitlines()


def test_the_prefilter_changes_no_result() -> None:
    """The RE2 pass that picks the lines worth scanning finds every line the patterns would: with it
    and without it (every line scanned by every pattern) the text is the same."""
    lines = [f"{k}: {v}" for k, v in SECRETS] + ORDINARY + [RSA_KEY, SSH_KEY, f"cd {HOME}/project"]
    fast, slow = Redactor([HOME]), Redactor([HOME])
    slow._trigger = None
    assert fast._trigger is not None
    for text in lines + ["\n".join(lines)]:
        assert fast.text(text) == slow.text(text)
    assert fast.counts == slow.counts
