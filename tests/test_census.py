"""The census, pinned against counts made independently (by the generator's manifest and by reading the
raw JSON lines here, not through the library), through its real command line, and on hostile files.

Dask and Ctrl-C have their own modules (test_census_dask.py, test_census_interrupt.py).
"""

from __future__ import annotations

import csv
import json
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from corpus_tools.gen_corpus import generate, write_hostile
from transcript_reader.census.figures import SAMPLES, Figures, Histogram, Sample
from transcript_reader.census.file import CensusOptions, census_file
from transcript_reader.census.pool import run_local
from transcript_reader.census.walk import iter_transcripts, plan_batches

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    out = tmp_path_factory.mktemp("census-corpus")
    manifest = generate(out, rollouts=14, seed=5, cells=8)
    return out / "sessions", manifest


def _raw_lines(root: Path) -> list[tuple[Path, int, dict[str, Any]]]:
    """The independent witness: every JSON line of the generated rollouts, read with json here."""
    out = []
    for path in sorted(root.rglob("*.jsonl")):
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            out.append((path, n, json.loads(line)))
    return out


def _census(paths: list[Path], workers: int = 1, **kw: Any) -> Figures:
    return run_local(plan_batches(iter_transcripts(paths), max_files=4), workers=workers, options=CensusOptions(**kw))


def test_figures_match_independent_counts(corpus: tuple[Path, dict[str, Any]]) -> None:
    root, manifest = corpus
    raw = _raw_lines(root)
    cells = [(p, n, o["payload"]["input"]) for p, n, o in raw
             if o["type"] == "response_item" and o["payload"].get("type") == "custom_tool_call"
             and o["payload"].get("name") == "exec"]
    last_total: dict[Path, int] = {}
    for p, _n, o in raw:
        if o["type"] == "event_msg" and o["payload"].get("type") == "token_count":
            last_total[p] = o["payload"]["info"]["total_token_usage"]["total_tokens"]
    json_args = sum(len(re.findall(r'tools\["exec_command"\]\(\{"cmd"', s)) for _p, _n, s in cells)

    f = _census([root]).counts()
    assert f["files"] == f["transcripts"] == manifest["rollouts"] == f["sessions"]
    assert f["files_by_version"] == {"rollout 0.171.0": manifest["rollouts"]}
    assert f["errors"] == {}
    assert f["lines"]["lines"] == manifest["lines"] == len(raw)
    assert f["lines"].get("unreadable", 0) == 0 and f["unknown_types"] == {}
    assert f["turns"] == manifest["turns"]
    assert f["exec_cells"] == f["scripts"] == manifest["exec_cells"] == len(cells)
    assert f["direct_calls_by_tool"]["exec"] == len(cells)
    assert f["direct_calls_by_tool"].get("exec_command", 0) == manifest["top_level_exec_command"]
    assert f["top_level_apply_patch"] == manifest["top_level_apply_patch"]
    assert f["exec_command_args"]["all"] == manifest["exec_command_calls"]
    assert f["exec_command_args"]["not_json"] == manifest["exec_command_calls"] - json_args
    assert f["tokens"]["total"] == sum(last_total.values())
    assert f["token_sources"] == {"sum of per-call token_count usage": manifest["rollouts"]}
    # every rejected script is one the generator corrupted on purpose, and each sample names its cell
    corrupted = {(str(p), n) for p, n, s in cells if " @@@ (" in s}
    assert f["primary_rejected"]["count"] <= manifest["corrupted"]
    assert all(tuple(ref.rsplit(":", 1)) in {(p, str(n)) for p, n in corrupted} for ref in f["primary_rejected"]["sample"])
    assert sum(f["script_parsers"].values()) == len(cells)
    assert f["script_parsers"].get("lexer", 0) == f["primary_rejected"]["count"]
    assert f["esprima_parsed"] + f["esprima_rejected"] == len(cells)
    assert sum(f["executed"].values()) == sum(f["script_entries"].values())
    assert f["crashes"]["count"] == 0, f["crashes"]


