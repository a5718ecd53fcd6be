"""`agentls` command line.

    agentls serve [flags]                     stdio JSON-RPC for editors
    agentls acp [flags]                       Agent Client Protocol agent (Zed, JetBrains, ...)
    agentls setup-local                       install the embedded local model (about 1.1 GB)
    agentls [-p] [PROMPT] [flags]             one turn, the answer on stdout
    agentls --input-format stream-json --output-format stream-json --verbose [flags]
                                              Claude Code's headless dialect (claude-agent-sdk)

Imports stay inside the command that needs them: startup cost is paid only for what runs.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, NoReturn, TextIO

SUBCOMMANDS = ("serve", "acp")
MODES = ["default", "plan", "acceptEdits", "bypassPermissions"]


def common_flags(
    parser: argparse.ArgumentParser, modes: list[str] | tuple[str, ...] = MODES
) -> None:
    from server.providers.thinking import add_thinking_flags

    parser.add_argument(
        "--provider",
        help="anthropic | openai | deepseek | volcengine | qwen | moonshot | openrouter | "
        "ollama | local | scripted",
    )
    parser.add_argument(
        "--model", help="model id, e.g. claude-sonnet-4-6 (local: a known name or a .gguf path)"
    )
    parser.add_argument("--vision-model", help="model for turns with images (same provider)")
    add_thinking_flags(parser)
    parser.add_argument("--base-url", help="provider base URL (a proxy or a compatible server)")
    parser.add_argument("--engine", help="engine id: native | acp | claude-code")
    parser.add_argument(
        "--engine-command", help="command of an external engine, e.g. 'gemini --acp'"
    )
    parser.add_argument("--permission-mode", choices=modes)
    parser.add_argument(
        "--trust",
        action="store_true",
        help="trust the workspace: its config may set a mode and allow rules, its skills grant tools",
    )
    parser.add_argument(
        "--sandbox",
        choices=["workspace-write", "read-only", "off"],
        help="where commands run (default workspace-write where bubblewrap works)",
    )
    parser.add_argument("--turn-timeout", type=float, help="turn deadline in seconds")
    parser.add_argument("--cwd", help="workspace directory (default: the current directory)")


def build_print_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="agentls",
        description="Editor backend for coding agents. `agentls serve` speaks JSON-RPC over "
        "stdio; without a subcommand agentls runs turns in Claude Code's print/stream-json "
        "dialect.",
    )
    parser.add_argument("prompt", nargs="?", help="the prompt (default: read stdin)")
    parser.add_argument("--version", "-v", action="store_true", help="print the version")
    parser.add_argument("-p", "--print", action="store_true", help="run non-interactively")
    parser.add_argument("--output-format", choices=["text", "json", "stream-json"], default="text")
    parser.add_argument("--input-format", choices=["text", "stream-json"], default="text")
    parser.add_argument("--verbose", action="store_true")
    parser.add_argument("--include-partial-messages", action="store_true")
    parser.add_argument("--permission-prompt-tool", help="`stdio`: ask via control requests")
    parser.add_argument("--system-prompt", help="replace the system prompt (empty: default)")
    parser.add_argument("--append-system-prompt", help="text appended to the system prompt")
    parser.add_argument("--max-turns", type=int, help="model calls allowed per turn")
    parser.add_argument(
        "--replay-user-messages",
        nargs="?",
        const="",
        help="stream-json: echo each user message read from stdin (with its uuid) when taken",
    )
    parser.add_argument(
        "--image",
        dest="images",
        action="append",
        default=[],
        metavar="PATH",
        help="attach an image to the prompt (-p) or the first stream-json user message; repeatable",
    )
    parser.add_argument("--session-id", help="use this id for the new session")
    parser.add_argument("--resume", "-r", help="continue the stored session with this id")
    parser.add_argument(
        "--continue",
        "-c",
        dest="continue_",
        action="store_true",
        help="continue the most recent session in this directory",
    )
    parser.add_argument(
        "--allowedTools",
        "--allowed-tools",
        dest="allowed_tools",
        nargs="+",
        action="extend",
        default=[],
        help="tools that run without asking",
    )
    parser.add_argument(
        "--disallowedTools",
        "--disallowed-tools",
        dest="disallowed_tools",
        nargs="+",
        action="extend",
        default=[],
        help="tools removed from the session",
    )
    parser.add_argument(
        "--mcp-config",
        dest="mcp_config",
        nargs="+",
        action="extend",
        default=[],
        help='MCP servers: JSON text or files holding {"mcpServers": {...}}',
    )
    parser.add_argument(
        "--strict-mcp-config",
        action="store_true",
        help="use only the --mcp-config servers, none from config files",
    )
    from server.frontends.streamjson_cli import CLAUDE_MODES, add_flags

    common_flags(parser, CLAUDE_MODES)
    add_flags(parser)
    return parser


def build_serve_parser(command: str = "serve") -> argparse.ArgumentParser:
    description = {
        "serve": "JSON-RPC over stdio (LSP framing), or a resident server on a socket.",
        "acp": "An Agent Client Protocol agent over stdio (NDJSON).",
    }[command]
    parser = argparse.ArgumentParser(prog=f"agentls {command}", description=description)
    common_flags(parser)
    if command == "serve":
        parser.add_argument(
            "--listen",
            nargs="?",
            const="",
            metavar="ADDRESS",
            help="serve many clients on unix:PATH (default: this user's socket for the data "
            "dir), tcp://127.0.0.1:PORT or ws://127.0.0.1:PORT",
        )
        parser.add_argument("--token-file", help="the token TCP and WebSocket clients must send")
        parser.add_argument(
            "--new-token",
            metavar="FILE",
            help="write a new random token to FILE (mode 600) for --token-file, and exit",
        )
        parser.add_argument(
            "--idle-timeout",
            type=float,
            help="with --listen: exit after this many seconds without a connection",
        )
        parser.add_argument(
            "--connect",
            nargs="?",
            const="",
            metavar="ADDRESS",
            help="bridge stdio to a resident server (started when none runs at the default "
            "address)",
        )
    return parser


def split_list(values: list[str]) -> list[str]:
    return [v.strip() for value in values for v in value.replace(",", " ").split() if v.strip()]


def flags_from(args: argparse.Namespace) -> dict[str, Any]:
    from server.config import deep_merge
    from server.providers.thinking import thinking_flags

    llm = {
        "provider": args.provider,
        "model": args.model,
        "baseUrl": args.base_url,
        "visionModel": args.vision_model,
    }
    flags: dict[str, Any] = deep_merge(
        {"llm": {k: v for k, v in llm.items() if v}}, thinking_flags(args)
    )
    if args.engine:
        flags["engine"] = args.engine
    if args.engine_command:
        flags["engineCommand"] = args.engine_command
    if args.permission_mode:
        from server.frontends.streamjson_cli import session_mode

        flags["permissions"] = {"mode": session_mode(args.permission_mode)}
    if getattr(args, "trust", False):
        flags["trust"] = True
    if args.turn_timeout:
        flags["turnTimeout"] = args.turn_timeout
    if getattr(args, "sandbox", None):
        flags["sandbox"] = {"mode": args.sandbox}
    for key, attr in (
        ("systemPrompt", "system_prompt"),
        ("appendSystemPrompt", "append_system_prompt"),
        ("maxSteps", "max_turns"),
    ):
        value = getattr(args, attr, None)
        if value:
            flags[key] = value
    if getattr(args, "allowed_tools", None):
        flags.setdefault("permissions", {})["allow"] = split_list(args.allowed_tools)
    if getattr(args, "disallowed_tools", None):
        flags["tools"] = {"disallowed": split_list(args.disallowed_tools)}
    if getattr(args, "mcp_config", None) or getattr(args, "strict_mcp_config", False):
        from server.mcp.config import from_mcp_config

        flags["mcpServers"] = from_mcp_config(args.mcp_config)  # ValueError: unusable value
        if args.strict_mcp_config:
            flags["mcp"] = {"only": sorted(flags["mcpServers"])}
    return flags


def make_service_factory(flags: dict[str, Any]):
    """`factory(channel, environ=None, cwd=None)`: a session service for one client; a listening
    server's connection brings its own environment and working directory."""

    def factory(channel, environ: dict[str, str] | None = None, cwd: str | None = None):
        from server.engines.registry import build_engines
        from server.sessions.service import SessionService
        from server.sessions.setup import open_store

        engines = build_engines(flags, environ=environ)
        store = open_store(engines, environ)
        client_cwd = Path(cwd) if cwd and Path(cwd).is_absolute() else None
        return SessionService(
            engines, channel, flags=flags, store=store, environ=environ, client_cwd=client_cwd
        )

    return factory


