"""Everything a Claude Agent SDK can set, and what agentls does with it: the fields of the
`initialize` control request and the command-line flags. One table each: the door applies
`initialize` through it, the print parser registers the flags from it, docs/stream-json.md
lists it, and a test compares it with the SDKs' own definitions, so a field a new SDK sends
fails the suite until it is decided here.

`honoured`: agentls does what Claude Code does with it. `refused`: accepted, not done, and the
user is told (a `system/informational` warning at the next turn, or a field of the
`initialize` answer the SDK turns into its own error). `inert`: a statement about the host or
a choice whose effect agentls already has; nothing to do and nothing lost.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Status = Literal["honoured", "refused", "inert"]


@dataclass(frozen=True)
class Item:
    status: Status
    note: str
    """What agentls does; for a refused item, the warning the user gets."""
    value: bool = True
    """Flags only: whether the flag takes a value."""


def H(note: str, *, value: bool = True) -> Item:
    return Item("honoured", note, value)


def R(note: str, *, value: bool = True) -> Item:
    return Item("refused", note, value)


def I(note: str, *, value: bool = True) -> Item:  # noqa: E743
    return Item("inert", note, value)


SDK_MCP = (
    "in-process SDK MCP servers (createSdkMcpServer) are not supported: their tools are not offered"
)

INITIALIZE: dict[str, Item] = {
    "subtype": I("the request's tag"),
    "hooks": H(
        "called back with hook_callback: PreToolUse, PermissionRequest, PostToolUse, "
        "UserPromptSubmit, Stop, SessionStart; hooks for other events are named in a warning"
    ),
    "sdkMcpServers": H("in-process servers: every message goes to the host as mcp_message"),
    "sdkMcpServerConfigs": R(
        "sdkMcpServerConfigs (per-server timeouts and tool policies) are not applied: "
        "use allowedTools / disallowedTools"
    ),
    "sdkMcpServerManifests": I(
        "a cache of handshakes: agentls does the handshake over mcp_message"
    ),
    "sdkMcpServerManifestsOrigin": I("only for remote session transports"),
    "jsonSchema": H(
        "the final answer is checked against the schema (asked again up to 3 times) and put on "
        "the result as structured_output; else error_max_structured_output_retries"
    ),
    "systemPrompt": H("replaces the system prompt (the parts joined); empty keeps agentls's own"),
    "appendSystemPrompt": H("appended to the system prompt"),
    "systemPromptSnapshot": I("agentls renders the system prompt afresh for every model call"),
    "planModeInstructions": R(
        "planModeInstructions are not supported: plan mode keeps agentls's own instructions"
    ),
    "appendSubagentSystemPrompt": R(
        "appendSubagentSystemPrompt is not supported: subagents keep their own prompts"
    ),
    "toolAliases": R("toolAliases are not supported: the model sees agentls's tool names"),
    "codeRunningMcpTools": R("codeRunningMcpTools is not supported"),
    "excludeDynamicSections": I(
        "agentls already sends the per-call context (cwd, git) outside the system prompt"
    ),
    "agents": H(
        "subagent profiles for the task tool (description, prompt, tools, disallowedTools, "
        "maxTurns, model); other fields and model aliases are named in a warning"
    ),
    "title": R("session titles are not supported: the title is not kept"),
    "skills": R("the skills filter is not supported: every discovered skill loads"),
    "webSearchIsolationExemptMcpServers": I("agentls has no web search isolation"),
    "promptSuggestions": R("prompt suggestions are not supported: none are sent"),
    "agentProgressSummaries": R("agent progress summaries are not supported: none are sent"),
    "forwardSubagentText": R("subagent text is not forwarded: a subagent reports its summary"),
    "supportedDialogKinds": I("agentls opens no dialogs"),
    "perTaskStopAffordance": I("an interrupt stops the turn's background work either way"),
    "rapidFollowupPreempt": I("a message sent during a turn is steered into it"),
    "forwardNestedSubagentToolCalls": I("nested subagent tool calls carry parent_tool_use_id"),
    "offersBypassSwitchBack": I("a host capability agentls does not use"),
    "keepsBypassHeld": I("a host capability agentls does not use"),
    "agentSdkVersion": I("the host's SDK version"),
    "workspaceTrust": R(
        "workspace trust from the host is not taken: agentls trusts by its own config (--trust)"
    ),
    "plugins": R("plugins are not supported: none are loaded"),
    "managedSettings": R("managed settings are not supported: none are applied"),
    "settings": H("permissions.allow / deny / ask are applied; other keys are named in a warning"),
    "disallowedTools": H("as --disallowedTools: tools removed, rules with a specifier deny"),
    "additionalDirectories": R(
        "additional directories are not supported: tools stay in the working directory"
    ),
    "mcpServers": H("as --mcp-config: the servers start with the session"),
}

FLAGS: dict[str, Item] = {
    "--output-format": H("text | json | stream-json"),
    "--input-format": H("text | stream-json"),
    "--verbose": H("required with stream-json output", value=False),
    "--include-partial-messages": H("stream_event frames", value=False),
    "--permission-prompt-tool": H("stdio: permissions as can_use_tool control requests"),
    "--permission-prompts": R("--permission-prompts is not supported"),
    "--system-prompt": H("replaces the system prompt (empty: agentls's own)"),
    "--system-prompt-file": H("replaces the system prompt with the file's text"),
    "--append-system-prompt": H("appended to the system prompt"),
    "--max-turns": H("model calls per turn; error_max_turns"),
    "--model": H("the session's model"),
    "--permission-mode": H(
        "default, plan, acceptEdits, bypassPermissions, dontAsk; auto runs as default with a warning"
    ),
    "--allow-dangerously-skip-permissions": I(
        "bypassPermissions is allowed without it", value=False
    ),
    "--continue": H("continue the directory's most recent session", value=False),
    "--resume": H("continue a stored session"),
    "--session-id": H("the new session's id"),
    "--fork-session": R(
        "--fork-session is not supported: a resumed session continues in place", value=False
    ),
    "--resume-session-at": R("--resume-session-at is not supported: the whole session is resumed"),
    "--resume-drops-turn": R("--resume-drops-turn is not supported: the whole session is resumed"),
    "--mcp-config": H("MCP servers"),
    "--strict-mcp-config": H("only the --mcp-config servers", value=False),
    "--tools": H("the built-in tools offered"),
    "--allowedTools": H("allow rules (Claude Code rule syntax)"),
    "--disallowedTools": H("tools removed; rules with a specifier deny"),
    "--settings": H(
        "permissions.allow / deny / ask are applied; other keys are named in a warning"
    ),
    "--setting-sources": H(
        "the permission rules of Claude Code's settings files (user, project, local; a "
        "project's allow rules are not taken); other keys are named in a warning"
    ),
    "--managed-settings": R("managed settings are not supported"),
    "--managed-settings-in-initialize": R("managed settings are not supported", value=False),
    "--add-dir": R("--add-dir is not supported: tools stay in the working directory"),
    "--agent": R("--agent is not supported: the session runs as the main agent"),
    "--agents": H("as agents in initialize"),
    "--betas": R("--betas is not supported"),
    "--effort": H(
        "thinking at that effort: low and medium as --think, high as hard, xhigh and max as ultra"
    ),
    "--thinking": H("adaptive turns thinking on, disabled off (the model's own kind of thinking)"),
    "--max-thinking-tokens": H("the thinking budget (0: thinking off)"),
    "--thinking-display": R("--thinking-display is not supported"),
    "--fallback-model": R("--fallback-model is not supported: a failing model fails the turn"),
    "--max-budget-usd": H(
        "the turn stops once the cost at list prices reaches it: error_max_budget_usd; later "
        "turns make no model call"
    ),
    "--task-budget": R("--task-budget is not supported"),
    "--json-schema": H("as jsonSchema in initialize"),
    "--plugin-dir": R("plugins are not supported: none are loaded"),
    "--plugin-dir-no-mcp": R("plugins are not supported: none are loaded"),
    "--include-hook-events": H(
        "hook_started / hook_response frames around each SDK hook call", value=False
    ),
    "--await-initialize": H("the session opens after the initialize request", value=False),
    "--initialize-fields": I("agentls reads every field of the initialize request"),
    "--no-session-persistence": R("sessions are always stored", value=False),
    "--session-mirror": R("--session-mirror is not supported", value=False),
    "--project-config-root": R("--project-config-root is not supported"),
    "--channels": R("--channels is not supported"),
    "--sdk-url": R("--sdk-url is not supported: agentls speaks over stdio"),
    "--output-style": R("output styles are not supported"),
    "--debug": I("logs go to stderr and the log file (AGENTLS_LOG)", value=False),
    "--debug-to-stderr": I("logs go to stderr", value=False),
    "--debug-file": I("logs go to the data dir's log file"),
    "--no-optional-locks": I("a git option the SDK passes to git", value=False),
}

CONTROL: dict[str, Item] = {
    "initialize": H("answered; its fields as in the table above"),
    "interrupt": H("cancels the running turn, whose result says so"),
    "set_permission_mode": H("takes effect at the next call; auto is refused"),
    "set_model": H("takes effect at the next model call"),
    "mcp_status": H("the session's MCP servers, their tools and errors"),
    "rewind_files": H("file checkpoints (see rewind_files above)"),
    "can_use_tool": I("agentls sends it (--permission-prompt-tool stdio)"),
    "hook_callback": I("agentls sends it (SDK hooks)"),
    "mcp_message": I("agentls sends it (SDK MCP servers)"),
    "elicitation": I("a request to the host; agentls sends none"),
    "request_user_dialog": I("a request to the host; agentls sends none"),
    "set_max_thinking_tokens": H(
        "the thinking budget of the next turns (0: off, null: the config's)"
    ),
    "rename_session": R("session titles are not supported"),
    "set_color": R("session colours are not supported"),
    "get_context_usage": R("get_context_usage is not supported"),
    "get_session_cost": R("get_session_cost is not supported: each result carries total_cost_usd"),
    "list_models": R("list_models is not supported: the initialize answer lists the models"),
    "get_usage": R("get_usage is not supported: each result carries its usage"),
    "get_binary_version": R("get_binary_version is not supported"),
    "mcp_call": R("mcp_call is not supported"),
    "file_suggestions": R("file_suggestions is not supported"),
    "cancel_async_message": R("cancel_async_message is not supported"),
    "read_file": R("read_file is not supported"),
    "seed_read_state": R("seed_read_state is not supported"),
    "mcp_set_servers": R("mcp_set_servers is not supported: MCP servers are set at launch"),
    "register_repo_root": R("register_repo_root is not supported"),
    "reload_plugins": R("plugins are not supported"),
    "reload_skills": R("reload_skills is not supported: skills are read when the session opens"),
    "reload_output_styles": R("output styles are not supported"),
    "mcp_reconnect": R("mcp_reconnect is not supported: a failed server restarts at its next call"),
    "mcp_toggle": R("mcp_toggle is not supported"),
    "set_has_subscribers": R("set_has_subscribers is not supported"),
    "stop_task": R("stop_task is not supported: an interrupt stops the turn's background work"),
    "background_tasks": R("background_tasks is not supported"),
    "get_task_output": R("get_task_output is not supported"),
    "apply_flag_settings": R("apply_flag_settings is not supported"),
    "get_settings": R("get_settings is not supported"),
    "get_hooks_listing": R("get_hooks_listing is not supported"),
    "update_settings": R("update_settings is not supported"),
    "list_permission_rules": R("list_permission_rules is not supported"),
    "mcp_read_resource": R("mcp_read_resource is not supported"),
}
"""Control requests (`SDKControlRequestInner`): what agentls answers, sends, or refuses with
an error that names the reason."""

PARSED_ELSEWHERE = frozenset(
    {
        "--output-format", "--input-format", "--verbose", "--include-partial-messages",
        "--permission-prompt-tool", "--system-prompt", "--append-system-prompt", "--max-turns",
        "--model", "--permission-mode", "--continue", "--resume", "--session-id",
        "--mcp-config", "--strict-mcp-config", "--allowedTools", "--disallowedTools", "--tools",
        "--system-prompt-file",
    }
)  # fmt: skip
"""Flags the print parser defines with their own meaning; the rest it registers from FLAGS."""


def dest(flag: str) -> str:
    return "sdk_" + flag.removeprefix("--").replace("-", "_")
