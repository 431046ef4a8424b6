"""Record real Codex sessions offline, for format drift: install ``@openai/codex@VERSION`` from npm, then
run ``codex exec --json`` against the scripted mock model, ONLY inside a fresh network namespace.

Safety (fail closed): Codex looks up remote hosts at start-up, so it must never run with a network.
``record`` re-executes this module under ``unshare -rn`` (or ``-rnm``; a user + network namespace holding nothing but
loopback). Inside, before anything else, :func:`assert_isolated` checks that ``lo`` is the only network
interface and brings it up; if ``unshare`` is missing or refuses, or the check fails, a
:class:`RecorderError` is raised and no Codex binary is started. npm installs outside the namespace
(it needs the registry) with ``--ignore-scripts``, so nothing from the package runs there.

Layout of one recording in OUT: ``NAME.rollout.jsonl`` (what Codex wrote under CODEX_HOME/sessions),
``NAME.rollout.path``, ``NAME.exec.jsonl`` (``codex exec --json`` stdout), ``NAME.exec.stderr``,
``NAME.mock/`` (every request and answer of the mock), ``NAME.result.json`` (exit code, steps served).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
SCENARIOS = HERE / "scenarios"
BASE_CONFIG = HERE / "config.base.toml"
INSIDE_FLAG = "--inside-netns"


class RecorderError(RuntimeError):
    """The recorder refused to go on (no isolated namespace, install failed, no rollout written…)."""


@dataclass(frozen=True)
class Scenario:
    name: str
    prompt: str
    steps: list[list[dict[str, Any]]]
    args: tuple[str, ...] = ()

    @classmethod
    def load(cls, name_or_path: str) -> Scenario:
        name, data = scenario_json(name_or_path, SCENARIOS, "scenario")
        return cls(name, data.get("prompt", "hello"), data["steps"], tuple(data.get("args", ())))


def scenario_json(name_or_path: str, folder: Path, what: str) -> tuple[str, dict[str, Any]]:
    """A scenario's name and JSON: a file path, or a name in ``folder``; an unknown one names the known."""
    path = Path(name_or_path)
    if not path.exists():
        path = folder / f"{name_or_path}.json"
    if not path.exists():
        known = ", ".join(sorted(p.stem for p in folder.glob("*.json")))
        raise RecorderError(f"no {what} {name_or_path!r} (known: {known})")
    data: dict[str, Any] = json.loads(path.read_text())
    return path.stem, data


def add_run_arguments(ap: Any, folder: Path, version: str, package: str) -> None:
    """The options a ``run`` takes, for both recorders."""
    ap.add_argument("scenarios", nargs="*", help=f"names in {folder} or JSON files (default: all)")
    ap.add_argument("--version", default=version, help=f"npm version of {package}")
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--cache", type=Path, default=None, help=f"where npm installs {package}")
    ap.add_argument("--timeout", type=int, default=180)


def run_named(load: Callable[[str], Any], record_one: Callable[..., dict[str, Any]], folder: Path,
              args: Any) -> int:
    """Record the scenarios ``args`` names (all of ``folder`` by default): 2 before anything runs when one
    is unknown, else :func:`record_each`'s status."""
    names = args.scenarios or sorted(p.stem for p in folder.glob("*.json"))
    try:
        scenarios = [load(n) for n in names]
    except RecorderError as exc:
        print(f"recorder: {exc}", file=sys.stderr)
        return 2
    return record_each(record_one, scenarios, args.out, version=args.version, cache=args.cache,
                       timeout=args.timeout)


def default_cache() -> Path:
    return Path(tempfile.gettempdir()) / "corpus-tools-codex"


def install_codex(version: str, cache: Path | None = None) -> Path:
    """npm-install ``@openai/codex@version`` into ``cache/version`` (once) and return the ``codex`` path.
    Installing does not run Codex (``--ignore-scripts``)."""
    root = (cache or default_cache()) / version
    binary = root / "node_modules" / ".bin" / "codex"
    if binary.exists():
        return binary
    if shutil.which("npm") is None:
        raise RecorderError("npm is not installed; it is needed to install @openai/codex")
    root.mkdir(parents=True, exist_ok=True)
    (root / "package.json").write_text(json.dumps({"name": "codex-kit", "private": True}))
    proc = subprocess.run(
        ["npm", "install", "--no-audit", "--no-fund", "--ignore-scripts", f"@openai/codex@{version}"],
        cwd=root, capture_output=True, text=True, timeout=900,
    )
    if proc.returncode != 0 or not binary.exists():
        raise RecorderError(f"npm install @openai/codex@{version} failed: {proc.stderr.strip()[-800:]}")
    return binary