def drop_unknown(argv: list[str], stream_input: bool) -> tuple[list[str], list[str]]:
    """Remove flags agentls does not know (with their value, when one follows)."""
    known = {a for action in build_print_parser()._actions for a in action.option_strings}
    kept, dropped = [], []
    i = 0
    while i < len(argv):
        token = argv[i]
        name = token.split("=", 1)[0]
        if token.startswith("--") and name not in known:
            dropped.append(token)
            nxt = argv[i + 1] if i + 1 < len(argv) else None
            if "=" not in token and nxt is not None and not nxt.startswith("-") and stream_input:
                dropped.append(nxt)
                i += 1
        else:
            kept.append(token)
        i += 1
    return kept, dropped


def main(argv: list[str] | None = None) -> int:
    from server import gcpause

    gcpause.pause()
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] in ("sessions", "replay"):
        from server.sessions.cli import main as sessions_main

        return sessions_main(argv)
    if "auth" in argv[:3] and "status" in argv:
        from server.frontends.streamjson_cli import auth_status

        return auth_status(argv)
    if argv and argv[0] == "setup-local":
        from server.frontends.local_setup import main as setup_local

        return setup_local(argv[1:])
    if argv and argv[0] == "serve":
        if any(a == "--connect" or a.startswith("--connect=") for a in argv):
            from server.frontends.connect import main as connect_main  # before heavy imports

            return connect_main(argv[1:])
        # LSP clients add transport flags such as --stdio or --clientProcessId: ignored.
        args, unknown = build_serve_parser().parse_known_args(argv[1:])
        if unknown:
            print(f"agentls: ignoring unknown arguments: {' '.join(unknown)}", file=sys.stderr)
        if args.new_token:
            from server.frontends.principals import new_token

            new_token(Path(args.new_token))
            print(f"agentls: a new token is in {args.new_token}", file=sys.stderr)
            return 0
        if args.listen is not None:
            return serve_listening(args)
        from server.frontends.jsonrpc import run_stdio
        from server.logs import setup_logging

        setup_logging("serve")
        return on_signals(lambda: run_stdio(make_service_factory(flags_from(args))))
    if argv and argv[0] == "acp":
        args = build_serve_parser("acp").parse_args(argv[1:])
        from server.frontends.acp import run_acp
        from server.logs import setup_logging

        setup_logging("acp")
        return on_signals(lambda: run_acp(make_service_factory(flags_from(args))))
    return print_mode(argv)


