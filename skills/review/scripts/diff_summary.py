#!/usr/bin/env python3
"""Summarize a change set for review: what is compared, changed files with +/- counts, untracked.

diff_summary.py                 uncommitted changes (staged and unstaged)
diff_summary.py main            everything since the merge base with main, plus uncommitted
diff_summary.py src/ docs/x.md  uncommitted changes under those paths
diff_summary.py main src/       both
"""

from __future__ import annotations

import subprocess
import sys


def git(*args: str, check: bool = True) -> str:
    result = subprocess.run(["git", *args], capture_output=True, text=True, check=False)
    if check and result.returncode != 0:
        sys.exit(f"git {' '.join(args)} failed: {result.stderr.strip()}")
    return result.stdout


def is_revision(arg: str) -> bool:
    if arg.startswith("-"):
        return False
    result = subprocess.run(
        ["git", "rev-parse", "--verify", "--quiet", f"{arg}^{{commit}}"],
        capture_output=True,
        text=True,
        check=False,
    )
    return result.returncode == 0


def numstat(*args: str) -> dict[str, tuple[str, str]]:
    files = {}
    for line in git("diff", "--numstat", *args).splitlines():
        added, removed, path = line.split("\t", 2)
        files[path] = (added, removed)
    return files


def main(argv: list[str]) -> int:
    git("rev-parse", "--is-inside-work-tree")
    base = argv[0] if argv and is_revision(argv[0]) else None
    paths = argv[1:] if base else argv
    scope = ["--", *paths] if paths else []
    if base:
        merge_base = git("merge-base", base, "HEAD").strip() or base
        print(f"Comparing: working tree against merge-base({base}, HEAD) = {merge_base[:10]}")
        changed = numstat(merge_base, *scope)
        print(f"Diff command: git diff {merge_base[:10]}{' ' + ' '.join(scope) if scope else ''}")
    else:
        print("Comparing: uncommitted changes (staged and unstaged) against HEAD")
        has_head = bool(git("rev-parse", "--verify", "--quiet", "HEAD", check=False).strip())
        against = "HEAD" if has_head else "--cached"  # a repository without commits yet
        changed = numstat(against, *scope)
        print(f"Diff command: git diff {against}{' ' + ' '.join(scope) if scope else ''}")
    if paths:
        print(f"Limited to: {' '.join(paths)}")
    total_added = total_removed = 0
    print(f"\nChanged files ({len(changed)}):")
    for path, (added, removed) in sorted(changed.items()):
        print(f"  +{added:>5} -{removed:>5}  {path}")
        if added.isdigit() and removed.isdigit():
            total_added += int(added)
            total_removed += int(removed)
    untracked = git("ls-files", "--others", "--exclude-standard", *scope).splitlines()
    if untracked:
        print(f"\nUntracked files ({len(untracked)}), read them whole:")
        for path in untracked:
            print(f"  {path}")
    print(f"\nTotal: +{total_added} -{total_removed} in {len(changed)} tracked file(s)")
    if not changed and not untracked:
        print("Nothing to review: no changes in this scope.")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
