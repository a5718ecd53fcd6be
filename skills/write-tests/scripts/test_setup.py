#!/usr/bin/env python3
"""Report how the project in the current directory runs its tests: frameworks, command, where
tests live, and a few example test files to imitate."""

from __future__ import annotations

import json
import os
import sys
from collections import Counter
from pathlib import Path

SKIP = {"node_modules", "venv", "__pycache__", "dist", "build", "target", "out", "coverage"}
TEST_NAMES = ("test_", "_test.", ".test.", ".spec.", "Test.java", "Tests.cs", "_spec.rb")


def read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""


def python_setup(root: Path) -> list[str]:
    found = []
    config = "".join(read(root / n) for n in ("pyproject.toml", "setup.cfg", "tox.ini"))
    if (root / "pytest.ini").exists() or "pytest" in config or (root / "conftest.py").exists():
        found.append("pytest: python -m pytest <path> -q")
    elif any(root.glob("test*/__init__.py")) or "unittest" in config:
        found.append("unittest: python -m unittest discover")
    return found


def node_setup(root: Path) -> list[str]:
    package = root / "package.json"
    if not package.exists():
        return []
    try:
        data = json.loads(read(package))
    except ValueError:
        return ["package.json (unreadable): npm test"]
    deps = {**data.get("dependencies", {}), **data.get("devDependencies", {})}
    script = data.get("scripts", {}).get("test", "")
    frameworks = [n for n in ("vitest", "jest", "mocha", "ava", "playwright") if n in deps]
    name = "/".join(frameworks) or "node"
    return [f"{name}: npm test -- <path>" + (f"   (scripts.test = {script!r})" if script else "")]


def other_setups(root: Path) -> list[str]:
    checks = [
        ("go.mod", "go: go test ./..."),
        ("Cargo.toml", "rust: cargo test"),
        ("pom.xml", "maven: mvn test"),
        ("build.gradle", "gradle: ./gradlew test"),
        ("build.gradle.kts", "gradle: ./gradlew test"),
        ("Gemfile", "ruby: bundle exec rspec (or rake test)"),
        ("composer.json", "php: vendor/bin/phpunit"),
        ("mix.exs", "elixir: mix test"),
    ]
    found = [text for name, text in checks if (root / name).exists()]
    if any(root.glob("*.csproj")) or any(root.glob("*.sln")):
        found.append("dotnet: dotnet test")
    return found


def test_files(root: Path, limit: int = 400) -> list[Path]:
    files = []
    for folder, dirs, names in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d not in SKIP and not d.startswith("."))
        for name in sorted(names):
            if any(marker in name for marker in TEST_NAMES):
                files.append(Path(folder, name).relative_to(root))
                if len(files) >= limit:
                    return files
    return files


def main() -> int:
    root = Path.cwd()
    setups = python_setup(root) + node_setup(root) + other_setups(root)
    print("Test frameworks and commands:")
    for line in setups or ["none detected: look for a Makefile, CI config or README"]:
        print(f"  {line}")
    files = test_files(root)
    counts = Counter(f.parent.as_posix() for f in files)
    dirs = [d for d, _ in counts.most_common()]
    print(f"\nTest files found: {len(files)}{'+' if len(files) >= 400 else ''}")
    print("Test directories (most test files first):")
    for d in dirs[:15] or ["(none)"]:
        print(f"  {d}" + (f"  ({counts[d]} files)" if d in counts else ""))
    print("Examples to imitate (one per directory):")
    for d in dirs[:6]:
        print(f"  {next(f for f in files if f.parent.as_posix() == d).as_posix()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