def serve_listening(args: argparse.Namespace) -> int:
    from server.frontends.address import AddressError, default_address, parse
    from server.frontends.listen import run_listen
    from server.frontends.principals import attach_policy, read_long_token
    from server.logs import setup_logging

    try:
        address = parse(args.listen) if args.listen else default_address(os.environ)
        token = read_long_token(args.token_file) if args.token_file else None
        base = flags_from(args)
        policy = attach_policy(token, base, attach_flags)
    except (AddressError, ValueError) as exc:
        print(f"agentls: {exc}", file=sys.stderr)
        return 1
    setup_logging("serve")
    private = not args.listen or (address.path is not None and address.path.parent == runtime_dir())
    return on_signals(
        lambda: run_listen(
            address,
            connection_services(base),
            policy=policy,
            idle_timeout=args.idle_timeout,
            private_dir=private,
            print_door=print_runs(base),
        )
    )


def runtime_dir() -> Path:
    from server.frontends.address import runtime_dir as of

    return of(os.environ)


def connection_services(base: dict[str, Any]):
    """A listening server's connection: its serve flags over the server's, its environment."""
    from server.config import deep_merge

    def service_for(attach):
        argv = list(attach.argv or [])
        try:
            args, _ = build_serve_parser().parse_known_args(argv)
        except SystemExit:  # argparse said why on this server's stderr
            raise ValueError(f"unusable serve flags: {' '.join(argv)}") from None
        factory = make_service_factory(deep_merge(base, flags_from(args)))
        return lambda channel: factory(channel, attach.env, attach.cwd)

    return service_for