def test_census_of_one_file_adds_up(corpus: tuple[Path, dict[str, Any]]) -> None:
    root, _ = corpus
    files = sorted(root.rglob("*.jsonl"))
    total = Figures()
    for p in files:
        total.merge(census_file(str(p))[0])
    assert total.counts() == _census([root]).counts()


def test_two_workers_give_the_same_figures(corpus: tuple[Path, dict[str, Any]]) -> None:
    root, _ = corpus
    assert _census([root], workers=2).counts() == _census([root], workers=1).counts()


def test_merge_is_order_independent() -> None:
    a, b = Sample(), Sample()
    for i in range(15):
        (a if i % 2 else b).add(f"f{i:02d}", i)
    ab, ba = Sample(), Sample()
    ab.merge(a), ab.merge(b), ba.merge(b), ba.merge(a)
    assert ab == ba and ab.count == 15 and len(ab.refs) == 10 and ab.refs[0] == ("f00", 0)
    h1, h2 = Histogram(), Histogram()
    for i, us in enumerate([5.0, 80.0, 120.0, 3000.0]):
        (h1 if i % 2 else h2).add(us, ("x", i))
    h1.merge(h2)
    assert h1.count == 4 and h1.worst_us == 3000.0 and h1.worst_ref == ("x", 3)
    assert 80.0 <= h1.quantile(0.5) <= 80.0 * 1.02 and h1.quantile(0.99) == 3000.0


def _run_cli(*args: str, timeout: int = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "transcript_reader", "census", *args], capture_output=True,
                          text=True, timeout=timeout, cwd=ROOT)


def test_cli_json_and_rows(corpus: tuple[Path, dict[str, Any]], tmp_path: Path) -> None:
    root, manifest = corpus
    rows_csv = tmp_path / "scripts.csv"
    proc = _run_cli(str(root), "--json", "--workers", "2", "--rows", str(rows_csv), "--no-progress")
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert out["ok"] is True and out["interrupted"] is False
    assert out["figures"]["scripts"] == manifest["exec_cells"] == out["rows"]["count"]
    with rows_csv.open() as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == manifest["exec_cells"]
    assert set(rows[0]) == {"file", "line", "call_id", "codex_version", "bytes", "parser", "calls", "tools",
                            "computed", "entries", "executed_yes", "executed_no", "executed_unknown", "parse_us"}
    assert Counter(r["parser"] for r in rows) == Counter(out["figures"]["script_parsers"])
    assert sum(int(r["calls"]) for r in rows) == sum(out["figures"]["script_calls_by_tool"].values())
    assert {r["codex_version"] for r in rows} == {"0.171.0"}
    executed = Counter()
    for r in rows:
        for k in ("yes", "no", "unknown"):
            executed[k] += int(r[f"executed_{k}"])
    assert {k: v for k, v in executed.items() if v} == out["figures"]["executed"]


def test_rows_parquet(corpus: tuple[Path, dict[str, Any]], tmp_path: Path) -> None:
    pq = pytest.importorskip("pyarrow.parquet")
    root, manifest = corpus
    target = tmp_path / "scripts.parquet"
    proc = _run_cli(str(root), "--json", "--workers", "1", "--rows", str(target), "--no-progress", "--no-cross-check")
    assert proc.returncode == 0, proc.stderr
    table = pq.read_table(target)
    assert table.num_rows == manifest["exec_cells"]
    assert str(table.schema.field("parse_us").type) == "double"
    assert json.loads(proc.stdout)["figures"]["esprima_parsed"] == 0  # cross-checks skipped


