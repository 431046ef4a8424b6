"""The tools as plain functions (no MCP types): validate, open by descriptor, call one library function,
render with the library's one JSON definition, bound the text. :func:`call_tool` is the whole behaviour of
the server without the protocol; the protocol shells (:mod:`.stdio`, :mod:`.sdk`) run it in a worker
thread with the call's time budget, and :mod:`.agent_code` reshapes its answers for the origin's wire.
"""

from __future__ import annotations

import errno
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from transcript_reader.errors import TranscriptError
from transcript_reader.mcp import budget
from transcript_reader.mcp.args import (
    ARG_MODELS,
    SEARCH_KINDS,
    AnalyzeArgs,
    InspectArgs,
    ListSessionsArgs,
    ReadArgs,
    SearchArgs,
    UsageArgs,
    parse,
    read_selection,
)
from transcript_reader.mcp.names import (
    ENVELOPE_CHARS,
    INSPECT_CHARS,
    MAX_SCRIPT_CHARS,
    WIRE_AGENT_CODE,
    ErrorCode,
    ToolFailure,
    ToolName,
)
from transcript_reader.mcp.policy import ServerConfig, listed_sessions, open_argument
from transcript_reader.reading.source import Descriptor

#: A sniff of the file head (only on the error path) decides provider_detection_failed vs
#: unsupported_format; never echoed.
SNIFF_BYTES = 64 * 1024

#: A type name of an undecoded line is shown only when it looks like one (Codex's are short lower-case
#: tokens: ``session_meta``, ``event_msg``); anything else (``{"type":"sk-live-…"}``) is counted under
#: UNDECODED, never echoed.
_TYPE_NAME = re.compile(r"[a-z][a-z0-9_./-]{0,39}\Z")
UNDECODED = "(not a type name)"


@dataclass(frozen=True, slots=True)
class Answer:
    """A tool's success: the JSON payload and its serialized text (already bounded)."""

    payload: dict[str, Any]
    text: str


@dataclass(slots=True)
class CallState:
    """What lives for the server's life and is shared by calls (nothing today: a listing's rows come
    from the session store, read afresh by each call)."""

    cache: Any = None


_PLACEHOLDER = re.compile(r"\([a-z ]{1,30}\)\Z")  # the reader's own "(other types)" row


def looks_like_type_name(name: str) -> bool:
    """A short lower-case token with few digits (a key or a token has many), or the reader's own
    placeholder row."""
    if _PLACEHOLDER.match(name):
        return True
    return bool(_TYPE_NAME.match(name)) and sum(c.isdigit() for c in name) <= 3


def clean_type_tables(value: Any) -> Any:
    """Every ``unknown_types``/``noise_types`` table under ``value`` with its non-type-name keys folded
    into :data:`UNDECODED` (in place; returns ``value``)."""
    if isinstance(value, dict):
        for key, sub in value.items():
            if key in ("unknown_types", "noise_types") and isinstance(sub, dict):
                folded: dict[str, int] = {}
                for name, count in sub.items():
                    shown = name if looks_like_type_name(str(name)) else UNDECODED
                    folded[shown] = folded.get(shown, 0) + int(count)
                value[key] = folded
            else:
                clean_type_tables(sub)
    elif isinstance(value, list):
        for sub in value:
            clean_type_tables(sub)
    return value


def _looks_like_json_records(source: Descriptor) -> bool:
    """True when the file's first non-blank line (or the head, for one JSON document) starts a JSON
    object: some agent's transcript, just not one we know. Reads at most SNIFF_BYTES; never echoed."""
    import orjson

    try:
        head = os.pread(source.fd, SNIFF_BYTES, 0)
    except OSError:
        return False
    for line in head.splitlines():
        if not line.strip():
            continue
        try:
            return isinstance(orjson.loads(line), dict)
        except orjson.JSONDecodeError:
            return line.strip() == b"{"  # a pretty-printed JSON document opens with a lone "{"
    return False


def provider_of(source: Descriptor, wanted: str) -> str:
    """The provider that reads ``source`` (detected from the file). An explicit ``wanted`` that is not the
    file's provider is refused: reading a Codex rollout as Claude Code (or the reverse) would answer with
    nothing true, so it is a typed error, never an empty success."""
    from transcript_reader.providers import detect

    found = detect(source)[0].name
    if wanted != "auto" and found != wanted:
        labels = {"codex": "Codex", "claude": "Claude Code"}
        raise ToolFailure(ErrorCode.PROVIDER_MISMATCH, f"{source.display}: a {labels.get(found, found)} transcript, "
                          f"not a {labels.get(wanted, wanted)} one (pass provider \"auto\" or \"{found}\")")
    return found


