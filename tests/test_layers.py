"""The import ladder of server/ and protocol/ (docs in DESIGN §8): each module imports only its own
rung or lower ones, and no modules import each other in a circle. Every import counts: top-level,
inside functions, under `TYPE_CHECKING`. Read with the standard library's `ast`, nothing is run."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

RUNGS: list[tuple[str, int]] = [
    # (module prefix, rung); the longest matching prefix wins
    ("protocol", 0),
    ("server", 0),
    ("server.config", 0),
    ("server.logs", 0),
    ("server.redact", 0),
    ("server.aio", 0),
    ("server.testing", 0),
    ("server.timestamps", 0),
    ("server.trust", 0),
    # the fuzz driver runs the whole program over stdio and knows each door's parser
    ("server.testing.hostile", 9),
    ("server.providers", 1),
    ("server.turn", 2),
    ("server.skills", 3),
    ("server.tools", 3),
    ("server.policy", 3),
    ("server.trust", 0),
    ("server.mcp", 3),
    ("server.permissions", 4),
    ("server.agent", 5),
    ("server.engines", 6),
    ("server.mcp.engine", 6),
    ("server.sessions", 7),
    ("server.frontends", 8),
    ("server.cli", 9),
]


def rung(module: str) -> int:
    best = max(
        (p for p, _ in RUNGS if module == p or module.startswith(p + ".")),
        key=len,
    )
    return dict(RUNGS)[best]


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def modules() -> dict[str, Path]:
    found = {}
    for top in ("server", "protocol"):
        for path in sorted((ROOT / top).rglob("*.py")):
            found[module_name(path)] = path
    return found


def imports(name: str, path: Path, known: dict[str, Path]) -> dict[str, set[str]]:
    """The project modules `name` imports, each with the names it takes from it."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: dict[str, set[str]] = {}

    def add(target: str, taken: str) -> None:
        while target and target not in known:
            target = target.rpartition(".")[0]
        if target and target != name:
            found.setdefault(target, set()).add(taken)

    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                add(alias.name, alias.name)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")
                anchor = anchor[: len(anchor) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            for alias in node.names:
                sub = f"{base}.{alias.name}"
                add(sub if sub in known else base, alias.name)
    return found


def graph() -> dict[str, dict[str, set[str]]]:
    known = modules()
    return {name: imports(name, path, known) for name, path in known.items()}


def cycles(edges: dict[str, dict[str, set[str]]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = 0
    for start in edges:
        if start in index:
            continue
        work = [(start, iter(sorted(edges[start])))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is None:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        found.append(sorted(component))
            elif child not in index:
                index[child] = low[child] = counter
                counter += 1
                stack.append(child)
                on_stack.add(child)
                work.append((child, iter(sorted(edges.get(child, {})))))
            elif child in on_stack:
                low[node] = min(low[node], index[child])
    return found


def upward(edges: dict[str, dict[str, set[str]]]) -> list[str]:
    return [
        f"{src} (rung {rung(src)}) -> {dst} (rung {rung(dst)}): {', '.join(sorted(names))}"
        for src, targets in sorted(edges.items())
        for dst, names in sorted(targets.items())
        if rung(dst) > rung(src)
    ]


def test_the_checker_finds_a_cycle_and_an_upward_import() -> None:
    edges = {
        "server.tools.a": {"server.agent.loop": {"run_turn"}},
        "server.agent.loop": {"server.tools.a": {"A"}},
        "server.providers.x": {},
    }
    assert cycles(edges) == [["server.agent.loop", "server.tools.a"]]
    assert upward(edges) == ["server.tools.a (rung 3) -> server.agent.loop (rung 5): run_turn"]


def test_relative_and_function_local_imports_count(tmp_path: Path) -> None:
    source = tmp_path / "mod.py"
    source.write_text(
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from server.engines.native import NativeSession\n"
        "def f():\n    from .loop import run_turn\n"
    )
    known = {
        "server.agent.mod": source,
        "server.agent.loop": source,
        "server.engines.native": source,
    }
    found = imports("server.agent.mod", source, known)
    assert found == {"server.engines.native": {"NativeSession"}, "server.agent.loop": {"run_turn"}}


def test_no_cycles_and_no_import_to_a_higher_rung() -> None:
    edges = graph()
    problems = [" <-> ".join(c) for c in cycles(edges)] + upward(edges)
    assert not problems, "\n".join(problems)
