"""bashlex with its parser tables kept in a file: the same trees and errors as bashlex building
its own tables, from another process with another hash seed; a damaged file is rebuilt."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from server.policy.bash_grammar import _read

ROOT = Path(__file__).resolve().parents[1]
LINES = [
    "echo a | grep b && (cd x; ls) > out 2>&1",
    'for f in *.py; do python -m py_compile "$f" || exit 1; done',
    "if [ -f a ]; then cat a; elif test -d b; then ls b; else echo none; fi",
    "x=$(git rev-parse HEAD) y=`date` make -C build all",
    "cat <<EOF > notes.txt\nhello $USER\nEOF\n",
    "case $1 in a|b) echo ab;; *) echo other;; esac",
    'f() { echo "$@"; }; f 1 2',
    'while read -r line; do echo "$line"; done < input.txt',
    "npm test -- --watch=false; echo done &",
    "rm -rf 'dir with spaces' \"$HOME\"/tmp/* ~/x",
    "echo $((1 + 2)) ${VAR:-default} <(ls) >(wc -l)",
    "! grep -q x file || { echo missing; exit 2; }",
    "echo 'unterminated",
    "if then fi",
    "a && && b",
]
SCRIPT = """
import json, sys
from pathlib import Path
if sys.argv[1] == "kept":
    from server.policy.bash_grammar import import_bashlex
    import_bashlex(Path(sys.argv[2]))
import bashlex
out = []
for line in json.loads(sys.argv[3]):
    try:
        out.append([t.dump() for t in bashlex.parse(line)])
    except Exception as exc:
        out.append(f"{type(exc).__name__}: {exc}")
print(json.dumps(out))
"""


def parse_all(how: str, folder: Path, seed: str) -> list:
    env = {**os.environ, "PYTHONHASHSEED": seed, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, how, str(folder), json.dumps(LINES)],
        env=env,
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    return json.loads(done.stdout)


def test_kept_tables_parse_as_built_ones(tmp_path):
    built = parse_all("built", tmp_path, "2")
    assert sum(isinstance(r, str) for r in built) >= 2, "the corpus holds lines that fail"
    assert parse_all("kept", tmp_path, "1") == built  # builds the tables and keeps them
    [kept] = tmp_path.iterdir()
    before = kept.stat()
    assert parse_all("kept", tmp_path, "2") == built  # reads them
    after = kept.stat()
    assert (after.st_ino, after.st_mtime_ns) == (before.st_ino, before.st_mtime_ns)


def test_a_damaged_tables_file_is_rebuilt(tmp_path):
    parse_all("kept", tmp_path, "1")
    [kept] = tmp_path.iterdir()
    tables = json.loads(kept.read_text())
    row = next(iter(tables["action"].values()))
    row[next(iter(row))] = 10**6  # a shift to a state that does not exist
    kept.write_text(json.dumps(tables))
    assert _read(kept, 10**3) is None
    assert parse_all("kept", tmp_path, "3") == parse_all("built", tmp_path, "3")
    assert _read(kept, 10**3) is not None, "written anew"
    kept.write_text("{not json")
    assert parse_all("kept", tmp_path, "4") == parse_all("built", tmp_path, "4")
    assert json.loads(kept.read_text())["action"]
