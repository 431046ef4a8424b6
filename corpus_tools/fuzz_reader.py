"""A fuzz harness for the reader: mutations of real transcript lines, and three assertions.

Inputs are built by hypothesis from seed transcripts (``fixtures/`` always; the shared corpus's real
recordings too when ``../shared/corpus`` is there): per-field type and value replacement, key deletion,
truncation, byte flips, invalid UTF-8, NUL bytes, duplicated and swapped lines, and concatenation with a
transcript of another format. For every input:

1. only typed errors (``TranscriptError``) escape the library;
2. ``lines == decoded + known_noise + unknown + unreadable + blank``, and ``lines`` is the file's
   physical line count (line formats);
3. every user message and shell command that a simple, independent reading of an intact line (one no
   mutation touched, parsed with the standard ``json`` module) finds is in the item stream.

    python -m corpus_tools.fuzz_reader --minutes 8            # on demand: prints inputs tried, failures
    python -m corpus_tools.fuzz_reader --mutated-lines 1000000 --minutes 40   # the long dense run
    python -m corpus_tools.fuzz_reader --minutes 1 --fixtures-only

The CI test (``tests/test_fuzz_reader.py``) runs :func:`check_input` briefly on the fixtures' seeds.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
FIXTURE_SEEDS = [*sorted((ROOT / "fixtures/transcripts").glob("*.jsonl")),
                 *sorted((ROOT / "fixtures/exec_streams").glob("*.jsonl")),
                 *sorted(p for p in (ROOT / "fixtures/transcripts").glob("*.json") if ".golden." not in p.name)]
CORPUS = ROOT.parent / "shared/corpus"
#: Seeds larger than this are not mutated whole (a fuzz input stays small and fast to read).
MAX_SEED_LINES = 400

MUTATIONS = ("replace_value", "delete_key", "truncate", "flip_byte", "invalid_utf8", "nul", "duplicate",
             "swap", "concat_other")
_VALUES: list[Any] = [None, True, 0, -1, 2**70, 1.5, "", "x", "\u2028", [], [1], {}, {"type": "x"}]


def seed_files(fixtures_only: bool = False) -> list[Path]:
    seeds = list(FIXTURE_SEEDS)
    if not fixtures_only and CORPUS.is_dir():
        seeds += sorted(CORPUS.glob("realcodex/*/*.rollout.jsonl"))
        seeds += sorted(CORPUS.glob("realcodex/*/*.exec.jsonl"))
    return [p for p in seeds if p.stat().st_size > 0]


def load_seed(path: Path) -> list[bytes]:
    lines = path.read_bytes().splitlines(keepends=True)
    return lines[:MAX_SEED_LINES]


# ---------------------------------------------------------------- mutations


def _paths(obj: Any, prefix: tuple[Any, ...] = (), depth: int = 0) -> list[tuple[Any, ...]]:
    out: list[tuple[Any, ...]] = []
    if depth > 6:
        return out
    if isinstance(obj, dict):
        for k, v in obj.items():
            out.append((*prefix, k))
            out += _paths(v, (*prefix, k), depth + 1)
    elif isinstance(obj, list):
        for i, v in enumerate(obj[:8]):
            out.append((*prefix, i))
            out += _paths(v, (*prefix, i), depth + 1)
    return out


def _set(obj: Any, path: tuple[Any, ...], value: Any, delete: bool) -> None:
    for k in path[:-1]:
        obj = obj[k]
    if delete:
        del obj[path[-1]]
    else:
        obj[path[-1]] = value


def mutate_line(line: bytes, how: str, rnd: random.Random) -> bytes:
    """One mutation of one line (``how`` in :data:`MUTATIONS`, the line-local ones)."""
    body = line.rstrip(b"\r\n")
    end = line[len(body):]
    if how in ("replace_value", "delete_key"):
        try:
            obj = json.loads(body)
        except ValueError:
            how = "flip_byte"
        else:
            paths = _paths(obj)
            if not paths:
                return json.dumps(rnd.choice(_VALUES)).encode() + end
            path = rnd.choice(paths)
            if how == "delete_key" and isinstance(path[-1], str):
                _set(obj, path, None, delete=True)
            else:
                _set(obj, path, rnd.choice(_VALUES), delete=False)
            text = json.dumps(obj, ensure_ascii=False, separators=(",", ":"))
            if rnd.random() < 0.1:
                text = text.replace("1.5", "1e309", 1)  # a number JSON parsers refuse
            return text.encode("utf-8", "surrogatepass") + end
    if not body:
        return b"\x00" + end
    at = rnd.randrange(len(body) + 1)
    if how == "truncate":
        return body[:at] + end if rnd.random() < 0.7 else body[:at]
    if how == "flip_byte":
        i = min(at, len(body) - 1)
        return body[:i] + bytes([body[i] ^ (1 << rnd.randrange(8))]) + body[i + 1:] + end
    if how == "invalid_utf8":
        return body[:at] + rnd.choice([b"\xff", b"\xc3\x28", b"\xed\xa0\x80", b"\xf8\x88\x80\x80\x80"]) \
            + body[at:] + end
    if how == "nul":
        return body[:at] + b"\x00" * rnd.randrange(1, 4) + body[at:] + end
    if how == "bad_char":  # inside a string value: an escaped lone surrogate, overlong UTF-8, CESU-8
        q = body.find(b'":"', at)
        q = body.find(b'":"') if q < 0 else q
        if q < 0:
            return body + b"\xc0\xaf" + end
        bad = rnd.choice([b"\\ud83d", b"\\udc00", b"\xc0\xaf", b"\xed\xa0\xbd\xed\xb8\x80", b"\xe0\x80\xaf"])
        return body[:q + 3] + bad + body[q + 3:] + end
    if how == "blank_run":
        return line + b"\n" * rnd.randrange(1, 40)
    raise ValueError(how)


@dataclass
class FuzzInput:
    data: bytes
    intact: list[bytes]  # lines no mutation touched
    seed: str
    mutations: list[str] = field(default_factory=list)
    seed_format: str | None = None  # the format the unmutated seed reads as
    mutated: int = 0  # lines a mutation changed
    lines: int = 0  # physical lines of the input


#: The mutations of one line alone (the dense mode draws from these for each line it changes).
LINE_MUTATIONS = ("replace_value", "delete_key", "truncate", "flip_byte", "invalid_utf8", "nul", "bad_char",
                  "blank_run")


def build_input(seed: Path, other: Path, plan: list[tuple[str, float, float]], density: float = 0.0,
                rnd_seed: float = 0.0) -> FuzzInput:
    """Apply ``plan`` (mutation, position in [0, 1), randomness) to ``seed``'s lines; then, with
    ``density`` > 0, change each line left untouched with that probability by a line mutation (the long
    run's mode: most lines of an input are hostile, so a million mutated lines is hours, not days)."""
    lines = load_seed(seed)
    touched = [False] * len(lines)
    names: list[str] = []
    if density > 0:
        drng = random.Random(rnd_seed)
        for i, ln in enumerate(lines):
            if drng.random() < density:
                how = drng.choice(LINE_MUTATIONS)
                new = mutate_line(ln, how, drng)
                if new != ln:
                    lines[i], touched[i] = new, True
    for how, where, r in plan:
        if not lines:
            break
        i = min(int(where * len(lines)), len(lines) - 1)
        rnd = random.Random(r)
        names.append(how)
        if how == "duplicate":
            lines.insert(i, lines[i])
            touched.insert(i, touched[i])
        elif how == "swap":
            j = rnd.randrange(len(lines))
            lines[i], lines[j] = lines[j], lines[i]
            touched[i], touched[j] = touched[j], touched[i]
        elif how == "concat_other":
            extra = load_seed(other)[:40]
            if lines and not lines[-1].endswith(b"\n"):
                lines[-1] += b"\n"
                touched[-1] = True
            lines += extra
            touched += [True] * len(extra)  # read by another format's rules: not judged here
        else:
            new = mutate_line(lines[i], how, rnd)
            if new != lines[i]:
                lines[i] = new
                touched[i] = True
    for i in range(len(lines) - 1):  # a line left without its newline (whatever moved it there) joins the next
        if not lines[i].endswith(b"\n"):
            touched[i + 1] = True
    intact = [ln for ln, t in zip(lines, touched, strict=True) if not t]
    data = b"".join(lines)
    return FuzzInput(data, intact, seed.name, names, _seed_format(seed), mutated=sum(touched),
                     lines=physical_lines(data))


_FORMATS: dict[Path, str | None] = {}


def _seed_format(seed: Path) -> str | None:
    if seed not in _FORMATS:
        from transcript_reader.errors import TranscriptError
        from transcript_reader.providers import sniff_format

        try:
            _FORMATS[seed] = sniff_format(seed).value
        except TranscriptError:
            _FORMATS[seed] = None
    return _FORMATS[seed]


# ---------------------------------------------------------------- the independent reading


def _norm(text: str) -> str:
    return " ".join(text.split())


def expected_facts(line: bytes) -> tuple[list[str], list[str]]:
    """User messages and shell commands one intact rollout line states, read with ``json`` alone."""
    try:
        obj = json.loads(line)
    except ValueError:
        return [], []
    if not isinstance(obj, dict) or not isinstance(obj.get("payload"), dict):
        return [], []
    p = obj["payload"]
    users: list[str] = []
    commands: list[str] = []
    t = p.get("type")
    if obj.get("type") == "response_item" and t == "message" and p.get("role") == "user":
        for c in p.get("content") or []:
            if isinstance(c, dict) and c.get("type") == "input_text" and isinstance(c.get("text"), str):
                users.append(c["text"])
    elif obj.get("type") == "event_msg" and t == "user_message" and isinstance(p.get("message"), str):
        users.append(p["message"])
    elif obj.get("type") == "response_item" and t == "function_call" and isinstance(p.get("arguments"), str):
        try:
            args = json.loads(p["arguments"])
        except ValueError:
            args = None
        if isinstance(args, dict):
            cmd = args.get("cmd") if p.get("name") == "exec_command" else args.get("command")
            if p.get("name") in ("exec_command", "shell", "shell_command", "container.exec"):
                if isinstance(cmd, list) and cmd and all(isinstance(a, str) for a in cmd):
                    if cmd[0] != "apply_patch":  # a patch given as argv: a patch, not a command
                        commands.append(cmd[-1])
                elif isinstance(cmd, str) and not cmd.lstrip().startswith("apply_patch"):
                    commands.append(cmd)
    return [u for u in users if u.strip()], [c for c in commands if c.strip()]


# ---------------------------------------------------------------- one input


def physical_lines(data: bytes) -> int:
    data = data.removeprefix(b"\xef\xbb\xbf")
    if b"\n" not in data[:65536] and b"\r" in data[:65536]:
        data = data.replace(b"\r", b"\n")
    return data.count(b"\n") + (1 if data and not data.endswith(b"\n") else 0)


def check_input(fi: FuzzInput, workdir: Path) -> list[str]:
    """The invariants' failures for one input (empty: it holds)."""
    from transcript_reader.api import Transcript
    from transcript_reader.errors import TranscriptError
    from transcript_reader.model import Format

    path = workdir / "fuzz.jsonl"
    path.write_bytes(fi.data)
    try:
        t = Transcript(path)
        items = list(t.items())
        info = t.info()
    except TranscriptError:
        return []  # typed: allowed (an unsupported file, a bad argument)
    except Exception as e:  # noqa: BLE001 - the finding itself
        return [f"untyped {type(e).__name__}: {e}"]
    out: list[str] = []
    a = info.lines
    if a.lines != a.decoded + a.known_noise + a.unknown + a.unreadable + a.blank:
        out.append(f"accounting does not add up: {a}")
    if t.format is not Format.TS_JSON and a.lines != physical_lines(fi.data):
        out.append(f"lines {a.lines} != physical line count {physical_lines(fi.data)}")
    texts: list[str] = []
    commands: list[str] = []
    for i in items:
        k = i.kind.value
        if k in ("user_message", "context"):
            texts.append(_norm(getattr(i, "text", "") or ""))
        elif k == "shell_command":
            commands.append(_norm(getattr(i, "command", "") or ""))
    # a file now read as another format than its seed (a swapped or appended line of another shape
    # came first) loses its lines to format detection: counted apart, as mixed files are
    where = t.format.value if t.format.value == fi.seed_format else f"read as {t.format.value}, seed {fi.seed_format}"
    blob_users = "\n".join(texts)
    blob_cmds = "\n".join(commands)
    for line in fi.intact:
        users, cmds = expected_facts(line)
        for u in users:
            if _norm(u) not in blob_users:
                out.append(f"user message missing ({where}): {u[:80]!r}")
        for c in cmds:
            if _norm(c) not in blob_cmds:
                out.append(f"command missing ({where}): {c[:80]!r}")
    return out


# ---------------------------------------------------------------- driver


def plan_strategy(n_seeds: int) -> Any:
    from hypothesis import strategies as st

    step = st.tuples(st.sampled_from(MUTATIONS), st.floats(0, 1, exclude_max=True), st.floats(0, 1))
    return st.tuples(st.integers(0, n_seeds - 1), st.integers(0, n_seeds - 1), st.lists(step, min_size=1, max_size=5))


def run(minutes: float, *, fixtures_only: bool = False, examples_per_batch: int = 200,
        out: Any = sys.stdout, save: Path | None = None) -> tuple[int, Counter[str], list[tuple[FuzzInput, list[str]]]]:
    """Fuzz for ``minutes``; returns (inputs tried, failures by kind, first failing inputs)."""
    from hypothesis import HealthCheck, given, settings

    seeds = seed_files(fixtures_only)
    strategy = plan_strategy(len(seeds))
    tried = 0
    kinds: Counter[str] = Counter()
    examples: list[tuple[FuzzInput, list[str]]] = []
    deadline = time.monotonic() + minutes * 60
    with tempfile.TemporaryDirectory(prefix="fuzz-reader-") as tmp:
        work = Path(tmp)

        @settings(max_examples=examples_per_batch, deadline=None, database=None, derandomize=False,
                  suppress_health_check=list(HealthCheck))
        @given(strategy)
        def batch(case: tuple[int, int, list[tuple[str, float, float]]]) -> None:
            nonlocal tried
            if time.monotonic() > deadline:
                return
            si, oi, plan = case
            fi = build_input(seeds[si], seeds[oi], plan)
            tried += 1
            for f in check_input(fi, work):
                kinds[f.split(":")[0]] += 1
                if len(examples) < 20:
                    examples.append((fi, [f]))
                    if save is not None:
                        save.mkdir(parents=True, exist_ok=True)
                        (save / f"fail-{len(examples):02d}.jsonl").write_bytes(fi.data)
                        (save / f"fail-{len(examples):02d}.txt").write_text(f"{fi.seed} {fi.mutations}\n{f}\n")

        while time.monotonic() < deadline:
            batch()
    print(f"fuzz_reader: {tried} inputs from {len(seeds)} seeds in {minutes:g} min; "
          f"{sum(kinds.values())} failures", file=out)
    for k, n in kinds.most_common():
        print(f"  {n:6d}  {k}", file=out)
    for fi, fs in examples[:10]:
        print(f"  e.g. {fi.seed} after {fi.mutations}: {fs[0][:200]}", file=out)
    return tried, kinds, examples


def run_lines(target: int, *, density: float = 0.35, seed: int = 0, fixtures_only: bool = False,
              minutes: float | None = None, out: Any = sys.stdout,
              save: Path | None = None) -> tuple[int, int, int, Counter[str]]:
    """Fuzz until ``target`` lines were mutated (or ``minutes`` ran out): inputs drawn with a seeded
    ``random`` (repeatable: ``seed``), dense mode (``density``), plus up to three file-level mutations
    each. Returns (inputs, lines read, lines mutated, failures by kind)."""
    import resource

    seeds = seed_files(fixtures_only)
    rnd = random.Random(seed)
    inputs = lines = mutated = 0
    kinds: Counter[str] = Counter()
    start = time.monotonic()
    deadline = None if minutes is None else start + minutes * 60
    saved = 0
    with tempfile.TemporaryDirectory(prefix="fuzz-reader-") as tmp:
        work = Path(tmp)
        while mutated < target and (deadline is None or time.monotonic() < deadline):
            plan = [(rnd.choice(MUTATIONS), rnd.random(), rnd.random()) for _ in range(rnd.randrange(4))]
            fi = build_input(seeds[rnd.randrange(len(seeds))], seeds[rnd.randrange(len(seeds))], plan,
                             density=density, rnd_seed=rnd.random())
            inputs += 1
            lines += fi.lines
            mutated += fi.mutated
            for f in check_input(fi, work):
                kinds[f.split(":")[0]] += 1
                if save is not None and saved < 20:
                    saved += 1
                    save.mkdir(parents=True, exist_ok=True)
                    (save / f"fail-{saved:02d}.jsonl").write_bytes(fi.data)
                    (save / f"fail-{saved:02d}.txt").write_text(f"{fi.seed} {fi.mutations}\n{f}\n")
    took = time.monotonic() - start
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    untyped = sum(n for k, n in kinds.items() if k.startswith("untyped"))
    accounting = sum(n for k, n in kinds.items() if k.startswith(("accounting", "lines ")))
    print(f"fuzz_reader: {inputs} inputs from {len(seeds)} seeds, {lines} lines read, {mutated} lines mutated "
          f"(density {density:g}, seed {seed}) in {took / 60:.1f} min, peak RSS {rss:.0f} MB; "
          f"untyped exceptions {untyped}, accounting failures {accounting}, "
          f"other failures {sum(kinds.values()) - untyped - accounting}", file=out)
    for k, n in kinds.most_common(10):
        print(f"  {n:6d}  {k}", file=out)
    return inputs, lines, mutated, kinds


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--minutes", type=float, default=1.0)
    ap.add_argument("--fixtures-only", action="store_true", help="seed from fixtures/ only (no shared corpus)")
    ap.add_argument("--save", type=Path, help="write the first failing inputs (and why) to this directory")
    ap.add_argument("--mutated-lines", type=int,
                    help="dense mode: run until this many lines were mutated (--minutes then caps the time)")
    ap.add_argument("--density", type=float, default=0.35, help="dense mode: share of each input's lines mutated")
    ap.add_argument("--seed", type=int, default=0, help="dense mode: the random seed (a run is repeatable)")
    args = ap.parse_args(argv)
    if args.mutated_lines:
        *_, kinds = run_lines(args.mutated_lines, density=args.density, seed=args.seed,
                              fixtures_only=args.fixtures_only, minutes=args.minutes, save=args.save)
        # untyped exceptions and broken accounting fail the run; a fact lost to a mutation nearby is reported
        return 1 if any(k.startswith(("untyped", "accounting", "lines ")) for k in kinds) else 0
    _tried, kinds, _ = run(args.minutes, fixtures_only=args.fixtures_only, save=args.save)
    return 1 if kinds else 0


if __name__ == "__main__":
    raise SystemExit(main())