def test_cli_human_report_and_errors(corpus: tuple[Path, dict[str, Any]], tmp_path: Path) -> None:
    root, _ = corpus
    proc = _run_cli(str(root), "--workers", "1", "--no-progress")
    assert proc.returncode == 0, proc.stderr
    for heading in ("Transcripts", "By format and Codex version", "Lines", "Items by kind", "Exec cells",
                    "exec_command arguments", "Script entries", "Test runs", "Tokens", "Parse time"):
        assert heading in proc.stdout
    bad = _run_cli(str(tmp_path / "missing"), "--json")
    assert bad.returncode == 2 and json.loads(bad.stdout)["error"]["code"] == "file_not_found"
    bad = _run_cli(str(root), "--rows", str(tmp_path / "x.txt"), "--json")
    assert bad.returncode == 2 and "parquet" in json.loads(bad.stdout)["error"]["message"]
    assert "Traceback" not in bad.stderr


def test_an_unwritable_rows_target_fails_before_any_work(tmp_path: Path) -> None:
    """A --rows path in a missing folder is one JSON error up front, never a traceback after
    the whole census ran."""
    proc = _run_cli(str(tmp_path), "--json", "--no-progress", "--rows", str(tmp_path / "missing" / "r.csv"))
    assert proc.returncode != 0 and "Traceback" not in proc.stderr
    err = json.loads(proc.stdout)
    assert err["ok"] is False and err["error"]["code"] == "rows_unwritable"


def test_default_target_is_codex_home(tmp_path: Path) -> None:
    home = tmp_path / "home"
    generate(home, rollouts=2, seed=9, cells=2)
    (home / "config.json").write_text('{"not": "a transcript"}')
    proc = subprocess.run([sys.executable, "-m", "transcript_reader", "census", "--json", "--no-progress", "-w", "1"],
                          capture_output=True, text=True, timeout=120, env={"CODEX_HOME": str(home), "HOME": str(tmp_path), "PATH": ""})
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert out["targets"] == [str(home / "sessions")]
    assert out["figures"]["files"] == 2 and out["figures"]["errors"] == {}