def attach_flags(attach) -> dict[str, Any] | None:
    """A connection's flags as config (either door); None when they do not parse."""
    argv = list(attach.argv or [])
    try:
        if attach.door == "print":
            kept, _ = drop_unknown(argv, "stream-json" in argv)
            args, _ = build_print_parser().parse_known_args(kept)
        else:
            args, _ = build_serve_parser().parse_known_args(argv)
        return flags_from(args)
    except (SystemExit, ValueError):
        return None


def print_runs(base: dict[str, Any]):
    """A listening server's `-p` / stream-json runs: the connection's flags, environment and
    working directory, its stdin, stdout and stderr."""
    import contextlib

    from server.config import deep_merge

    async def run_one(attach, run) -> int:
        cwd = Path(attach.cwd) if attach.cwd and Path(attach.cwd).is_absolute() else Path.home()
        environ = attach.env if attach.env is not None else dict(os.environ)
        with contextlib.redirect_stderr(run.stderr):
            try:
                prepared = prepare_print(
                    list(attach.argv or []), cwd=cwd, environ=environ, out=run.stdout_text
                )
            except SystemExit as exc:  # argparse said why
                return exit_code(exc.code)
        if isinstance(prepared, int):
            return prepared
        options, flags, parser = prepared
        if options.input_format == "text" and options.prompt is None:
            options.prompt = (await run.read_all()).decode("utf-8", "replace")
            if not options.prompt.strip():
                parser.print_help(run.stderr)
                return 2
        from server.frontends.streamjson import StreamJsonDoor

        factory = make_service_factory(deep_merge(base, flags))
        door = StreamJsonDoor(
            options,
            lambda channel: factory(channel, attach.env, str(cwd)),
            run.stdout,
            stderr=run.stderr,
        )
        return await door.run(run, run.signals())

    return run_one


def print_mode(argv: list[str]) -> int:
    target = connect_target(argv)
    if target is not None:
        from server.frontends.connect import main_print

        return main_print(argv, target)
    prepared = prepare_print(argv, cwd=Path.cwd(), environ=os.environ, out=sys.stdout)
    if isinstance(prepared, int):
        return prepared
    options, flags, parser = prepared
    if options.input_format == "text" and options.prompt is None:
        if sys.stdin.isatty():
            parser.print_help(sys.stderr)
            return 2
        options.prompt = sys.stdin.read()
    from server.frontends.streamjson import run_streamjson
    from server.logs import setup_logging

    setup_logging("print")
    return on_signals(lambda: run_streamjson(options, make_service_factory(flags)))