def network_interfaces(dev_file: str = "/proc/self/net/dev") -> list[str]:
    """The interfaces of this process's network namespace. Read from ``/proc/self/net/dev``, never from
    ``/sys/class/net``: sysfs shows the namespace of whoever mounted it, so inside ``unshare -rn`` it
    still lists the host's interfaces."""
    try:
        lines = Path(dev_file).read_text().splitlines()[2:]
    except OSError as exc:
        raise RecorderError(f"cannot list network interfaces: {exc}") from exc
    return sorted(line.split(":", 1)[0].strip() for line in lines if ":" in line)


def assert_isolated(what: str = "Codex") -> None:
    """Inside the namespace: only loopback exists; bring it up. Anything else is refused."""
    ifaces = network_interfaces()
    if ifaces != ["lo"]:
        raise RecorderError(f"refusing to run {what}: network interfaces {ifaces} are visible (want only lo)")
    ip = shutil.which("ip") or "/sbin/ip"
    proc = subprocess.run([ip, "link", "set", "lo", "up"], capture_output=True, text=True)
    if proc.returncode != 0:
        raise RecorderError(f"refusing to run {what}: cannot bring lo up: {proc.stderr.strip()}")


def check_unshare(unshare: str = "unshare") -> list[str]:
    """Outside: prove that an isolated network namespace can be created, or refuse. Returns the unshare
    flags to use: ``-rnm`` when a private mount namespace is also allowed (the session then runs in
    ``/home/user/project`` on a tmpfs, as in ``../shared/corpus/realcodex``), else ``-rn``."""
    exe = shutil.which(unshare)
    if exe is None:
        raise RecorderError("refusing to record: `unshare` is not installed (util-linux); Codex only runs "
                            "inside a network namespace with loopback only")
    proc = subprocess.run([exe, "-rn", "true"], capture_output=True, text=True)
    if proc.returncode != 0:
        raise RecorderError("refusing to record: cannot create a network namespace with `unshare -rn` "
                            f"({proc.stderr.strip() or 'exit ' + str(proc.returncode)}); Codex never runs outside one")
    with_mounts = subprocess.run([exe, "-rnm", "true"], capture_output=True, text=True)
    return [exe, "-rnm" if with_mounts.returncode == 0 else "-rn"]


def record(scenario: Scenario, out: Path, *, version: str, codex_bin: Path | None = None,
           cache: Path | None = None, timeout: int = 180, unshare: str = "unshare",
           extra_config: str = "") -> dict[str, Any]:
    """Record one scenario with one Codex version; returns the run's result (also NAME.result.json).
    ``extra_config`` is appended to the Codex config (e.g. an ``[mcp_servers.NAME]`` table; the MCP
    server runs inside the same namespace, loopback only)."""
    namespace = check_unshare(unshare)
    binary = codex_bin or install_codex(version, cache)
    out.mkdir(parents=True, exist_ok=True)
    spec = {"scenario": {"name": scenario.name, "prompt": scenario.prompt, "steps": scenario.steps,
                         "args": list(scenario.args)},
            "codex": str(binary), "out": str(out.resolve()), "timeout": timeout, "version": version,
            "path": os.environ.get("PATH", "/usr/bin:/bin"), "extra_config": extra_config}
    return run_inside(namespace, "corpus_tools.record.recorder", spec, out / f"{scenario.name}.result.json",
                      timeout=timeout + 60)


def run_inside(namespace: list[str], module: str, spec: dict[str, Any], result_file: Path, *,
               timeout: float) -> dict[str, Any]:
    """Re-execute ``module`` inside ``namespace`` with ``spec`` (handed over in a temporary file) and
    return the result it wrote to ``result_file``; :class:`RecorderError` when it failed or wrote none."""
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump(spec, f)
        spec_path = f.name
    try:
        proc = subprocess.run([*namespace, sys.executable, "-m", module, INSIDE_FLAG, spec_path],
                              capture_output=True, text=True, timeout=timeout)
    finally:
        os.unlink(spec_path)
    if proc.returncode != 0 or not result_file.exists():
        raise RecorderError(f"recording {spec['scenario']['name']} failed (exit {proc.returncode}): "
                            f"{(proc.stderr or proc.stdout).strip()[-1200:]}")
    result: dict[str, Any] = json.loads(result_file.read_text())
    return result


def _private_home(keep: list[str]) -> Path | None:
    """With a private mount namespace: a tmpfs on /home, so the session runs in /home/user/project with
    CODEX_HOME=/home/user/.codex and no path of the recording machine gets into the recording. Not when
    a path the run needs (``keep``: the output folder, Codex, this Python) lives under /home: the tmpfs
    would hide it."""
    if not shutil.which("mount") or any(Path(p).resolve().is_relative_to("/home") for p in keep):
        return None
    proc = subprocess.run(["mount", "-t", "tmpfs", "tmpfs", "/home"], capture_output=True, text=True)
    return Path("/home/user") if proc.returncode == 0 else None


