"""Where the peer agents come from: the Claude Code CLI bundled with claude-agent-sdk,
claude-agent-acp from the test clients (scripts/setup-clients), and Codex, which the bench
installs from npm at a pinned version into its own cache (`install_codex`).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import platformdirs

ROOT = Path(__file__).resolve().parents[1]
CODEX_PACKAGE = "@openai/codex@0.171.0"
CACHE = Path(platformdirs.user_cache_dir("agentls")) / "bench-peers"
ACP_ADAPTER = ROOT / "tests" / "clients" / "node_modules" / ".bin" / "claude-agent-acp"


def claude_binary() -> str | None:
    try:
        import claude_agent_sdk
    except ImportError:
        return shutil.which("claude")
    bundled = Path(claude_agent_sdk.__file__).parent / "_bundled" / "claude"
    return str(bundled) if bundled.exists() else shutil.which("claude")


def codex_binary() -> Path | None:
    """The native app-server binary the npm package ships for this platform, if installed.
    (The package's `codex` command is a Node launcher that starts this binary.)"""
    found = sorted(CACHE.glob("node_modules/@openai/codex-*/vendor/*/bin/codex"))
    return found[0] if found else None


def install_codex() -> Path | None:
    """Install Codex into the cache unless it is there; None, with the reason on stderr, when
    npm cannot install it or the package has no binary for this platform."""
    if (found := codex_binary()) is not None:
        return found
    npm = shutil.which("npm")
    if npm is None:
        print("peer: npm not found; Codex not installed", file=sys.stderr)
        return None
    CACHE.mkdir(parents=True, exist_ok=True)
    print(f"peer: installing {CODEX_PACKAGE} into {CACHE}", file=sys.stderr)
    done = subprocess.run(
        [npm, "install", "--prefix", str(CACHE), "--no-audit", "--no-fund", CODEX_PACKAGE],
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        print(f"peer: npm could not install Codex: {done.stderr[-400:]}", file=sys.stderr)
    elif codex_binary() is None:
        print("peer: the Codex package has no binary for this platform", file=sys.stderr)
    return codex_binary()


def acp_adapter() -> Path | None:
    return ACP_ADAPTER if ACP_ADAPTER.exists() else None


def versions(claude: str | None, codex: Path | None, adapter: Path | None) -> dict[str, str]:
    """The version of each peer found, for the report."""
    out: dict[str, str] = {}
    for name, binary in (("claude", claude), ("codex", codex)):
        if binary is not None:
            shown = subprocess.run([str(binary), "--version"], capture_output=True, text=True)
            out[name] = shown.stdout.strip()
    if adapter is not None:
        package = adapter.resolve().parents[1] / "package.json"
        out["claude-agent-acp"] = json.loads(package.read_text())["version"]
    return out