def library_failure(exc: BaseException, source: Descriptor | None, provider: str) -> ToolFailure:
    """Turn what the library raised into a stable code. Messages name the path as the caller gave it and
    the library's reason (the reader's errors never quote undecoded content), on one line."""
    shown = source.display if source is not None else None
    if isinstance(exc, TranscriptError):
        code = exc.code
        if code == ErrorCode.UNSUPPORTED_FORMAT:
            if provider == "auto" and source is not None and _looks_like_json_records(source):
                return ToolFailure(
                    ErrorCode.PROVIDER_DETECTION_FAILED,
                    f"{shown}: JSON records, but no known Codex or Claude Code format",
                )
            which = {"codex": "Codex", "claude": "Claude Code"}.get(provider, "Codex or Claude Code")
            return ToolFailure(code, f"{shown}: not a {which} transcript in any known format")
        if code == "decode_error":
            return ToolFailure(ErrorCode.UNSUPPORTED_FORMAT, f"{shown}: a line does not decode")
        if code == ErrorCode.TIMEOUT:
            return ToolFailure(code, f"{shown or 'the call'}: over the server's time budget; narrow the call "
                               "(a projection, tail, a cwd or since filter) or raise --call-timeout")
        return ToolFailure(code, f"{shown}: {exc.reason}" if shown else exc.reason)
    if isinstance(exc, OSError):
        mapping = {errno.ENOENT: ErrorCode.FILE_NOT_FOUND, errno.EACCES: ErrorCode.PERMISSION_DENIED,
                   errno.EPERM: ErrorCode.PERMISSION_DENIED, errno.EISDIR: ErrorCode.NOT_A_FILE}
        return ToolFailure(mapping.get(exc.errno or 0, ErrorCode.NOT_A_FILE), f"{shown}: {exc.strerror or 'I/O error'}")
    raise exc


def _window(args: ReadArgs, wire: str, keep_newest: bool) -> tuple[int | None, int]:
    """(tail, max_items) for the library. The origin's wire keeps the first maxItems of the last tail
    items (peers.md §1.5); ours keeps the newest: the last maxItems of them, and a handoff read without a
    tail is the newest maxItems items."""
    if wire == WIRE_AGENT_CODE:
        return args.tail, args.max_items
    if args.tail is not None:
        return min(args.tail, args.max_items), args.max_items
    return (args.max_items if keep_newest else None), args.max_items


def run_read(args: ReadArgs, config: ServerConfig, state: CallState) -> Answer:
    from transcript_reader import api
    from transcript_reader.projections import render

    agent = config.wire == WIRE_AGENT_CODE
    # the origin's handoff is its timeline (peers.md §1.2); ours is the session's shape, newest kept
    projection = "timeline" if agent and args.projection == "handoff" else args.projection
    ours, plus, minus = read_selection(projection, args.include)
    keep_newest = args.projection == "handoff" or args.tail is not None
    tail, max_items = _window(args, config.wire, keep_newest)
    with open_argument(args.path, config, state.cache, deadline=config.deadline()) as source:
        try:
            provider = provider_of(source, args.provider)
            result = api.read(source, projection=ours, include=plus, exclude=minus, tail=tail,
                              max_items=max_items, max_chars_per_item=args.max_chars_per_item)
        except (TranscriptError, OSError) as exc:
            raise library_failure(exc, source, args.provider) from None
    payload = clean_type_tables(render.read_result_to_dict(result))
    payload.update(provider=provider, projection=args.projection)
    if ours != args.projection or plus or minus:
        payload["read_as"] = {"projection": ours, "include": plus, "exclude": minus}
    for item in payload["items"]:
        budget.cut_strings(item, args.max_chars_per_item)
    if agent:  # the origin's windowing and shapes are applied on the whole window (agent_code.reshape)
        return Answer(payload, "")
    stats = payload["stats"]
    items, dropped, compacted = budget.fit_items(payload["items"], args.max_chars, keep_newest=keep_newest)
    payload["items"] = items
    stats["returned_items"] = len(items)
    stats["dropped_items"] = int(stats.get("dropped_items") or 0) + dropped
    stats["compacted_items"] = compacted
    stats["truncated_chars"] = sum(int(i.get("truncated_chars") or 0) for i in items)
    stats["truncated_items"] = sum(1 for i in items if i.get("truncated_chars"))
    # as the origin: cutting an item's text never sets truncated, leaving an item out does
    payload["truncated"] = stats["dropped_items"] > 0
    bounded, text = budget.bound_payload(payload, "items", args.max_chars + ENVELOPE_CHARS, drop_front=keep_newest)
    return Answer(bounded, text)


