"""`agentls sessions list|show|search|export` and `agentls replay`, for people at a terminal.

    agentls sessions list [--cwd DIR] [--limit N] [--json]
    agentls sessions show ID [--json]
    agentls sessions search QUERY [--limit N] [--json]
    agentls sessions export ID [-o FILE]          the session's trace as JSONL
    agentls replay TRACE [--turn ID] [--verify] [--case FILE] [--recorded-effects]
                   [--workspace DIR] [--keep] [--json]

TRACE is an exported JSONL file, a stored session id (its last turn) or a turn id.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any, TextIO, assert_never, cast

from protocol.updates import UPDATE_KINDS, UpdateKind
from server.sessions.store import JournalEntry, SessionRecord, Store
from server.sessions.traces import TraceError, export_lines
from server.timestamps import iso


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="agentls", description="Stored sessions and replay.")
    commands = parser.add_subparsers(dest="command", required=True)
    sessions = commands.add_parser("sessions", help="stored sessions").add_subparsers(
        dest="action", required=True
    )
    listing = sessions.add_parser("list", help="sessions, newest first")
    listing.add_argument("--cwd", help="only sessions of this workspace")
    listing.add_argument("--limit", type=int, default=20)
    show = sessions.add_parser("show", help="one session as the user saw it")
    show.add_argument("id")
    find = sessions.add_parser("search", help="full-text search over all sessions")
    find.add_argument("query")
    find.add_argument("--limit", type=int, default=20)
    export = sessions.add_parser("export", help="a session's full trace as JSONL")
    export.add_argument("id")
    export.add_argument("-o", "--output", help="write to this file instead of stdout")
    collect = sessions.add_parser(
        "gc", help="remove checkpoint contents no session can restore any more"
    )
    collect.add_argument(
        "--older-than",
        type=float,
        metavar="DAYS",
        help="also forget the checkpoints of sessions untouched for this many days",
    )
    replay = commands.add_parser("replay", help="re-run a recorded turn offline")
    replay.add_argument("trace", help="a JSONL export, a session id or a turn id")
    replay.add_argument("--turn", help="the turn to replay (default: the trace's last)")
    replay.add_argument("--verify", action="store_true", help="check the replay's facts")
    replay.add_argument("--workspace", help="copy this directory instead of the recorded one")
    replay.add_argument("--keep", action="store_true", help="keep the scratch workspace")
    replay.add_argument(
        "--case", metavar="FILE", help="declared facts to verify too (JSON); implies --verify"
    )
    replay.add_argument(
        "--recorded-effects",
        action="store_true",
        help="commands, web and MCP calls return their recorded results instead of running",
    )
    for sub in (listing, show, find, replay):
        sub.add_argument("--json", action="store_true", help="machine-readable output")
    return parser


def main(argv: list[str]) -> int:
    args = build_parser().parse_args(argv)
    store = Store.open_default()
    try:
        if args.command == "replay":
            return replay_command(args, store)
        action = {
            "list": list_command,
            "show": show_command,
            "search": search_command,
            "gc": gc_command,
        }
        return action.get(args.action, export_command)(args, store)
    except (TraceError, LookupError, ValueError) as exc:
        print(f"agentls: {exc}", file=sys.stderr)
        return 2
    finally:
        store.close()


def list_command(args: argparse.Namespace, store: Store, out: TextIO = sys.stdout) -> int:
    cwd = str(Path(args.cwd).resolve()) if args.cwd else None
    records, _ = store.list_sessions(cwd, None, args.limit)
    if args.json:
        print(json.dumps({"data": [_summary(r) for r in records]}, ensure_ascii=False), file=out)
        return 0
    if not records:
        print("no stored sessions", file=out)
    for r in records:
        print(f"{r.id}  {_local(r.updated_at)}  {r.title}  ({r.cwd})", file=out)
    return 0


def show_command(args: argparse.Namespace, store: Store, out: TextIO = sys.stdout) -> int:
    record = store.session(args.id)
    if record is None:
        raise LookupError(f"no stored session {args.id!r}")
    turns, journal = store.turns(args.id), store.journal(args.id)
    if args.json:
        data = {
            "session": {**_summary(record), "engine": record.engine, "state": record.state},
            "turns": [vars(t) for t in turns],
            "journal": [{"turnId": e.turn_id, "role": e.role, **e.update} for e in journal],
        }
        print(json.dumps(data, ensure_ascii=False), file=out)
        return 0
    state = record.state
    print(f"{record.id}  {record.title}", file=out)
    print(f"  workspace  {record.cwd}", file=out)
    model = f"{state.get('provider', '?')}/{state.get('model', '?')}"
    print(f"  engine     {record.engine}, {model}, mode {state.get('mode', '?')}", file=out)
    print(f"  created    {_local(record.created_at)}", file=out)
    print(f"  updated    {_local(record.updated_at)}", file=out)
    print(f"  turns      {len(turns)}", file=out)
    turn_id, titles = None, dict[str, str]()
    for entry in journal:
        if entry.turn_id != turn_id:
            turn_id = entry.turn_id
            print(f"\n── {turn_id} · {_local(entry.ts)} ──", file=out)
        if entry.update.get("kind") == "tool_call":
            titles[entry.update.get("toolCallId", "")] = entry.update.get("title", "")
        print(render_entry(entry, titles), file=out)
    return 0


def search_command(args: argparse.Namespace, store: Store, out: TextIO = sys.stdout) -> int:
    hits = store.search(args.query, args.limit)
    if args.json:
        data = [
            {
                "sessionId": h.session_id,
                "title": h.title,
                "role": h.role,
                "snippet": h.snippet,
                "timestamp": iso(h.ts),
            }
            for h in hits
        ]
        print(json.dumps({"hits": data}, ensure_ascii=False), file=out)
        return 0
    if not hits:
        print("no matches", file=out)
    for h in hits:
        snippet = " ".join(h.snippet.split())
        print(f"{h.session_id}  {_local(h.ts)}  {h.title}\n  {h.role}: {snippet}", file=out)
    return 0


def export_command(args: argparse.Namespace, store: Store, out: TextIO = sys.stdout) -> int:
    if store.session(args.id) is None:
        raise LookupError(f"no stored session {args.id!r}")
    lines = (json.dumps(line, ensure_ascii=False) + "\n" for line in export_lines(store, args.id))
    if args.output:
        with open(args.output, "w", encoding="utf-8") as f:
            f.writelines(lines)
    else:
        out.writelines(lines)
    return 0


def gc_command(args: argparse.Namespace, store: Store, out: TextIO = sys.stdout) -> int:
    from server.tools.checkpoint_store import collect_garbage

    age = None if args.older_than is None else args.older_than * 86400
    done = collect_garbage(store.path.parent / "checkpoints", older_than_s=age)
    print(
        f"removed {done.objects} object(s) ({done.bytes} bytes) and {done.logs} session log(s)",
        file=out,
    )
    return 0


def replay_command(args: argparse.Namespace, store: Store, out: TextIO = sys.stdout) -> int:
    import anyio

    from server.sessions import traces, verify
    from server.sessions.cases import case_facts, load_case
    from server.sessions.replay import needs_sandbox
    from server.tools.sandbox import probe

    case = load_case(Path(args.case)) if args.case else None
    trace, named_turn = traces.load(args.trace, store)
    turn_id = args.turn or named_turn
    sandbox = probe()
    if not args.recorded_effects and needs_sandbox(trace.turn(turn_id)) and not sandbox.available:
        print(
            "agentls: the turn ran commands, and a replay runs them only in a sandbox, which "
            f"cannot be made here: {sandbox.reason}. --recorded-effects plays their recorded "
            "results instead.",
            file=sys.stderr,
        )
        return 2
    workspace = Path(args.workspace).resolve() if args.workspace else None
    report = anyio.run(
        lambda: verify.replay(
            trace,
            turn_id,
            workspace=workspace,
            check=args.verify or case is not None,
            keep=args.keep,
            recorded_effects=args.recorded_effects,
            more_facts=(lambda ev: case_facts(case, ev)) if case is not None else None,
            store=Store.open_default(),
        )
    )
    if args.json:
        print(json.dumps(report.to_json(), ensure_ascii=False), file=out)
    else:
        print(render_report(report, kept=args.keep), file=out)
    return {"failed": 1, "blocked": 3}.get(report.verdict or "", 0)


def render_entry(entry: JournalEntry, titles: dict[str, str]) -> str:
    """One journal entry as a line or a few; `titles` names tool calls by id."""
    u = entry.update
    kind = u.get("kind")
    if kind not in UPDATE_KINDS:
        return f"  ({kind})"
    match cast(UpdateKind, kind):
        case "user_message_chunk":
            return "\n".join("> " + line for line in u.get("text", "").splitlines() or [""])
        case "agent_message_chunk":
            return u.get("text", "")
        case "agent_thought_chunk":
            return "  (thinking) " + _clip(u.get("text", ""))
        case "tool_call":
            return f"  [{u.get('name')}] {u.get('title')}"
        case "tool_call_update":
            error = f": {_clip(u['error'])}" if u.get("error") else ""
            title = titles.get(u.get("toolCallId", ""), u.get("toolCallId"))
            return f"    {title} -> {u.get('status')}{error}"
        case "plan":
            marks = {"completed": "x", "in_progress": ">", "cancelled": "-"}
            return "\n".join(
                f"  [{marks.get(e.get('status'), ' ')}] {e.get('content')}" for e in u["entries"]
            )
        case "checkpoint":
            return f"  (files kept for rewind: {', '.join(u.get('files', []))})"
        case "turn_end":
            error = f": {u['error']}" if u.get("error") else ""
            return f"── {u.get('terminal')} ({u.get('stopReason')}){error}"
        case (
            "step_finish"
            | "question"
            | "permission"
            | "subagent"
            | "model_switched"
            | "mode_changed"
            | "compaction"
            | "stream_retry"
            | "mcp_status"
            | "workspace_trust"
            | "store_warning"
        ):
            return f"  ({kind})"
        case unknown:
            assert_never(unknown)


def render_report(report: Any, *, kept: bool) -> str:
    lines = [f"replay of {report.turn_id} (session {report.session_id})"]
    where = "kept" if kept else "removed"
    lines.append(f"  workspace copy  {report.workspace} ({where})")
    if report.stored_as:
        lines.append(f"  stored as       {report.stored_as}")
    for side in ("original", "replay"):
        data = getattr(report, side)
        error = f": {data['error']}" if data.get("error") else ""
        lines.append(
            f"  {side:<8} {data['terminal']} ({data['stopReason']}){error}, "
            f"{len(data['toolCalls'])} tool calls"
        )
    for i, call in enumerate(report.replay["toolCalls"], 1):
        lines.append(f"    {i}. {call['name']}  {call['title']}  {call['status']}")
    lines.extend(f"  note: {note}" for note in report.notes)
    if report.facts is None:
        return "\n".join(lines)
    lines.append("verification:")
    marks = {"passed": "PASS", "failed": "FAIL", "blocked": "BLOCK", "n/a": "n/a"}
    for fact in report.facts:
        detail = f": {fact.detail}" if fact.detail else ""
        lines.append(f"  {marks[fact.status]:<5} {fact.description}{detail}")
    failed = [f for f in report.facts if f.status == "failed"]
    blocked = [f for f in report.facts if f.status == "blocked"]
    total = len([f for f in report.facts if f.status != "n/a"])
    if failed:
        lines.append(f"FAILED: {len(failed)} of {total} facts do not hold")
    elif blocked:
        lines.append(f"BLOCKED: {len(blocked)} of {total} facts could not be checked")
    else:
        lines.append("verified: PASS")
    return "\n".join(lines)


def _summary(r: SessionRecord) -> dict[str, Any]:
    return {"sessionId": r.id, "title": r.title, "cwd": r.cwd, "updatedAt": iso(r.updated_at)}


def _local(ts: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(ts))


def _clip(text: str, size: int = 200) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= size else flat[: size - 1] + "…"
