"""``store``: the session store of each home: what it holds (``status``), bring it in step or build it
again from the files (``refresh``, ``rebuild``), and export its tables as Parquet (``export``)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import click

from transcript_reader.cli._common import cache_dir, fail, fast_json, guard, homes, provider_option
from transcript_reader.errors import TranscriptError


def _stores(provider: str) -> list[Any]:
    from transcript_reader.sessions.store import open_store

    return [open_store(home, cache_dir=cache_dir(), provider=name, notice=lambda t: click.echo(t, err=True))
            for name, home in homes(provider).items() if home.is_dir()]


def _refresh(store: Any) -> Any:
    from transcript_reader.cli.output import ProgressLine
    from transcript_reader.sessions.store import refresh

    bar = ProgressLine(f"indexing {store.home}")
    try:
        return refresh(store, workers=os.cpu_count() or 1, progress=bar.update, lock_wait=30.0)
    finally:
        bar.clear()


@click.group("store")
def store_cmd() -> None:
    """The session store: every session read once, kept in step with the files (see docs/store.md)."""


@store_cmd.command("status")
@provider_option
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@guard()
def status_cmd(provider: str, as_json: bool) -> None:
    """Where each home's store is, and how many sessions and items it holds."""
    rows = []
    for store in _stores(provider):
        con = store.reader()
        row: dict[str, Any] = {"home": str(store.home), "store": str(store.path), "exists": con is not None}
        if con is not None:
            row["sessions"] = con.execute("SELECT count(*) FROM sessions").fetchone()[0]
            row["items"] = con.execute("SELECT count(*) FROM items").fetchone()[0]
            row["bytes"] = sum(p.stat().st_size for p in store.path.parent.glob(store.path.name + "*"))
        store.close()
        rows.append(row)
    if as_json:
        click.echo(fast_json({"ok": True, "stores": rows}))
        return
    for r in rows:
        if r["exists"]:
            click.echo(f"{r['home']}: {r['sessions']} sessions, {r['items']} items, "
                       f"{r['bytes'] / 1e6:.1f} MB in {r['store']}")
        else:
            click.echo(f"{r['home']}: no store yet ({r['store']}); `transcript-reader store refresh` builds it")


@store_cmd.command("refresh")
@provider_option
@guard(None)
def refresh_cmd(provider: str) -> None:
    """Bring each home's store in step with its files (``ls`` does this by itself)."""
    for store in _stores(provider):
        st = _refresh(store)
        click.echo(f"{store.home}: {st.read} read, {st.removed} removed, {st.unchanged} unchanged"
                   + (f", {len(st.pending)} not stored" if st.pending else "") + f" ({st.seconds:.1f} s)")


@store_cmd.command("rebuild")
@provider_option
@guard(None)
def rebuild_cmd(provider: str) -> None:
    """Delete each home's store and build it again from the files."""
    for store in _stores(provider):
        for p in (store.path, *(store.path.with_name(store.path.name + s) for s in ("-wal", "-shm"))):
            if p.exists():
                p.unlink()
        st = _refresh(store)
        click.echo(f"{store.home}: {st.read} sessions read ({st.seconds:.1f} s)")


@store_cmd.command("export")
@click.option("--parquet", "out_dir", required=True, type=click.Path(file_okay=False, path_type=Path),
              help="Write sessions.parquet and items.parquet here (one subdirectory per home).")
@click.option("--no-refresh", is_flag=True, help="Export the store as it is (no refresh first).")
@provider_option
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@guard()
def export_cmd(out_dir: Path, no_refresh: bool, provider: str, as_json: bool) -> None:
    """Export the stores' session and item tables as Parquet (needs the `rows` extra: pyarrow)."""
    from transcript_reader.sessions.store_export import export_parquet

    written: dict[str, Any] = {}
    try:
        stores = _stores(provider)
        for store in stores:
            if not no_refresh:
                _refresh(store)
            con = store.reader()
            if con is None:
                raise TranscriptError(f"no session store for {store.home}: `transcript-reader store refresh`")
            where = out_dir / store.provider if len(stores) > 1 else out_dir
            done = export_parquet(con, where)
            store.close()
            written[str(store.home)] = {t: {"path": str(p), "rows": n} for t, (p, n) in done.items()}
    except TranscriptError as e:
        fail(e, as_json=as_json)
    if as_json:
        click.echo(fast_json({"ok": True, "exported": written}))
        return
    for home, tables in written.items():
        for t, info in tables.items():
            click.echo(f"{home}: {t}: {info['rows']} rows -> {info['path']}")