def make_workspace(keep: list[str], prefix: str, config_name: str) -> tuple[Path, Path, Path, Path]:
    """``(work, home, config, project)`` of one recording: the private ``/home/user`` when a mount namespace
    allows one, else a temporary folder; the agent's configuration folder ``home/config_name`` and a
    project holding the files every scenario starts from (``hello.txt``, a ``calc.py`` whose ``add``
    subtracts)."""
    private = _private_home(keep)
    work = private or Path(tempfile.mkdtemp(prefix=prefix))
    home = work if private else work / "home"
    config, project = home / config_name, work / "project"
    for d in (config, project):
        d.mkdir(parents=True)
    (project / "hello.txt").write_text("hello world\n")
    (project / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    return work, home, config, project


def _inside(spec_path: str) -> int:
    """Runs in the namespace: isolate, serve the scenario, run Codex, keep what it wrote."""
    from corpus_tools.record.mock_server import MockServer

    spec = json.loads(Path(spec_path).read_text())
    assert_isolated()
    sc = spec["scenario"]
    name, out = sc["name"], Path(spec["out"])
    work, home, codex_home, project = make_workspace([spec["out"], spec["codex"], sys.executable, str(HERE)],
                                                     "codex-rec-", ".codex")
    mock_dir = out / f"{name}.mock"
    shutil.rmtree(mock_dir, ignore_errors=True)
    with MockServer(sc["steps"], log_dir=mock_dir) as srv:
        config = BASE_CONFIG.read_text().replace("PORT", str(srv.port)) + spec.get("extra_config", "")
        (codex_home / "config.toml").write_text(config)
        env = {"PATH": spec["path"], "HOME": str(home), "CODEX_HOME": str(codex_home), "MOCK_API_KEY": "dummy",
               "LANG": "C.UTF-8", "TERM": "dumb"}
        with open(out / f"{name}.exec.jsonl", "w") as stdout, open(out / f"{name}.exec.stderr", "w") as stderr:
            try:
                proc = subprocess.run(
                    [spec["codex"], "exec", "--json", "--skip-git-repo-check", *sc["args"], sc["prompt"]],
                    cwd=project, env=env, stdin=subprocess.DEVNULL, stdout=stdout, stderr=stderr,
                    timeout=spec["timeout"],
                )
                rc: int | str = proc.returncode
            except subprocess.TimeoutExpired:
                rc = "timeout"
        served = list(srv.served)
    rollouts = sorted(codex_home.glob("sessions/**/rollout-*.json*"), key=lambda p: p.stat().st_mtime)
    result: dict[str, Any] = {"scenario": name, "version": spec["version"], "codex_exit": rc, "steps_served": served,
                              "cwd": str(project),
                              "rollout": None}
    if rollouts:
        last = rollouts[-1]
        suffix = ".rollout.jsonl" if last.name.endswith(".jsonl") else ".rollout.json"
        shutil.copyfile(last, out / f"{name}{suffix}")
        rel = last.relative_to(codex_home).as_posix()
        (out / f"{name}.rollout.path").write_text(rel + "\n")
        result["rollout"] = f"{name}{suffix}"
    (out / f"{name}.result.json").write_text(json.dumps(result, indent=1) + "\n")
    shutil.rmtree(work, ignore_errors=True)
    return 0


def record_each(record_one: Callable[..., dict[str, Any]], scenarios: list[Any], out: Path, **options: Any) -> int:
    """Record each scenario, one JSON line of its result on stdout; 3 (and why, on stderr) as soon as the
    recorder refuses, for example when no isolated network namespace can be made."""
    try:
        for scenario in scenarios:
            print(json.dumps(record_one(scenario, out, **options)))
    except RecorderError as exc:
        print(f"recorder: {exc}", file=sys.stderr)
        return 3
    return 0


def inside_entry(inside: Callable[[str], int], argv: list[str]) -> int | None:
    """The exit status of the re-executed child (``MODULE --inside-netns SPEC``, run in the namespace), or
    None when ``argv`` is not that call."""
    if len(argv) != 3 or argv[1] != INSIDE_FLAG:
        return None
    try:
        return inside(argv[2])
    except RecorderError as exc:
        sys.stderr.write(f"recorder: {exc}\n")
        return 3


if __name__ == "__main__":
    status = inside_entry(_inside, sys.argv)
    if status is None:
        sys.stderr.write("internal entry point; use `python -m corpus_tools.record`\n")
        status = 2
    sys.exit(status)
