#!/usr/bin/env python3
"""Context for writing a commit message: staged files, branch, recent subjects and the
conventions they follow."""

from __future__ import annotations

import re
import subprocess
import sys

CONVENTIONAL = re.compile(r"^[a-z]+(\([^)]*\))?!?: ")


def git(*args: str) -> str:
    result = subprocess.run(["git", *args], capture_output=True, text=True, check=False)
    return result.stdout if result.returncode == 0 else ""


def conventions(subjects: list[str]) -> list[str]:
    if not subjects:
        return ["no history yet: use a short imperative subject"]
    n = len(subjects)
    conventional = sum(bool(CONVENTIONAL.match(s)) for s in subjects)
    capital = sum(s[:1].isupper() for s in subjects)
    period = sum(s.endswith(".") for s in subjects)
    lengths = sorted(len(s) for s in subjects)
    types = sorted({m.group(0).split("(")[0].rstrip("!: ") for s in subjects
                    if (m := CONVENTIONAL.match(s))})  # fmt: skip
    notes = [
        f"Conventional Commits: {conventional}/{n}"
        + (f" (types: {', '.join(types)})" if types else ""),
        f"subject starts with a capital letter: {capital}/{n}",
        f"subject ends with a period: {period}/{n}",
        f"subject length: median {lengths[n // 2]}, longest {lengths[-1]}",
    ]
    return notes


def main() -> int:
    if not git("rev-parse", "--is-inside-work-tree").strip():
        print("Not inside a git repository.")
        return 1
    branch = git("branch", "--show-current").strip() or "(detached HEAD)"
    print(f"Branch: {branch}")
    staged = git("diff", "--staged", "--stat").rstrip()
    if staged:
        print("\nStaged changes:")
        print(staged)
    else:
        print("\nNothing is staged.")
        unstaged = git("status", "--short").rstrip()
        print("Working tree:\n" + unstaged if unstaged else "The working tree is clean.")
    subjects = git("log", "-n", "30", "--format=%s").splitlines()
    print("\nRecent subjects:")
    for subject in subjects[:10]:
        print(f"  {subject}")
    print("\nConventions in the last 30 commits:")
    for note in conventions(subjects):
        print(f"  {note}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
