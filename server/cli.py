"""`agentls` command line: `serve` (stdio JSON-RPC), `-p PROMPT` (one-shot), `--version`.

Imports stay inside the command that needs them: startup cost is paid only for what runs.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="agentls",
        description="Editor backend for coding agents (JSON-RPC over stdio).",
    )
    parser.add_argument("command", nargs="?", choices=["serve"], help="serve: stdio JSON-RPC")
    parser.add_argument("--version", action="store_true", help="print the version and exit")
    parser.add_argument(
        "-p",
        "--print",
        dest="prompt",
        metavar="PROMPT",
        help="run one turn in the current directory and print the answer",
    )
    parser.add_argument("--provider", help="anthropic | openai | scripted")
    parser.add_argument("--model", help="model id, e.g. claude-sonnet-4-6")
    parser.add_argument("--base-url", help="provider base URL (a proxy or a compatible server)")
    parser.add_argument("--engine", help="engine id (native)")
    parser.add_argument(
        "--permission-mode", choices=["default", "plan", "acceptEdits", "bypassPermissions"]
    )
    parser.add_argument("--turn-timeout", type=float, help="turn deadline in seconds")
    parser.add_argument("--cwd", help="workspace directory for -p (default: current directory)")
    return parser


def flags_from(args: argparse.Namespace) -> dict[str, Any]:
    llm = {"provider": args.provider, "model": args.model, "baseUrl": args.base_url}
    flags: dict[str, Any] = {"llm": {k: v for k, v in llm.items() if v}}
    if args.engine:
        flags["engine"] = args.engine
    if args.permission_mode:
        flags["permissions"] = {"mode": args.permission_mode}
    if args.turn_timeout:
        flags["turnTimeout"] = args.turn_timeout
    return flags


def make_service_factory(flags: dict[str, Any]):
    def factory(channel):
        from server.engines.native import NativeEngine
        from server.sessions.service import SessionService

        return SessionService({"native": NativeEngine()}, channel, flags=flags)

    return factory


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args, unknown = parser.parse_known_args(argv)
    if unknown:
        print(f"agentls: ignoring unknown arguments: {' '.join(unknown)}", file=sys.stderr)
    if args.version:
        from server import __version__

        print(f"agentls {__version__}")
        return 0
    flags = flags_from(args)
    if args.prompt is not None:
        from server.oneshot import run_oneshot

        return run_oneshot(args.prompt, cwd=args.cwd, factory=make_service_factory(flags))
    if args.command == "serve":
        from server.frontends.jsonrpc import run_stdio
        from server.logs import setup_logging

        setup_logging("serve")
        return run_stdio(make_service_factory(flags))
    parser.print_help(sys.stderr)
    return 2


if __name__ == "__main__":
    raise SystemExit(main())
