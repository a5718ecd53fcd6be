"""Every golden stream-json frame (protocol/fixtures/streamjson) type-checks against the
TypeScript Claude Agent SDK's own types (`satisfies SDKMessage`, or the control response types),
compiled with `tsc --noEmit`."""

from __future__ import annotations

import json
import re
import subprocess
import uuid
from pathlib import Path
from typing import Any

from tests.node_clients import NODE, NODE_MODULES, require_clients

GOLDEN = Path(__file__).parents[1] / "protocol" / "fixtures" / "streamjson"
TSC = NODE_MODULES / "typescript" / "bin" / "tsc"
# Volatile values the golden files mask, as values of the type the SDK declares.
PLACEHOLDERS: dict[str, Any] = {
    "<uuid>": str(uuid.UUID(int=1)),
    "<duration_ms>": 12,
    "<duration_api_ms>": 10,
    "<pid>": 4242,
    "<tools>": ["Read", "Bash"],
}
# The response type of each control request the golden transcripts answer.
CONTROL_RESPONSES = {
    "initialize": "SDKControlInitializeResponse",
    "interrupt": "SDKControlInterruptResponse",
    "set_permission_mode": "SDKControlSetPermissionModeResponse",
    "mcp_status": "{ mcpServers: McpServerStatus[] }",
}


def unmask(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: unmask(v) for k, v in value.items()}
    if isinstance(value, list):
        return [unmask(v) for v in value]
    return PLACEHOLDERS.get(value, value) if isinstance(value, str) else value


def golden_frames() -> list[tuple[str, dict[str, Any]]]:
    frames = []
    for path in sorted(GOLDEN.glob("*.ndjson")):
        for number, line in enumerate(path.read_text().splitlines(), 1):
            frames.append((f"{path.name}:{number}", unmask(json.loads(line))))
    return frames


def checks(where: str, frame: dict[str, Any]) -> list[str]:
    """TypeScript statements asserting the frame's type; a comment names the golden line."""
    tag = f"// {where}"
    if frame["type"] != "control_response":
        return [f"{tag}\n({json.dumps(frame)}) satisfies SDKMessage;"]
    response = dict(frame["response"])
    # Claude Code sends error_code on errors; the SDK's d.ts does not declare it.
    response.pop("error_code", None)
    lines = [
        f"{tag}\n({json.dumps({**frame, 'response': response})}) satisfies SDKControlResponse;"
    ]
    subtype = CONTROL_SUBTYPES.get(response["request_id"])
    if response["subtype"] == "success" and subtype:
        # Claude Code's initialize answer carries its pid; the d.ts does not declare it either.
        body = json.dumps({k: v for k, v in response.get("response", {}).items() if k != "pid"})
        lines.append(f"{tag}\n({body}) satisfies {CONTROL_RESPONSES[subtype]};")
    return lines


# control.ndjson answers these requests (tests/test_streamjson_pipe.py sends them).
CONTROL_SUBTYPES = {
    "r0": "initialize",
    "r2": "set_permission_mode",
    "r3": "mcp_status",
    "r4": "interrupt",
}

HEADER = """import type {
  McpServerStatus,
  SDKControlInitializeResponse,
  SDKControlInterruptResponse,
  SDKControlResponse,
  SDKControlSetPermissionModeResponse,
  SDKMessage,
} from "@anthropic-ai/claude-agent-sdk";
"""


def tsconfig(files: list[str]) -> dict[str, Any]:
    return {
        "compilerOptions": {
            "strict": True,
            "noEmit": True,
            "skipLibCheck": True,
            "target": "es2022",
            "module": "nodenext",
            "moduleResolution": "nodenext",
            "baseUrl": ".",
            "paths": {"*": [f"{NODE_MODULES}/*", f"{NODE_MODULES}/@types/*"]},
            "typeRoots": [str(NODE_MODULES / "@types")],
            "types": ["node"],
        },
        "files": files,
    }


def typecheck(tmp_path: Path, sources: dict[str, str]) -> list[str]:
    """tsc's error lines (`file(line,col): error TS...`) for these sources."""
    for name, text in sources.items():
        (tmp_path / name).write_text(HEADER + text)
    (tmp_path / "tsconfig.json").write_text(json.dumps(tsconfig(list(sources))))
    proc = subprocess.run(
        [NODE, str(TSC), "-p", str(tmp_path / "tsconfig.json"), "--pretty", "false"],
        capture_output=True,
        cwd=tmp_path,
        timeout=300,
    )
    return [line for line in proc.stdout.decode().splitlines() if ": error TS" in line]


def test_golden_frames_satisfy_the_sdk_types(tmp_path):
    require_clients()
    assert TSC.exists(), "typescript is missing from tests/clients: run scripts/setup-clients"
    frames = golden_frames()
    assert {f["type"] for _, f in frames} >= {"system", "assistant", "user", "result"}
    golden = "\n".join(line for where, frame in frames for line in checks(where, frame))
    # The same check must refuse a result without modelUsage and an error result without
    # errors: proof that the types were really loaded.
    [result] = [f for _, f in frames if f["type"] == "result"][:1]
    broken = [
        {k: v for k, v in result.items() if k != "modelUsage"},
        {**{k: v for k, v in result.items() if k != "result"}, "subtype": "error_max_turns"},
    ]
    negative = "\n".join(f"({json.dumps(f)}) satisfies SDKMessage;" for f in broken)
    errors = typecheck(tmp_path, {"golden.ts": golden, "broken.ts": negative})
    assert [e for e in errors if e.startswith("golden.ts")] == [], "\n".join(
        annotate(tmp_path / "golden.ts", errors)
    )
    broken_lines = {int(m.group(1)) for e in errors if (m := re.match(r"broken\.ts\((\d+)", e))}
    assert len(broken_lines) == len(broken), errors


def annotate(path: Path, errors: list[str]) -> list[str]:
    """Each error with the golden line it is about."""
    lines = path.read_text().splitlines()
    out = []
    for error in errors:
        m = re.match(r"golden\.ts\((\d+)", error)
        if m:
            number = int(m.group(1))
            where = next(
                (lines[i] for i in range(number - 1, -1, -1) if lines[i].startswith("// ")), ""
            )
            out.append(f"{where}: {error}")
    return out