def prepare_print(
    argv: list[str], *, cwd: Path, environ: Mapping[str, str], out: TextIO
) -> tuple[Any, dict[str, Any], argparse.ArgumentParser] | int:
    """The run `-p` / stream-json flags ask for (its prompt None when it is to be read from
    stdin), or the exit code after saying why not (on stderr; `--version` on `out`)."""
    stream_input = "stream-json" in argv
    argv, dropped = drop_unknown(argv, stream_input)
    parser = build_print_parser()
    args = parser.parse_args(argv)
    if dropped:
        print(f"agentls: ignoring unknown arguments: {' '.join(dropped)}", file=sys.stderr)
    if args.version:
        from server import __version__

        print(f"agentls {__version__}", file=out)
        return 0
    if args.output_format == "stream-json" and not args.verbose:
        print("agentls: --output-format=stream-json requires --verbose", file=sys.stderr)
        return 1
    cwd = (cwd / args.cwd).resolve() if args.cwd else cwd
    from server.frontends.streamjson_cli import flags as claude_flags
    from server.frontends.streamjson_cli import warnings

    try:
        flags = claude_flags(args, cwd, flags_from(args))
    except ValueError as exc:
        print(f"agentls: {exc}", file=sys.stderr)
        return 1
    try:
        images = attached_images(args.images, cwd)
    except ValueError as exc:
        print(f"agentls: {exc}", file=sys.stderr)
        return 1
    from server.frontends.streamjson import StreamJsonOptions

    options = StreamJsonOptions(
        prompt=args.prompt,
        input_format=args.input_format,
        output_format=args.output_format,
        partial=args.include_partial_messages,
        permission_tool=args.permission_prompt_tool,
        session_id=args.session_id,
        cwd=cwd,
        images=images,
        mode=args.permission_mode,
        model=args.model,
        resume=args.resume,
        continue_session=args.continue_,
        replay_user=args.replay_user_messages is not None,
        state_events=environ.get("CLAUDE_CODE_EMIT_SESSION_STATE_EVENTS", "") not in ("", "0"),
        notes=warnings(args, dropped),
    )
    return options, flags, parser


def connect_target(argv: list[str]) -> str | None:
    """The resident server `-p` / stream-json attach to: `--connect [ADDRESS]`, or the user
    config's `server.connect` (an address, or true for the default one); None: run here."""
    if any(a == "--connect" or a.startswith("--connect=") for a in argv):
        return ""
    from server.config import ConfigError, read_json_file, user_config_path

    try:
        section = read_json_file(user_config_path()).get("server")
    except ConfigError:
        return None  # the run here says what is wrong with the config
    value = section.get("connect") if isinstance(section, dict) else None
    if value is True:
        return ""
    return value if isinstance(value, str) and value else None


def attached_images(paths: list[str], cwd: Path) -> list[dict[str, Any]]:
    """`--image` files as prompt image blocks; ValueError names a file that cannot be used."""
    if not paths:
        return []
    from server.providers.images import ImageError, load

    blocks = []
    for path in paths:
        try:
            part = load(cwd / Path(path).expanduser())
        except ImageError as exc:
            raise ValueError(str(exc)) from exc
        mime, data = part.data_url.removeprefix("data:").split(";base64,", 1)
        blocks.append({"type": "image", "data": data, "mimeType": mime})
    return blocks


def on_signals(run: Callable[[], int]) -> int:
    """Run a door so that SIGINT, SIGTERM and SIGHUP end it: once its event loop runs, the door
    handles them itself (running turns end `aborted`, stored, their commands' process groups
    killed); before that they stop the start. The process exits 128 + the signal number (130,
    143, 129). SIGUSR1 writes the process's thread and task stacks to stderr and goes on."""
    received: list[int] = []

    def forward(signum: int, frame: Any) -> None:
        received.append(signum)
        raise KeyboardInterrupt

    for name in ("SIGTERM", "SIGHUP"):
        if hasattr(signal, name):
            signal.signal(getattr(signal, name), forward)
    if hasattr(signal, "SIGUSR1"):
        from server.logs import dump_stacks

        signal.signal(signal.SIGUSR1, dump_stacks)
    code = run()
    if received:
        return 128 + received[0]
    return code


def entry() -> NoReturn:
    """The `agentls` command: `main`, then leave at once."""
    try:
        code = main()
    except SystemExit as exc:
        code = exit_code(exc.code)
    exit_promptly(code)


def exit_code(code: object) -> int:
    """`SystemExit`'s code as the interpreter would turn it into an exit status."""
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    print(code, file=sys.stderr)
    return 1


def exit_promptly(code: int) -> NoReturn:
    """Exit without tearing the interpreter down. By now every door has closed its sessions
    (their commands and MCP servers stopped) and the store is flushed; what is left is freeing
    thousands of modules and objects one by one, which took longer than a short answer."""
    import logging

    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass  # a closed pipe: nothing more can reach it anyway
    logging.shutdown()
    os._exit(code)


if __name__ == "__main__":
    entry()
