"""Importing bashlex with its parser tables read from a file instead of built.

bashlex's bundled parser generator builds the LALR tables of its bash grammar every time
`bashlex.parser` is imported (~0.16 s of CPU; it reads no table file). `import_bashlex` lets it
build them once per grammar and keeps them as JSON in agentls's cache folder, keyed by a digest
of the grammar's rules and precedence: while `bashlex` is imported, the `LRTable` of its
`yacc` module is one that reads that file (or builds the tables and writes it). The grammar itself is still
read and checked by bashlex, and the parser is bashlex's own. A file that cannot be read, or
does not hold tables of the expected shape, is ignored and replaced.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.abc
import importlib.machinery
import json
import os
import sys
import tempfile
import threading
from pathlib import Path
from typing import Any

import platformdirs

_lock = threading.Lock()


def tables_dir() -> Path:
    return Path(platformdirs.user_cache_dir("agentls")) / "bash-grammar"


def import_bashlex(folder: Path | None = None) -> None:
    """Import `bashlex` (once; later calls return at once)."""
    with _lock:
        if "bashlex" in sys.modules:
            return
        hook = _KeepTables(folder or tables_dir())
        sys.meta_path.insert(0, hook)
        try:
            import bashlex  # noqa: F401
        finally:
            sys.meta_path.remove(hook)
            hook.restore()


class _KeepTables(importlib.abc.MetaPathFinder):
    """Finds `bashlex.yacc` as usual and, once it has run, gives it `KeptTables` for the
    import of `bashlex.parser` that follows (bashlex's package imports the parser first)."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.module: Any = None
        self.built: type | None = None

    def find_spec(self, name: str, path: Any, target: Any = None) -> Any:
        if name != "bashlex.yacc":
            return None
        spec = importlib.machinery.PathFinder.find_spec(name, path)
        if spec is None or not isinstance(spec.loader, importlib.machinery.SourceFileLoader):
            return spec
        run = spec.loader.exec_module

        def exec_module(module: Any) -> None:
            run(module)
            self.module, self.built = module, module.LRTable
            module.LRTable = _kept_tables(module.LRTable, self.folder)

        spec.loader.exec_module = exec_module  # type: ignore[method-assign]
        return spec

    def restore(self) -> None:
        if self.module is not None:
            self.module.LRTable = self.built


def grammar_digest(grammar: Any, generator: str) -> str:
    rules = [str(p) for p in grammar.Productions]
    precedence = sorted((k, v) for k, v in grammar.Precedence.items())
    text = json.dumps([generator, rules, precedence, grammar.Start], default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:32]


def _kept_tables(built: type, folder: Path) -> type:
    class KeptTables(built):
        def __init__(self, grammar: Any, log: Any = None) -> None:
            generator = getattr(sys.modules.get(built.__module__), "__tabversion__", "")
            try:
                path = folder / f"{grammar_digest(grammar, generator)}.json"
            except (AttributeError, TypeError):  # a bashlex whose grammar object differs
                path = None
            tables = _read(path, len(grammar.Productions)) if path else None
            if tables is None:
                super().__init__(grammar, log)
                if path:
                    _write(path, self.lr_action, self.lr_goto)
                return
            self.grammar = grammar
            self.lr_productions = grammar.Productions
            self.lr_action: dict = tables[0]
            self.lr_goto: dict = tables[1]
            self.sr_conflicts: list = []
            self.rr_conflicts: list = []

    return KeptTables


def _read(path: Path, productions: int) -> tuple[dict, dict] | None:
    try:
        data = json.loads(path.read_text())
        action = {int(s): dict(row) for s, row in data["action"].items()}
        goto = {int(s): dict(row) for s, row in data["goto"].items()}
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None
    states = len(action)
    for row in action.values():
        for value in row.values():
            if type(value) is not int or not -productions < value < states:
                return None
    for row in goto.values():
        if any(type(v) is not int or not 0 <= v < states for v in row.values()):
            return None
    if set(action) != set(range(states)):
        return None
    return action, goto


def _write(path: Path, action: dict, goto: dict) -> None:
    """Atomically, so that two processes starting at once never read half a file."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(
            "w", dir=path.parent, prefix=".tables-", delete=False, encoding="utf-8"
        ) as out:
            json.dump({"action": action, "goto": goto}, out, separators=(",", ":"))
        os.replace(out.name, path)
    except OSError:
        with contextlib.suppress(OSError, UnboundLocalError):
            os.unlink(out.name)
