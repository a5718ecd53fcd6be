"""Logging: stderr and a file in the data dir. stdout belongs to the protocol."""

from __future__ import annotations

import logging
import os
import sys
import tempfile
from collections.abc import Mapping
from pathlib import Path


def data_dir(environ: Mapping[str, str] | None = None) -> Path:
    home = (os.environ if environ is None else environ).get("AGENTLS_HOME")
    if home:
        return Path(home)
    from platformdirs import user_data_dir

    return Path(user_data_dir("agentls", appauthor=False))


def runtime_dir(environ: Mapping[str, str]) -> Path:
    """Where this user's sockets and tokens live: $XDG_RUNTIME_DIR/agentls, else a private temp
    dir."""
    base = environ.get("XDG_RUNTIME_DIR")
    if base and Path(base).is_dir():
        return Path(base) / "agentls"
    uid = os.getuid() if hasattr(os, "getuid") else 0
    return Path(tempfile.gettempdir()) / f"agentls-{uid}"


class RedactSecrets(logging.Filter):
    """Keys, tokens and URL credentials never reach a log line (`server.redact`)."""

    def filter(self, record: logging.LogRecord) -> bool:
        from server.redact import redact

        message = record.getMessage()
        if record.exc_info and not record.exc_text:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        record.msg, record.args = redact(message), None
        if record.exc_text:
            record.exc_text = redact(record.exc_text)
        return True


def setup_logging(name: str) -> None:
    level = getattr(logging, os.environ.get("AGENTLS_LOG", "WARNING").upper(), logging.WARNING)
    handlers: list[logging.Handler] = [logging.StreamHandler(sys.stderr)]
    try:
        log_dir = data_dir() / "logs"
        log_dir.mkdir(parents=True, exist_ok=True)
        handlers.append(logging.FileHandler(log_dir / f"{name}.log", encoding="utf-8"))
    except OSError:
        pass
    for handler in handlers:
        handler.addFilter(RedactSecrets())
    logging.basicConfig(
        level=level,
        handlers=handlers,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
        force=True,
    )
    # pygls logs every frame at INFO; keep the protocol out of the logs unless asked.
    if level > logging.DEBUG:
        logging.getLogger("pygls").setLevel(max(level, logging.WARNING))


_warned: set[tuple[str, object]] = set()


def warn_once(logger: logging.Logger, key: object, message: str, *args: object) -> None:
    """`logger.warning(message, *args)` the first time this process meets `key`."""
    if (logger.name, key) in _warned:
        return
    _warned.add((logger.name, key))
    logger.warning(message, *args)


def dump_stacks(signum: int = 0, frame: object = None) -> None:
    """Every thread's stack and every asyncio task's, to stderr: what a stuck process waits on
    (`kill -USR1 <pid>`)."""
    import asyncio
    import faulthandler

    print(f"agentls: stacks of process {os.getpid()}", file=sys.stderr, flush=True)
    faulthandler.dump_traceback(file=sys.stderr, all_threads=True)
    loop = asyncio._get_running_loop()
    if loop is None:
        return
    for task in asyncio.all_tasks(loop):
        print(f"-- {task!r}", file=sys.stderr)
        task.print_stack(file=sys.stderr)
    sys.stderr.flush()