def run_search(args: SearchArgs, config: ServerConfig, state: CallState) -> Answer:
    from transcript_reader import api
    from transcript_reader.projections import render

    kinds = sorted({SEARCH_KINDS[k] for k in args.kinds or ()})
    with open_argument(args.path, config, state.cache, deadline=config.deadline()) as source:
        try:
            provider = provider_of(source, args.provider)
            result = api.search(
                source, args.query,
                regex=False,  # a caller's regex could backtrack for hours while holding the GIL: substring only
                kinds=kinds, context=args.context_items, max_matches=args.max_matches,
                max_chars_per_match=args.max_chars_per_match,
            )
        except (TranscriptError, OSError) as exc:
            raise library_failure(exc, source, args.provider) from None
    payload = render.search_result_to_dict(result)
    payload["provider"] = provider
    # a match is one item with its context: each group is fitted to an equal share, shape first, so a
    # 20,000-file patch is found and shown by its first files instead of never fitting
    share = max(200, args.max_chars // max(1, len(payload["matches"])))
    for match in payload["matches"]:
        group = [match["item"], *match.get("before", ()), *match.get("after", ())]
        for item in group:
            budget.cut_strings(item, args.max_chars_per_match)
        fitted, _, _ = budget.fit_items(group, min(share, args.max_chars_per_match * len(group)), keep_newest=False)
        if fitted and len(fitted) == len(group):
            nb = len(match.get("before", ()))
            match["item"], match["before"], match["after"] = fitted[0], fitted[1:1 + nb], fitted[1 + nb:]
        elif fitted:
            match["item"], match["before"], match["after"] = fitted[0], [], []
    bounded, text = budget.bound_payload(payload, "matches", args.max_chars + ENVELOPE_CHARS, drop_front=False)
    return Answer(bounded, text)


def run_inspect(args: InspectArgs, config: ServerConfig, state: CallState) -> Answer:
    from transcript_reader import api
    from transcript_reader.projections import render

    with open_argument(args.path, config, state.cache, deadline=config.deadline()) as source:
        try:
            provider = provider_of(source, args.provider)
            info = api.inspect(source)
        except (TranscriptError, OSError) as exc:
            raise library_failure(exc, source, args.provider) from None
    payload = clean_type_tables(render.inspect_to_dict(info))
    payload["provider"] = provider
    # "metadata and stats, no content" (peers.md §1.7): the title is the first prompt, so it stays out.
    payload["info"].pop("title", None)
    text = budget.dumps(payload)
    if len(text) > INSPECT_CHARS:  # e.g. thousands of distinct unknown record types
        payload = {**budget.shrink_envelope(payload), "truncated": True}
        text = budget.dumps(payload)
    return Answer(payload, text)


def _when(value: str | None, *, end_of_day: bool) -> Any:
    from datetime import UTC, datetime, timedelta

    from transcript_reader.sessions.discovery import parse_when

    if not value:
        return None
    when = parse_when(value, now=datetime.now(UTC))
    if end_of_day and len(value.strip()) == 10:  # a bare date: up to the end of that day, as `ls --until`
        when = when + timedelta(days=1) - timedelta(microseconds=1)
    return when


def _row_key(entry: Any) -> str:
    started = entry.started
    return f"{started.timestamp() if started else entry.mtime_ns / 1e9:020.6f}|{entry.path}"


def run_list_sessions(args: ListSessionsArgs, config: ServerConfig, state: CallState) -> Answer:
    """One page of sessions inside the roots. Only files the root policy admits are read at all, so the
    filters (grep and text included) never see a file outside the roots, and nothing about one is
    returned. ``text`` keeps the sessions whose items hold it, each with its first hits
    (:mod:`.session_text`)."""
    from transcript_reader.projections import render
    from transcript_reader.sessions import discovery
    from transcript_reader.sessions.discovery import CwdMatcher

    deadline = config.deadline()
    try:
        since, until = _when(args.since, end_of_day=False), _when(args.until, end_of_day=True)
        entries = listed_sessions(config, state.cache, deadline, archived=args.archived, provider=args.provider)
    except TranscriptError as exc:
        raise library_failure(exc, None, args.provider) from None
    matcher = CwdMatcher(os.path.normpath(args.cwd)) if args.cwd else None
    groups: list[list[Any]] = []
    for e in entries:
        if e.depth > 0 and groups:
            groups[-1].append(e)
            continue
        t = e.started
        if ((matcher is not None and not matcher(e.head.cwd)) or (since is not None and (t is None or t < since))
                or (until is not None and (t is None or t > until))
                or (args.grep and not discovery._matches_grep(e, args.grep))):
            continue
        if args.cursor and _row_key(e) >= args.cursor:
            continue  # newest first: the page after the cursor holds older rows only
        groups.append([e])
    found = None
    if args.text:
        from transcript_reader.mcp.session_text import match_groups

        found = match_groups(groups, args.text, args.limit, config, args.provider, deadline)
        if not found.searched_all and found.resume < 0:
            raise ToolFailure(ErrorCode.TIMEOUT, "the time budget ran out before one session was searched")
        resume = groups[found.resume][0] if not found.searched_all else None
        groups = found.groups
    page = groups[: args.limit]
    rows: list[dict[str, Any]] = []
    for group in page:
        for e in group:
            row = render.entry_to_dict(e)
            if args.stats:
                row["stats"] = _whole_read_stats(e.path, config, deadline)
            if found is not None and e.path in found.hits:
                row["hits"] = found.hits[e.path]
            rows.append(row)
    payload: dict[str, Any] = {"ok": True, "codex_home": str(config.codex_home), "sessions": rows,
                               "claude_home": str(config.claude_home) if config.claude_home is not None else None,
                               "truncated": len(groups) > args.limit}
    if len(groups) > args.limit:
        payload["next_cursor"] = _row_key(page[-1][0])
    if found is not None:
        # a listing cut by the time budget is no proof that the sessions after it hold no hit
        payload["searched_all"] = found.searched_all
        if found.unreadable:
            payload["unreadable"] = found.unreadable
        if not found.searched_all:
            payload["truncated"] = True
            payload["next_cursor"] = _row_key(resume)
    bounded, text = budget.bound_payload(payload, "sessions", args.max_chars + ENVELOPE_CHARS, drop_front=False)
    if len(bounded["sessions"]) < len(rows) and bounded["sessions"]:
        # the page was cut to fit: the next page starts after the last row shown
        last = next(e for g in page for e in g if e.path == bounded["sessions"][-1]["path"])
        bounded["next_cursor"] = _row_key(last)
        text = budget.dumps(bounded)
    return Answer(bounded, text)


def _whole_read_stats(path: str, config: ServerConfig, deadline: float) -> Any:
    from dataclasses import asdict

    from transcript_reader.mcp.policy import open_verified
    from transcript_reader.sessions.discovery import compute_stats

    try:
        with open_verified(path, path, config, deadline=deadline) as source:
            stats = compute_stats(source)
    except (ToolFailure, TranscriptError, OSError):
        return None
    return budget.shrink_envelope(asdict(stats))


def run_usage(args: UsageArgs, config: ServerConfig, state: CallState) -> Answer:
    """Tokens and cost of the sessions inside the roots (a project's with ``cwd``; one session and its
    sub-agents with ``path``), from the session store where it holds the very file version opened, else
    from the file read through the root policy. The server reads the store, never writes it."""
    from transcript_reader.mcp.policy import homes, is_reference, open_verified, resolve_reference
    from transcript_reader.present.usage import report_json
    from transcript_reader.sessions.discovery import CwdMatcher
    from transcript_reader.sessions.session_homes import sources
    from transcript_reader.sessions.stored import stored_usage
    from transcript_reader.usage import report as R
    from transcript_reader.usage.stored_prices import price_key

    deadline = config.deadline()
    try:
        since, until = _when(args.since, end_of_day=False), _when(args.until, end_of_day=True)
        entries = listed_sessions(config, state.cache, deadline)
    except TranscriptError as exc:
        raise library_failure(exc, None, "codex") from None
    root = None
    if args.path:
        if is_reference(args.path.strip()):
            root = resolve_reference(args.path.strip(), config, state.cache, deadline)
        else:
            with open_argument(args.path, config, state.cache, deadline=deadline) as source:
                here = os.fstat(source.fd)
            root = next((e.path for e in entries if _same(e.path, here)), None)
            if root is None:
                raise ToolFailure(ErrorCode.SESSION_NOT_FOUND, f"{args.path}: not a session of the homes listed")
    elif args.cwd:
        matcher = CwdMatcher(os.path.normpath(args.cwd))
        kept, keep = [], False
        for e in entries:  # a sub-agent goes with its listed parent
            keep = matcher(e.head.cwd) if e.depth == 0 else keep
            if keep:
                kept.append(e)
        entries = kept

    def read(path: str) -> Any:
        from transcript_reader import api

        try:
            with open_verified(path, path, config, deadline=deadline) as source:
                return api.inspect(source).usage or None
        except (ToolFailure, TranscriptError, OSError):
            return None

    stored = stored_usage(sources(config.codex_home, homes(config)), config.store_dir,
                          key=price_key()) if config.store_dir is not None else {}
    spent = R.collect(entries, stored, read)
    by = args.by
    if root is not None:
        spent, by = R.subtree(spent, root), "session"
    spent = R.clip(spent, since.date().isoformat() if since else None, until.date().isoformat() if until else None)
    pricer = R.Pricer()
    payload = report_json(by, R.group(spent, by, pricer), R.total(spent, pricer), since=args.since,
                          until=args.until, project=args.cwd, session=root, truncated=False)
    bounded, text = budget.bound_payload(payload, "rows", 24_000 + ENVELOPE_CHARS, drop_front=False)
    return Answer(bounded, text)


def _same(path: str, st: os.stat_result) -> bool:
    try:
        other = os.stat(path)
    except OSError:
        return False
    return (other.st_dev, other.st_ino) == (st.st_dev, st.st_ino)


def run_analyze(args: AnalyzeArgs, config: ServerConfig, state: CallState) -> Answer:
    from transcript_reader.mcp.worker import analyze_script

    if len(args.script) > MAX_SCRIPT_CHARS:
        raise ToolFailure(ErrorCode.TOO_LARGE, f"script is {len(args.script):,} characters, over the limit of "
                          f"{MAX_SCRIPT_CHARS:,}")
    analysis = analyze_script(args.script, args.parser, config.call_timeout_s)
    payload = {"ok": True, **analysis, "truncated": False}
    limit = args.max_chars + ENVELOPE_CHARS
    text = budget.dumps(payload)
    if len(text) <= limit:
        return Answer(payload, text)
    # Entries (what the script does) outrank calls (how it is written): fit the entries first, then as many
    # calls as still fit.
    entries, _ = budget.bound_payload({**payload, "calls": []}, "entries", limit, drop_front=False)
    merged = {**payload, "entries": entries["entries"], "truncated": True, "dropped": entries.get("dropped", 0)}
    bounded, text = budget.bound_payload(merged, "calls", limit, drop_front=False)
    return Answer(bounded, text)


RUNNERS = {
    ToolName.READ: run_read,
    ToolName.SEARCH: run_search,
    ToolName.INSPECT: run_inspect,
    ToolName.LIST_SESSIONS: run_list_sessions,
    ToolName.ANALYZE: run_analyze,
    ToolName.USAGE: run_usage,
}


def call_tool(name: str, arguments: Mapping[str, Any] | None, config: ServerConfig,
              state: CallState | None = None) -> Answer:
    """Run one tool synchronously in our wire's shapes. Raises only :class:`ToolFailure` (and our own
    bugs); the protocol shells turn both into error results."""
    try:
        tool = ToolName(name)
    except ValueError:
        known = ", ".join(t.value for t in ToolName)
        raise ToolFailure(ErrorCode.INVALID_ARGUMENT, f"unknown tool {name[:100]!r}; tools: {known}") from None
    args = parse(ARG_MODELS[tool], arguments)
    runner: Any = RUNNERS[tool]
    answer: Answer = runner(args, config, state or CallState())
    return answer