def test_hostile_files_are_counted_and_do_not_disturb_the_rest(
        corpus: tuple[Path, dict[str, Any]], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Binary junk, 20 MB single lines (junk, cut, valid) and invalid UTF-8: each is counted as what it
    is, the census goes on, the other files' figures are unchanged, and no giant line enters a JSON
    parser more than once (counted by wrapping orjson.loads in this process: workers=1)."""
    import orjson

    root, manifest = corpus
    hostile = write_hostile(tmp_path / "hostile", big_line_mb=20)
    big_parses: Counter[str] = Counter()
    real_loads = orjson.loads

    def counting_loads(data: Any) -> Any:
        if len(data) > 10 << 20:
            head = data[:1] if isinstance(data, str) else bytes(data[:1]).decode("latin1")
            big_parses[head] += 1
        return real_loads(data)

    monkeypatch.setattr(orjson, "loads", counting_loads)
    clean = _census([root]).counts()
    f = _census([root, tmp_path / "hostile"]).counts()
    assert f["files"] == manifest["rollouts"] + len(hostile)
    assert f["transcripts"] + sum(f["errors"].values()) == f["files"]
    assert f["crashes"]["count"] == 0, f["crashes"]
    refused = {Path(r.rsplit(":", 1)[0]).stem for r in f["refused"]["sample"]}
    assert {"junk", "giant_junk_line"} <= refused
    assert Path(f["unreadable"]["sample"][0].rsplit(":", 1)[0]).stem in {"bad_utf8", "giant_cut_line"}
    assert f["direct_calls_by_tool"].get("exec_command", 0) == clean["direct_calls_by_tool"].get("exec_command", 0) + 1
    for key in ("scripts", "exec_cells", "script_calls_by_tool", "exec_command_args", "executed"):
        assert f[key] == clean[key], key
    # bad_utf8's prompt line is read with its bad byte replaced (one character lost, not the line): one turn
    assert f["turns"] == clean["turns"] + 1
    # giant_valid_line and giant_cut_line once each ('{'); giant_junk_line at most once (format sniffing
    # looks at a huge line's head only, so it may never reach a parser)
    assert big_parses["x"] <= 1 and big_parses["{"] == 2, big_parses


def test_a_giant_cut_first_line_is_parsed_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import orjson

    hostile = write_hostile(tmp_path, big_line_mb=12)
    calls = []
    real_loads = orjson.loads

    def counting_loads(data: Any) -> Any:
        if len(data) > 10 << 20:
            calls.append(len(data))
        return real_loads(data)

    monkeypatch.setattr(orjson, "loads", counting_loads)
    fig, _ = census_file(str(hostile["giant_cut_line"]))
    assert len(calls) <= 1
    assert fig.counts()["files"] == 1 and not fig.counts()["crashes"]["count"]


def test_giant_valid_line_is_parsed_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import orjson

    hostile = write_hostile(tmp_path, big_line_mb=12)
    calls = []
    real_loads = orjson.loads

    def counting_loads(data: Any) -> Any:
        if len(data) > 10 << 20:
            calls.append(len(data))
        return real_loads(data)

    monkeypatch.setattr(orjson, "loads", counting_loads)
    fig, _ = census_file(str(hostile["giant_valid_line"]))
    assert len(calls) == 1
    assert fig.counts()["transcripts"] == 1 and fig.counts()["lines"]["lines"] == 3


def test_census_over_shared_corpus() -> None:
    """The real recordings and public files: every figure is there, nothing crashes the library."""
    if not (SHARED / "corpus").is_dir():
        pytest.skip(f"{SHARED / 'corpus'} is absent (fresh clone without ../shared)")
    f = _census([SHARED / "corpus"], workers=2).to_json()
    assert f["crashes"]["count"] == 0, f["crashes"]
    assert f["transcripts"] >= 200 and len(f["files_by_version"]) >= 10
    assert f["exec_cells"] > 0 and f["scripts"] == f["exec_cells"]
    assert f["exec_command_args"]["all"] > 0 and f["top_level_apply_patch"] > 0
    assert {"yes", "unknown"} <= set(f["executed"]) and f["test_runs"]
    assert f["tokens"]["total"] > 0 and f["lines"]["lines"] == sum(
        f["lines"].get(k, 0) for k in ("decoded", "known_noise", "unknown", "unreadable", "blank"))
    assert f["parse_time"]["scripts"] == f["scripts"] and f["parse_time"]["worst"]


def test_zst_and_plain_give_the_same_figures(corpus: tuple[Path, dict[str, Any]], tmp_path: Path) -> None:
    import zstandard

    root, _ = corpus
    src = sorted(root.rglob("*.jsonl"))[:3]
    plain, packed = tmp_path / "plain", tmp_path / "packed"
    plain.mkdir(), packed.mkdir()
    for p in src:
        (plain / p.name).write_bytes(p.read_bytes())
        (packed / (p.name + ".zst")).write_bytes(zstandard.ZstdCompressor().compress(p.read_bytes()))
    a, b = _census([plain]).counts(), _census([packed]).counts()
    for f in (a, b):
        f.pop("bytes")
        for key in SAMPLES:
            f[key] = f[key]["count"]
    assert a == b and a["files"] == 3 and a["scripts"] > 0


def test_a_long_script_is_analysed_whole(tmp_path: Path) -> None:
    """Never half a script: the library's ``arguments`` is an excerpt of a long cell, but the item's
    ``script`` holds it whole, so the census analyses all 150 commands."""
    body = "".join(f'await tools.exec_command({{ cmd: "echo {i}" }});\n' for i in range(150))  # ~7 KB
    lines = [
        {"timestamp": "2026-11-01T00:00:00.000Z", "type": "session_meta",
         "payload": {"id": "00000000-0000-4000-8000-00000000beef", "cwd": "/repo", "cli_version": "0.171.0"}},
        {"timestamp": "2026-11-01T00:00:01.000Z", "type": "response_item",
         "payload": {"type": "custom_tool_call", "call_id": "c1", "name": "exec", "input": body}},
    ]
    path = tmp_path / "long.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    f = census_file(str(path))[0].counts()
    assert f["exec_cells"] == 1 and f["scripts"] == 1
    assert f["exec_command_args"]["all"] == 150


def test_census_of_the_project_fixtures_matches_a_raw_count() -> None:
    """Over the project's own fixtures (every helper's: recordings, exec streams, goldens, non-transcripts):
    every file is either read or refused with a code, and the exec cells equal a raw count of
    ``custom_tool_call`` lines named ``exec`` made here with json."""
    root = ROOT / "fixtures"
    files = [p for p in root.rglob("*") if p.is_file() and p.name.endswith((".jsonl", ".jsonl.zst", ".json"))]
    cells = 0
    for p in files:
        if not p.name.endswith(".jsonl"):
            continue
        for line in p.read_bytes().splitlines():
            try:
                o = json.loads(line)
            except ValueError:
                continue
            payload = o.get("payload") if isinstance(o, dict) and o.get("type") == "response_item" else None
            if isinstance(payload, dict) and payload.get("type") == "custom_tool_call" and payload.get("name") == "exec":
                cells += 1
    f = _census([root], workers=2).counts()
    assert f["files"] == len(files)
    assert f["transcripts"] + sum(f["errors"].values()) == f["files"] == sum(f["files_by_format"].values()) + sum(
        f["errors"].values())
    assert f["crashes"]["count"] == 0, f["crashes"]
    assert f["exec_cells"] == cells > 0
    assert f["scripts"] == cells


def test_unreadable_sample_names_the_first_unreadable_line(tmp_path: Path) -> None:
    """The ``unreadable`` sample points at the first unreadable line the library reports (here
    line 3 of 4, which is not JSON; line 2's invalid UTF-8 costs its bad characters, not the line), not at ``file:0``; the sample counts files, the
    ``lines`` counter counts lines. Line numbers are written here, not read back through the library."""
    meta = {"timestamp": "2026-11-01T00:00:00.000Z", "type": "session_meta",
            "payload": {"id": "00000000-0000-4000-8000-0000000f0016", "cwd": "/repo", "cli_version": "0.171.0"}}
    msg = {"timestamp": "2026-11-01T00:00:02.000Z", "type": "response_item",
           "payload": {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "hi"}]}}
    mid = tmp_path / "mid.jsonl"
    mid.write_bytes(json.dumps(meta).encode() + b"\n" + b'{"type": "caf\xe9 \xff"}\n' + b"not json at all\n"
                    + json.dumps(msg).encode() + b"\n")
    first = tmp_path / "first.jsonl"  # line 1 invalid UTF-8 that is no JSON either, then a session_meta
    first.write_bytes(b"\xff\xfe junk\n" + json.dumps(meta).encode() + b"\n")
    f = _census([mid, first]).counts()
    assert f["lines"]["unreadable"] == 2
    assert f["unreadable"] == {"count": 2, "sample": [f"{first}:1", f"{mid}:3"]}


def test_walk_counts_each_file_once_whatever_its_spelling(tmp_path: Path) -> None:
    """A file reached through ``..``, a symlinked directory, a symlinked file, a hard link or named
    twice is walked once, under the first spelling met; every other spelling is reported as skipped."""
    real = tmp_path / "real"
    (real / "sub").mkdir(parents=True)
    a, b = real / "a.jsonl", real / "sub" / "b.jsonl"
    a.write_text("{}\n")
    b.write_text("{}\n")
    (tmp_path / "link").symlink_to(real, target_is_directory=True)
    (real / "sub" / "a_symlink.jsonl").symlink_to(a)
    (real / "sub" / "b_hardlink.jsonl").hardlink_to(b)
    missing = real / "gone.jsonl"  # cannot be stat'ed: deduplicated by real path, still walked once
    dups: list[tuple[str, str]] = []
    jobs = list(iter_transcripts([real, real / "sub" / ".." / "sub", tmp_path / "link", a, str(a), missing,
                                  tmp_path / "real" / "." / "gone.jsonl"], duplicates=dups))
    assert [j.path for j in jobs] == [str(a), str(b), str(missing)]
    skipped = {s for s, _ in dups}
    assert skipped == {
        str(real / "sub" / "a_symlink.jsonl"), str(real / "sub" / "b_hardlink.jsonl"),
        *(str(real / "sub" / ".." / "sub" / n) for n in ("a_symlink.jsonl", "b.jsonl", "b_hardlink.jsonl")),
        *(str(tmp_path / "link" / n) for n in ("a.jsonl",)),
        *(str(tmp_path / "link" / "sub" / n) for n in ("a_symlink.jsonl", "b.jsonl", "b_hardlink.jsonl")),
        str(a), str(tmp_path / "real" / "." / "gone.jsonl"),
    }
    # 12 spellings skipped, not 11: ``a`` named twice on the command line is skipped twice
    assert len(dups) == 12 and all(kept in {str(a), str(b), str(missing)} for _, kept in dups)


def test_cli_counts_a_corpus_named_three_ways_once(corpus: tuple[Path, dict[str, Any]], tmp_path: Path) -> None:
    """Each file once, through the command line: the corpus, the same corpus through ``..`` and through a symlink,
    and one of its files named again give the figures of the corpus alone, plus ``duplicates_skipped``."""
    root, _manifest = corpus
    files = sorted(root.rglob("*.jsonl"))
    link = tmp_path / "corpus_link"
    link.symlink_to(root, target_is_directory=True)
    once = _run_cli(str(root), "--json", "--workers", "1", "--no-progress", "--no-cross-check")
    thrice = _run_cli(str(root), str(root / ".." / root.name), str(link), str(files[0]), "--json",
                      "--workers", "1", "--no-progress", "--no-cross-check")
    assert once.returncode == 0 and thrice.returncode == 0, once.stderr + thrice.stderr
    f1, f3 = json.loads(once.stdout)["figures"], json.loads(thrice.stdout)["figures"]
    assert f1["duplicates_skipped"] == 0 and f3["duplicates_skipped"] == 2 * len(files) + 1
    for fig in (f1, f3):
        del fig["duplicates_skipped"], fig["parse_time"]
    assert f3 == f1 and f1["files"] == len(files)
    human = _run_cli(str(root), str(link), "--workers", "1", "--no-progress", "--no-cross-check")
    assert human.returncode == 0 and re.search(rf"duplicates skipped\s+{len(files)}\b", human.stdout), human.stdout


def test_scripts_are_the_readers_cells_not_any_call_named_exec(tmp_path: Path) -> None:
    """A JSON function tool named ``exec`` (``function_call`` with ``{"command": …}`` arguments, the
    shape of the public DanielEnriq__Vowe fixture, line 11) is a direct call, not a code-mode cell: the
    census counts the freeform ``custom_tool_call`` cell only, the same script count as ``inspect``."""
    meta = {"timestamp": "2026-11-01T00:00:00.000Z", "type": "session_meta",
            "payload": {"id": "00000000-0000-4000-8000-0000000f0018", "cwd": "/repo", "cli_version": "0.171.0"}}
    cell = {"timestamp": "2026-11-01T00:00:01.000Z", "type": "response_item", "payload": {
        "type": "custom_tool_call", "call_id": "c1", "name": "exec", "input": "pnpm build"}}
    func = {"timestamp": "2026-11-01T00:00:02.000Z", "type": "response_item", "payload": {
        "type": "function_call", "call_id": "c2", "name": "exec", "arguments": json.dumps({"command": "pnpm test"})}}
    path = tmp_path / "exec_named_function.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in (meta, cell, func)))
    fig, rows = census_file(str(path), CensusOptions(rows=True))
    f = fig.counts()
    assert f["exec_cells"] == f["scripts"] == 1 and [(r.line, r.call_id) for r in rows] == [(2, "c1")]
    assert f["direct_calls_by_tool"]["exec"] == 2  # both are still calls of a tool named exec
    inspect = subprocess.run([sys.executable, "-m", "transcript_reader", "inspect", "--json", str(path)],
                             capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert inspect.returncode == 0, inspect.stderr
    assert json.loads(inspect.stdout)["info"]["scripts"]["scripts"] == f["scripts"]


def test_census_scripts_equal_the_readers_over_the_shared_corpus() -> None:
    """Census = inspect on the real files: per file, the census analyses exactly the scripts the reader counts
    (``Transcript.info().scripts``, what ``inspect`` prints); before the fix one public file gave 2 vs 1."""
    if not (SHARED / "corpus").is_dir():
        pytest.skip(f"{SHARED / 'corpus'} is absent (fresh clone without ../shared)")
    from transcript_reader.api import Transcript
    from transcript_reader.errors import TranscriptError

    checked = 0
    for job in iter_transcripts([SHARED / "corpus" / "realcodex", SHARED / "corpus" / "public"]):
        try:
            expected = Transcript(job.path).info().scripts.scripts
        except TranscriptError:
            expected = 0
        assert census_file(job.path, CensusOptions(cross_check=False))[0].scalars["scripts"] == expected, job.path
        checked += expected
    assert checked > 0


def test_each_script_is_analysed_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """The reader analyses every cell through the process's timed cache of analyses; the script figures
    reuse those analyses instead of analysing each script a second time."""
    import exec_grammar

    exec_grammar.clear_analysis_cache()

    fixture = Path(__file__).resolve().parents[1] / "fixtures" / "transcripts" / "code_mode_records.jsonl"
    real = exec_grammar.analyze
    calls: list[str] = []

    def counting(script: str, *args: Any, **kwargs: Any) -> Any:
        calls.append(script)
        return real(script, *args, **kwargs)

    monkeypatch.setattr(exec_grammar, "analyze", counting)
    fig, _ = census_file(str(fixture), CensusOptions(cross_check=False))
    assert fig.scalars["scripts"] == fig.scalars["exec_cells"] > 0
    assert len(calls) == fig.scalars["scripts"]
    assert fig.parse_time.count == fig.scalars["scripts"]  # every script still timed


def test_each_script_text_is_analysed_once_per_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The same script met in two sessions (and its cross-checks) is analysed once: the second census
    reuses the first's analysis, and the figures are those of a census analysing every cell afresh."""
    import exec_grammar
    from transcript_reader.census import file as census_mod

    src = ROOT / "fixtures/mcp/code_mode_multi_cell.rollout.jsonl"
    a, b = tmp_path / "rollout-a.jsonl", tmp_path / "rollout-b.jsonl"
    a.write_bytes(src.read_bytes())
    b.write_bytes(src.read_bytes())
    real = exec_grammar.analyze
    seen: Counter[tuple[str, str | None]] = Counter()

    def counting(script: str, parser: str = "tree-sitter") -> Any:
        seen[(script, parser)] += 1
        return real(script, parser=parser)

    monkeypatch.setattr(exec_grammar, "analyze", counting)
    exec_grammar.clear_analysis_cache()  # the run's cache (exec_grammar's shared one), fresh
    first, _ = census_file(str(a))
    second, _ = census_file(str(b))
    assert first.scalars["scripts"] >= 1 and seen and set(seen.values()) == {1}, seen
    assert {p for _, p in seen} == {"tree-sitter", "lexer", "esprima"}
    assert census_mod.analyses() is exec_grammar.shared_analyses()  # one cache of analyses, not two
    exec_grammar.clear_analysis_cache()
    fresh, _ = census_file(str(b))
    assert second.counters == fresh.counters and second.scalars == fresh.scalars
