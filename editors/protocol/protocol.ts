/* Generated from protocol/schema/agentls.schema.json by editors/protocol/generate.mjs; do not edit.
 * Regenerate with `npm --prefix editors run gen:protocol` (after `python -m protocol.schema`). */

export const PROTOCOL_VERSION = 1;


export interface AgentlsWireTypes {
  AgentMessageChunk?: AgentMessageChunk;
  AgentThoughtChunk?: AgentThoughtChunk;
  AgentlsClientCapabilities?: AgentlsClientCapabilities;
  AgentlsServerCapabilities?: AgentlsServerCapabilities;
  AskQuestionParams?: AskQuestionParams;
  AskQuestionResult?: AskQuestionResult;
  AttachParams?: AttachParams;
  AttachResult?: AttachResult;
  BackgroundSubagent?: BackgroundSubagent;
  CatalogWarning?: CatalogWarning;
  Checkpoint?: Checkpoint;
  Compaction?: Compaction;
  Diff?: Diff;
  Empty?: Empty;
  EngineInfo?: EngineInfo;
  EnginesListResult?: EnginesListResult;
  ExperimentalClientCapabilities?: ExperimentalClientCapabilities;
  ExperimentalServerCapabilities?: ExperimentalServerCapabilities;
  ImageContent?: ImageContent;
  Implementation?: Implementation;
  InitializeClientCapabilities?: InitializeClientCapabilities;
  InitializeParams?: InitializeParams;
  InitializeResult?: InitializeResult;
  InitializedParams?: InitializedParams;
  ListSessionsParams?: ListSessionsParams;
  ListSessionsResult?: ListSessionsResult;
  LoadSessionParams?: LoadSessionParams;
  Location?: Location;
  McpImplementation?: McpImplementation;
  McpListParams?: McpListParams;
  McpListResult?: McpListResult;
  McpServerConfig?: McpServerConfig;
  McpServerInfo?: McpServerInfo;
  McpStatus?: McpStatus;
  McpToolInfo?: McpToolInfo;
  ModeChanged?: ModeChanged;
  ModeInfo?: ModeInfo;
  ModeState?: ModeState;
  ModelInfo?: ModelInfo;
  ModelState?: ModelState;
  ModelSwitched?: ModelSwitched;
  ModelsListParams?: ModelsListParams;
  ModelsListResult?: ModelsListResult;
  NewSessionParams?: NewSessionParams;
  PermissionNote?: PermissionNote;
  PermissionOption?: PermissionOption;
  PermissionOutcome?: PermissionOutcome;
  Plan?: Plan;
  PlanEntry?: PlanEntry;
  Position?: Position;
  PromptOptions?: PromptOptions;
  PromptParams?: PromptParams;
  PromptResult?: PromptResult;
  Question?: Question;
  QuestionNote?: QuestionNote;
  QuestionOption?: QuestionOption;
  Range?: Range;
  RequestPermissionParams?: RequestPermissionParams;
  RequestPermissionResult?: RequestPermissionResult;
  ResourceContent?: ResourceContent;
  ResourceLink?: ResourceLink;
  RewindParams?: RewindParams;
  RewindResult?: RewindResult;
  SandboxStatus?: SandboxStatus;
  SearchHit?: SearchHit;
  SearchSessionsParams?: SearchSessionsParams;
  SearchSessionsResult?: SearchSessionsResult;
  ServerCapabilities?: ServerCapabilities;
  SessionInfoResult?: SessionInfoResult;
  SessionRef?: SessionRef;
  SessionSummary?: SessionSummary;
  SessionUpdateParams?: SessionUpdateParams;
  SetModeParams?: SetModeParams;
  SetModelParams?: SetModelParams;
  SkillInfo?: SkillInfo;
  SkillsListParams?: SkillsListParams;
  SkillsListResult?: SkillsListResult;
  SteerParams?: SteerParams;
  SteerResult?: SteerResult;
  StepFinish?: StepFinish;
  StopSubagentParams?: StopSubagentParams;
  StopSubagentResult?: StopSubagentResult;
  StoreWarning?: StoreWarning;
  StreamRetry?: StreamRetry;
  SubagentInfo?: SubagentInfo;
  SubagentUpdate?: SubagentUpdate;
  SubagentsListParams?: SubagentsListParams;
  SubagentsListResult?: SubagentsListResult;
  TextContent?: TextContent;
  ToolCall?: ToolCall;
  ToolCallRef?: ToolCallRef;
  ToolCallUpdate?: ToolCallUpdate;
  TurnEnd?: TurnEnd;
  Usage?: Usage;
  UserMessageChunk?: UserMessageChunk;
  WorkspaceTrust?: WorkspaceTrust;
}
/**
 * A piece of the assistant's answer, streamed.
 *
 * This interface was referenced by `AgentlsWireTypes`'s JSON-Schema
 * via the `definition` "AgentMessageChunk".
 */
export interface AgentMessageChunk {
  kind: "agent_message_chunk";
  text: string;
}
/**
 * A piece of the model's visible thinking, streamed.
 *
 * This interface was referenced by `AgentlsWireTypes`'s JSON-Schema
 * via the `definition` "AgentThoughtChunk".
 */
export interface AgentThoughtChunk {
  kind: "agent_thought_chunk";
  text: string;
}
/**
 * What the client can show; each is false when absent.
 *
 * This interface was referenced by `AgentlsWireTypes`'s JSON-Schema
 * via the `definition` "AgentlsClientCapabilities".
 */
export interface AgentlsClientCapabilities {
  /**
   * It can render the `diff` of a `tool_call_update`.
   */
  diffs?: boolean;
  /**
   * It can send and show images.
   */
  images?: boolean;
  /**
   * It answers `session/request_permission`. Without it, every tool call that needs approval
   * is refused and the model is told so.
   */
  permissions?: boolean;
  /**
   * It answers `session/ask_question`. Without it, `ask_user_question` returns
   * `user_not_reachable` and the model proceeds on its own.
   */
  questions?: boolean;
  /**
   * It shows turns it did not prompt. Background subagents then outlive the turn that
   * started them: a report that arrives while the session is idle runs a turn of its own (its
   * updates carry a new `turnId`, open with a `user_message_chunk` whose `origin` is `report`
   * and end with `turn_end`). Without it, a turn waits for its background subagents' reports.
   */
  reportTurns?: boolean;
}
/**
 * This interface was referenced by `AgentlsWireTypes`'s JSON-Schema
 * via the `definition` "AgentlsServerCapabilities".
 */
export interface AgentlsServerCapabilities {
  /**
   * Engine ids `session/new` accepts.
   */
  engines: string[];
  /**
   * Optional features this server has: `steer`, `images`, `permissions`, `questions`, `mcp`.
   */
  features: string[];
  /**
   * The version of this protocol; it changes only with a breaking change.
   */
  protocolVersion: number;
  /**
   * Model provider ids `session/new` accepts.
   */
  providers: string[];
  sandbox?: SandboxStatus | null;
  /**
   * The agentls version.
   */
  version: string;
}
/**
 * Where commands run by default on this server.
 *
 * This interface was referenced by `AgentlsWireTypes`'s JSON-Schema
 * via the `definition` "SandboxStatus".
 */
export interface SandboxStatus {
  /**
   * With the network off, the hosts commands may still reach through agentls's proxy.
   */
  allowedHosts?: string[] | null;
  /**
   * Whether a sandboxed command runs without a permission request in `default` and
   * `acceptEdits` (commands that visibly leave the sandbox still ask).
   */
  autoAllow: boolean;
  /**
   * What the configuration (user config, environment, flags) asks for.
   */
  configured: "workspace-write" | "read-only" | "off";
  /**
   * Paths sandboxed commands cannot read (secrets, agentls's own data, config and runtime
   * folders, `sandbox.denyRead`), as they are now on this server; a command that names one
   * asks.
   */
  denyRead?: string[] | null;
  /**
   * `bwrap` (Linux) or `sandbox-exec` (macOS); absent when there is none.
   */
  kind?: string | null;
  /**
   * What sessions get: the configured mode, or `off` where no sandbox can be made.
   */
  mode: "workspace-write" | "read-only" | "off";
  /**
   * Whether sandboxed commands may use the network (all of it).
   */
  network: boolean;
  /**
   * With the network off, whether a command's first connection to a host asks the user
   * (`sandbox.network: "ask"`).
   */
  networkAsk?: boolean | null;
  /**
   * Why commands run without the sandbox that was asked for.
   */
  notice?: string | null;
  /**
   * Names in the workspace (and `.git` at any depth) that sandboxed commands can never
   * write, whether or not they exist.
   */
  protected?: string[] | null;
  /**
   * Whether a sandboxed command can open a Unix socket (`blocked`: a seccomp filter
   * refuses them, so no host socket is reachable); absent without a sandbox.
   */
  sockets?: ("blocked" | "open") | null;
}
/**
 * This interface was referenced by `AgentlsWireTypes`'s JSON-Schema
 * via the `definition` "AskQuestionParams".
 */
export interface AskQuestionParams {
  questions: Question[];
  sessionId: string;
  turnId: string;
}
/**
 * This interface was referenced by `AgentlsWireTypes`'s JSON-Schema
 * via the `definition` "Question".
 */
export interface Question {
  header?: string | null;
  multiSelect?: boolean;
  options: QuestionOption[];
  question: string;
}
/**
 * This interface was referenced by `AgentlsWireTypes`'s JSON-Schema
 * via the `definition` "QuestionOption".
 */
export interface QuestionOption {
  description?: string | null;
  label: string;
}
/**
 * This interface was referenced by `AgentlsWireTypes`'s JSON-Schema
 * via the `definition` "AskQuestionResult".
 */
export interface AskQuestionResult {
  /**
   * Keyed by question text; a list for multi-select questions.
   */
  answers?: {
    [k: string]: string | string[];
  } | null;
  declined?: boolean | null;
}
/**
 * The first message on a connection to a listening server (`agentls serve --listen`).
 *
 * This interface was referenced by `AgentlsWireTypes`'s JSON-Schema
 * via the `definition` "AttachParams".
 */
export interface AttachParams {
  /**
   * Serve flags for this connection's sessions, as `agentls serve` takes them
   * (`--provider`, `--model`, `--permission-mode`, ...); with `door: "print"`, the flags of
   * `agentls -p`.
   */
  argv?: string[] | null;
  /**
   * The client's working directory (absolute): a relative `cwd` of this connection's
   * `session/new` is taken from there.
   */
  cwd?: string | null;
  /**
   * Absent or `serve`: JSON-RPC. `print`: after the answer the connection carries one `agentls -p` / stream-json run,
   * its stdin, stdout, stderr, signals and exit code multiplexed (`server.frontends.mux`).
   */
  door?: ("serve" | "print") | null;
  /**
   * The environment this connection's sessions use (API keys, base URLs, `AGENTLS_*`, and
   * what their commands inherit), instead of the server's own. Never logged, never seen by
   * another connection. Absent: the server's environment.
   */
  env?: {
    [k: string]: string;
  } | null;
  /**
   * The server's token (`--token-file`). Required on TCP; on a WebSocket it may come in the
   * upgrade's `Authorization: Bearer` header instead; a Unix socket needs none.
   */
  token?: string | null;
}
/**
 * This interface was referenced by `AgentlsWireTypes`'s JSON-Schema
 * via the `definition` "AttachResult".
 */
export interface AttachResult {
  /**
   * The resident server's process id.
   */
  pid: number;
  /**
   * The server's agentls version.
   */
  version: string;
}
/**
 * A background subagent of a session (`task` with `background: true`).
 *
 * This interface was referenced by `AgentlsWireTypes`'s JSON-Schema
 * via the `definition` "BackgroundSubagent".
 */
export interface BackgroundSubagent {
  /**
   * What it did last (the title of its latest tool call), while it runs.
   */
  activity?: string | null;
  description: string;
  profile: string;
  /**
   * Its report has been handed to the model.
   */
  reported: boolean;
  status: "running" | "completed" | "failed" | "aborted";
  /**
   * The `task` call's toolCallId: the id of its `subagent` updates.
   */
  taskId: string;
  /**
   * The turn that started it; it may outlive that turn.
   */
  turnId: string;
}
/**
 * A skill or subagent profile file that was skipped, and why.
 *
 * This interface was referenced by `AgentlsWireTypes`'s JSON-Schema
 * via the `definition` "CatalogWarning".
 */
export interface CatalogWarning {
  message: string;
  path: string;
}
/**
 * This turn changed files through agentls's file tools (write, edit), and kept what each
 * had before: `session/rewind` to this turn restores them. Sent when the turn first changes
 * a file; `files` lists all it changed so far. Changes made by shell commands are not kept.
 *
 * This interface was referenced by `AgentlsWireTypes`'s JSON-Schema
 * via the `definition` "Checkpoint".
 */
export interface Checkpoint {
  /**
   * Absolute paths, in the order the turn first changed them.
   */
  files: string[];
  kind: "checkpoint";
}
/**
 * History was compacted to fit the context window (token estimates).
 *
 * This interface was referenced by `AgentlsWireTypes`'s JSON-Schema
 * via the `definition` "Compaction".
 */
export interface Compaction {
  after: number;
  before: number;
  kind: "compaction";
}
/**
 * A whole-file change made by an edit tool.
 *
 * This interface was referenced by `AgentlsWireTypes`'s JSON-Schema
 * via the `definition` "Diff".
 */
export interface Diff {
  newText: string;
  /**
   * None when the file was created.
   */
  oldText?: string | null;
  path: string;
}
/**
 * No fields.
 *
 * This interface was referenced by `AgentlsWireTypes`'s JSON-Schema
 * via the `definition` "Empty".
 */
export interface Empty {}
/**
 * This interface was referenced by `AgentlsWireTypes`'s JSON-Schema
 * via the `definition` "EngineInfo".
 */
export interface EngineInfo {
  available: boolean;
  /**
   * What the engine supports: images, thinking, steer, skills (agentls's skills reach its
   * model), permissions, questions.
   */
  capabilities?: {
    [k: string]: boolean;
  } | null;
  description: string;
  id: string;
  name: string;
}
/**
 * This interface was referenced by `AgentlsWireTypes`'s JSON-Schema
 * via the `definition` "EnginesListResult".
 */
export interface EnginesListResult {
  engines: EngineInfo[];
}
/**
 * This interface was referenced by `AgentlsWireTypes`'s JSON-Schema
 * via the `definition` "ExperimentalClientCapabilities".
 */
export interface ExperimentalClientCapabilities {
  agentls?: AgentlsClientCapabilities | null;
}
/**
 * This interface was referenced by `AgentlsWireTypes`'s JSON-Schema
 * via the `definition` "ExperimentalServerCapabilities".
 */
export interface ExperimentalServerCapabilities {
  agentls: AgentlsServerCapabilities;
}
/**
 * An attached image, base64 encoded.
 *
 * This interface was referenced by `AgentlsWireTypes`'s JSON-Schema
 * via the `definition` "ImageContent".
 */
export interface ImageContent {
  /**
   * Base64 data without the `data:` prefix.
   */
  data: string;
  /**
   * image/png, image/jpeg, image/gif or image/webp.
   */
  mimeType: string;
  type: "image";
}
/**
 * This interface was referenced by `AgentlsWireTypes`'s JSON-Schema
 * via the `definition` "Implementation".
 */
export interface Implementation {
  name: string;
  version?: string | null;
}
/**
 * This interface was referenced by `AgentlsWireTypes`'s JSON-Schema
 * via the `definition` "InitializeClientCapabilities".
 */
export interface InitializeClientCapabilities {
  experimental?: ExperimentalClientCapabilities | null;
}
/**
 * LSP's `initialize` params; agentls reads `capabilities.experimental.agentls`.
 *
 * This interface was referenced by `AgentlsWireTypes`'s JSON-Schema
 * via the `definition` "InitializeParams".
 */
export interface InitializeParams {
  capabilities: InitializeClientCapabilities;
  clientInfo?: Implementation | null;
  processId?: number | null;
}
/**
 * This interface was referenced by `AgentlsWireTypes`'s JSON-Schema
 * via the `definition` "InitializeResult".
 */
export interface InitializeResult {
  capabilities: ServerCapabilities;
  serverInfo: Implementation;
}
/**
 * Only `experimental.agentls`: agentls implements none of LSP's language features.
 *
 * This interface was referenced by `AgentlsWireTypes`'s JSON-Schema
 * via the `definition` "ServerCapabilities".
 */
export interface ServerCapabilities {
  experimental: ExperimentalServerCapabilities;
}
/**
 * No fields.
 *
 * This interface was referenced by `AgentlsWireTypes`'s JSON-Schema
 * via the `definition` "InitializedParams".
 */
export interface InitializedParams {}
/**
 * This interface was referenced by `AgentlsWireTypes`'s JSON-Schema
 * via the `definition` "ListSessionsParams".
 */
export interface ListSessionsParams {
  /**
   * `nextCursor` of the previous page.
   */
  cursor?: string | null;
  /**
   * Only sessions whose workspace is this directory; all sessions when absent.
   */
  cwd?: string | null;
  /**
   * Page size (default 50).
   */
  limit?: number | null;
}
/**
 * This interface was referenced by `AgentlsWireTypes`'s JSON-Schema
 * via the `definition` "ListSessionsResult".
 */
export interface ListSessionsResult {
  /**
   * Newest first.
   */
  data: SessionSummary[];
  /**
   * Pass as `cursor` for the next page; absent on the last page.
   */
  nextCursor?: string | null;
}
/**
 * A stored session, for pickers.
 *
 * This interface was referenced by `AgentlsWireTypes`'s JSON-Schema
 * via the `definition` "SessionSummary".
 */
export interface SessionSummary {
  cwd: string;
  sessionId: string;
  /**
   * Derived from the session's first prompt.
   */
  title: string;
  /**
   * When the session last started or finished a turn (ISO 8601, UTC).
   */
  updatedAt: string;
}
/**
 * This interface was referenced by `AgentlsWireTypes`'s JSON-Schema
 * via the `definition` "LoadSessionParams".
 */
export interface LoadSessionParams {
  /**
   * MCP servers for the loaded session, as in `session/new` (they are not stored with the
   * session: their commands and environment stay with the client).
   */
  mcpServers?: {
    [k: string]: McpServerConfig;
  } | null;
  sessionId: string;
}
/**
 * How to start or reach an MCP server: a command (stdio) or a URL (streamable HTTP). The
 * shape of an entry of Claude Code's `.mcp.json`.
 *
 * This interface was referenced by `AgentlsWireTypes`'s JSON-Schema
 * via the `definition` "McpServerConfig".
 */
export interface McpServerConfig {
  args?: string[] | null;
  command?: string | null;
  /**
   * The server's working directory (default: the session's workspace).
   */
  cwd?: string | null;
  /**
   * Set for the server on top of a minimal environment (HOME, PATH, ...): API keys of the
   * agent are not passed on unless listed here.
   */
  env?: {
    [k: string]: string;
  } | null;
  headers?: {
    [k: string]: string;
  } | null;
  /**
   * Seconds to connect, initialize and list tools (default 30).
   */
  startupTimeout?: number | null;
  /**
   * Seconds one tool call may take (default 600).
   */
  toolTimeout?: number | null;
  /**
   * Inferred when absent: `http` with a `url`, else `stdio`.
   */
  type?: ("stdio" | "http") | null;
  url?: string | null;
}
/**
 * A file (and optionally a line) a tool call touches, for follow-along in the editor.
 *
 * This interface was referenced by `AgentlsWireTypes`'s JSON-Schema
 * via the `definition` "Location".
 */
export interface Location {
  line?: number | null;
  path: string;
}
/**
 * This interface was referenced by `AgentlsWireTypes`'s JSON-Schema
 * via the `definition` "McpImplementation".
 */
export interface McpImplementation {
  name: string;
  version: string;
}
/**
 * This interface was referenced by `AgentlsWireTypes`'s JSON-Schema
 * via the `definition` "McpListParams".
 */
export interface McpListParams {
  /**
   * An absolute workspace directory, when there is no session yet.
   */
  cwd?: string | null;
  /**
   * The session's workspace, as its engine sees it.
   */
  sessionId?: string | null;
}
/**
 * This interface was referenced by `AgentlsWireTypes`'s JSON-Schema
 * via the `definition` "McpListResult".
 */
export interface McpListResult {
  /**
   * Sorted by name.
   */
  servers: McpServerInfo[];
}
/**
 * An MCP server of a workspace or session, for the editor's MCP panel.
 *
 * This interface was referenced by `AgentlsWireTypes`'s JSON-Schema
 * via the `definition` "McpServerInfo".
 */
export interface McpServerInfo {
  /**
   * Why it failed, or what to do to start it.
   */
  error?: string | null;
  name: string;
  /**
   * Name and version the server gave when it connected.
   */
  serverInfo?: McpImplementation | null;
  /**
   * `user`: the user config or `--mcp-config`; `project`: `.mcp.json` or the project config;
   * `client`: `session/new`.
   */
  source: "user" | "project" | "client";
  status: "starting" | "connected" | "failed" | "stopped" | "disabled" | "untrusted" | "configured";
  tools?: McpToolInfo[];
  transport: "stdio" | "http";
}
/**
 * A tool an MCP server gives the session.
 *
 * This interface was referenced by `AgentlsWireTypes`'s JSON-Schema
 * via the `definition` "McpToolInfo".
 */
export interface McpToolInfo {
  description?: string | null;
  /**
   * As the model calls it (and as permission rules name it): `mcp__<server>__<tool>`.
   */
  name: string;
  title?: string | null;
  /**
   * The server's own name for it.
   */
  tool: string;
}
/**
 * An MCP server of the session: its state at the session's first turn, then every change
 * (a crash mid-session, a stop).
 *
 * This interface was referenced by `AgentlsWireTypes`'s JSON-Schema
 * via the `definition` "McpStatus".
 */
export interface McpStatus {
  /**
   * Why it failed or is not started.
   */
  error?: string | null;
  kind: "mcp_status";
  /**
   * The server's configured name.
   */
  server: string;
  status: "starting" | "connected" | "failed" | "stopped" | "disabled" | "untrusted" | "configured";
  /**
   * How many tools it gives the session, when connected.
   */
  tools?: number | null;
}
/**
 * The session's permission mode changed during a turn: the user approved the plan a
 * plan-mode turn wrote (`reason: "plan approved"`).
 *
 * This interface was referenced by `AgentlsWireTypes`'s JSON-Schema
 * via the `definition` "ModeChanged".
 */
export interface ModeChanged {
  kind: "mode_changed";
  mode: "default" | "plan" | "acceptEdits" | "bypassPermissions";
  reason: string;
}
/**
 * This interface was referenced by `AgentlsWireTypes`'s JSON-Schema
 * via the `definition` "ModeInfo".
 */
export interface ModeInfo {
  description: string;
  id: "default" | "plan" | "acceptEdits" | "bypassPermissions";
  name: string;
}
/**
 * This interface was referenced by `AgentlsWireTypes`'s JSON-Schema
 * via the `definition` "ModeState".
 */
export interface ModeState {
  availableModes: ModeInfo[];
  currentModeId: "default" | "plan" | "acceptEdits" | "bypassPermissions";
}
/**
 * This interface was referenced by `AgentlsWireTypes`'s JSON-Schema
 * via the `definition` "ModelInfo".
 */
export interface ModelInfo {
  contextWindow?: number | null;
  modelId: string;
  name: string;
  provider: string;
  vision?: boolean;
}
/**
 * This interface was referenced by `AgentlsWireTypes`'s JSON-Schema
 * via the `definition` "ModelState".
 */
export interface ModelState {
  availableModels: ModelInfo[];
  currentModelId: string;
}
/**
 * The session moved to another model (vision routing, set_model).
 *
 * This interface was referenced by `AgentlsWireTypes`'s JSON-Schema
 * via the `definition` "ModelSwitched".
 */
export interface ModelSwitched {
  kind: "model_switched";
  model: string;
  reason: string;
}
/**
 * This interface was referenced by `AgentlsWireTypes`'s JSON-Schema
 * via the `definition` "ModelsListParams".
 */
export interface ModelsListParams {
  provider?: string | null;
}
/**
 * This interface was referenced by `AgentlsWireTypes`'s JSON-Schema
 * via the `definition` "ModelsListResult".
 */
export interface ModelsListResult {
  models: ModelInfo[];
}
/**
 * This interface was referenced by `AgentlsWireTypes`'s JSON-Schema
 * via the `definition` "NewSessionParams".
 */
export interface NewSessionParams {
  /**
   * Absolute path of the workspace the agent works in.
   */
  cwd: string;
  engine?: string | null;
  /**
   * MCP servers for this session, by name, on top of the configured ones (a name here
   * replaces a configured server of that name). Their tools are `mcp__<name>__<tool>`.
   */
  mcpServers?: {
    [k: string]: McpServerConfig;
  } | null;
  mode?: ("default" | "plan" | "acceptEdits" | "bypassPermissions") | null;
  model?: string | null;
  provider?: string | null;
  /**
   * Where this session's commands run (the user's choice; a project config can only make
   * it stricter): `workspace-write` (default where a sandbox can be made), `read-only`, `off`.
   * `initialize` says whether a sandbox can be made here.
   */
  sandbox?: ("workspace-write" | "read-only" | "off") | null;
  /**
   * Run the session as this subagent profile.
   */
  subagent?: string | null;
  /**
   * The editor's own workspace trust for `cwd` (VS Code's `workspace.isTrusted`): true lets
   * the project config set a mode and allow rules and its skills grant tools. Absent or false:
   * the user config's `trustedProjects` and the `--trust` flag decide.
   */
  workspaceTrusted?: boolean | null;
}
/**
 * Mirror of a `session/request_permission` request and its outcome.
 *
 * This interface was referenced by `AgentlsWireTypes`'s JSON-Schema
 * via the `definition` "PermissionNote".
 */
export interface PermissionNote {
  kind: "permission";
  outcome?: string | null;
  toolCallId: string;
}
/**
 * This interface was referenced by `AgentlsWireTypes`'s JSON-Schema
 * via the `definition` "PermissionOption".
 */
export interface PermissionOption {
  kind: "allow_once" | "allow_always" | "reject_once" | "reject_always";
  name: string;
  optionId: string;
}
/**
 * This interface was referenced by `AgentlsWireTypes`'s JSON-Schema
 * via the `definition` "PermissionOutcome".
 */
export interface PermissionOutcome {
  optionId?: string | null;
  outcome: "selected" | "cancelled";
}
/**
 * The agent's todo list, replaced whole on every change.
 *
 * This interface was referenced by `AgentlsWireTypes`'s JSON-Schema
 * via the `definition` "Plan".
 */
export interface Plan {
  entries: PlanEntry[];
  kind: "plan";
}
/**
 * This interface was referenced by `AgentlsWireTypes`'s JSON-Schema
 * via the `definition` "PlanEntry".
 */
export interface PlanEntry {
  content: string;
  id: string;
  status: "pending" | "in_progress" | "completed" | "cancelled";
}
/**
 * A place in a text document, 0-based (an LSP `Position`).
 *
 * This interface was referenced by `AgentlsWireTypes`'s JSON-Schema
 * via the `definition` "Position".
 */
export interface Position {
  character?: number;
  line: number;
}
/**
 * This interface was referenced by `AgentlsWireTypes`'s JSON-Schema
 * via the `definition` "PromptOptions".
 */
export interface PromptOptions {
  /**
   * Use this model for this turn and the ones after it.
   */
  model?: string | null;
  /**
   * Provider options for this turn only, laid out as `llm.providerOptions` (our names or the
   * API's, a section per provider id), over the configured ones and an active skill's; thinking
   * options still come last. A key the session's provider takes none of is named in a warning.
   */
  providerOptions?: {
    [k: string]: unknown;
  } | null;
  think?: ("think" | "hard" | "ultra") | boolean | null;
  thinkingBudget?: number | null;
}
/**
 * This interface was referenced by `AgentlsWireTypes`'s JSON-Schema
 * via the `definition` "PromptParams".
 */
export interface PromptParams {
  options?: PromptOptions | null;
  /**
   * @minItems 1
   */
  prompt: [
    TextContent | ImageContent | ResourceLink | ResourceContent,
    ...(TextContent | ImageContent | ResourceLink | ResourceContent)[]
  ];
  sessionId: string;
}
/**
 * Plain text typed by the user.
 *
 * This interface was referenced by `AgentlsWireTypes`'s JSON-Schema
 * via the `definition` "TextContent".
 */
export interface TextContent {
  text: string;
  type: "text";
}
/**
 * A reference to a file the user attached by path or URI; the model is told where it is
 * and reads it with its tools if it needs to.
 *
 * This interface was referenced by `AgentlsWireTypes`'s JSON-Schema
 * via the `definition` "ResourceLink".
 */
export interface ResourceLink {
  context?: ("selection" | "file" | "diagnostics" | "terminal") | null;
  mimeType?: string | null;
  name?: string | null;
  /**
   * The part of the file meant (e.g. the selection).
   */
  range?: Range | null;
  type: "resource_link";
  uri: string;
}
/**
 * A span of a text document, 0-based, `end` exclusive (an LSP `Range`).
 *
 * This interface was referenced by `AgentlsWireTypes`'s JSON-Schema
 * via the `definition` "Range".
 */
export interface Range {
  end: Position;
  start: Position;
}
/**
 * Text the editor attached with the prompt (a selection, a file, the problems, terminal
 * output): the model gets it as clearly delimited context with its path and line range.
 *
 * This interface was referenced by `AgentlsWireTypes`'s JSON-Schema
 * via the `definition` "ResourceContent".
 */
export interface ResourceContent {
  context?: ("selection" | "file" | "diagnostics" | "terminal") | null;
  mimeType?: string | null;
  name?: string | null;
  /**
   * Where `text` is in the file the URI names (e.g. the selection).
   */
  range?: Range | null;
  text: string;
  type: "resource";
  uri: string;
}
/**
 * This interface was referenced by `AgentlsWireTypes`'s JSON-Schema
 * via the `definition` "PromptResult".
 */
export interface PromptResult {
  error?: string | null;
  stopReason:
    "end_turn" | "max_tokens" | "max_turn_requests" | "refusal" | "cancelled" | "error" | "timeout";
  /**
   * As on `turn_end`: `false` when the session store failed to write this turn's events.
   */
  stored?: boolean | null;
  terminal: "completed" | "aborted" | "failed" | "timed_out";
  turnId: string;
  /**
   * As on `turn_end`: accepted steers the turn ended before taking; send them again.
   */
  unsentSteers?: string[] | null;
  usage: Usage;
}
/**
 * Token counts, summed over the model calls they cover.
 *
 * This interface was referenced by `AgentlsWireTypes`'s JSON-Schema
 * via the `definition` "Usage".
 */
export interface Usage {
  cacheReadTokens?: number;
  cacheWriteTokens?: number;
  inputTokens?: number;
  outputTokens?: number;
}
/**
 * Mirror of a `session/ask_question` request and its outcome, for logs and observers.
 *
 * This interface was referenced by `AgentlsWireTypes`'s JSON-Schema
 * via the `definition` "QuestionNote".
 */
export interface QuestionNote {
  kind: "question";
  outcome?: string | null;
  questions: {
    [k: string]: unknown;
  }[];
}
/**
 * This interface was referenced by `AgentlsWireTypes`'s JSON-Schema
 * via the `definition` "RequestPermissionParams".
 */
export interface RequestPermissionParams {
  options: PermissionOption[];
  sessionId: string;
  toolCall: ToolCallRef;
  turnId: string;
}
/**
 * This interface was referenced by `AgentlsWireTypes`'s JSON-Schema
 * via the `definition` "ToolCallRef".
 */
export interface ToolCallRef {
  input: {
    [k: string]: unknown;
  };
  name: string;
  /**
   * For a file edit or write: the whole file before and after the call, as it would be
   * written now, so an editor can show it in its own diff view. Allowing with `updatedInput`
   * `{"content": ...}` writes that text instead (the user's own version of the change).
   */
  proposal?: Diff | null;
  /**
   * Why the user is being asked (e.g. "runs rm -rf", "path outside the workspace").
   */
  reason?: string | null;
  /**
   * How much harm the call can do if it goes wrong: `low` (reads), `medium` (file writes, the
   * network), `high` (commands, git history).
   */
  risk?: ("low" | "medium" | "high") | null;
  title: string;
  toolCallId: string;
}
/**
 * This interface was referenced by `AgentlsWireTypes`'s JSON-Schema
 * via the `definition` "RequestPermissionResult".
 */
export interface RequestPermissionResult {
  /**
   * When rejecting: the reason, passed on to the model.
   */
  message?: string | null;
  outcome: PermissionOutcome;
  /**
   * When allowing: run the tool with this input instead of the one requested. For a request
   * with a `proposal`, `{"content": "<the whole file>"}` writes that text to the file instead
   * of the proposed change (the model is told the user changed it).
   */
  updatedInput?: {
    [k: string]: unknown;
  } | null;
}
/**
 * This interface was referenced by `AgentlsWireTypes`'s JSON-Schema
 * via the `definition` "RewindParams".
 */
export interface RewindParams {
  /**
   * Also go back in the conversation: a new session (a branch) holds the history before the
   * turn; the original session is kept, unchanged, and stays loadable.
   */
  conversation?: boolean;
  /**
   * Change nothing: say what would be restored, and which files changed since.
   */
  dryRun?: boolean;
  /**
   * Restore the files those turns changed through agentls's file tools to what they were
   * before the turn (files they created are deleted).
   */
  files?: boolean;
  sessionId: string;
  /**
   * Undo this turn and every later one.
   */
  turnId: string;
}
/**
 * This interface was referenced by `AgentlsWireTypes`'s JSON-Schema
 * via the `definition` "RewindResult".
 */
export interface RewindResult {
  /**
   * Dry run: files changed outside agentls since it last wrote them; a real rewind refuses
   * (`-31006`) while there are any.
   */
  conflicts?: string[];
  /**
   * Files the turns created, deleted (or that would be).
   */
  removed: string[];
  /**
   * Files given back their content from before the turn (or that would be, on a dry run).
   */
  restored: string[];
  /**
   * With `conversation`: the new session, to load or prompt; the old one is unchanged.
   */
  sessionId?: string | null;
}
/**
 * One journal entry that matches, best match first.
 *
 * This interface was referenced by `AgentlsWireTypes`'s JSON-Schema
 * via the `definition` "SearchHit".
 */
export interface SearchHit {
  /**
   * Whose text matched: `user`, `assistant`, `thinking`, `tool` or `plan`.
   */
  role: string;
  sessionId: string;
  /**
   * The matching passage; matched terms are wrapped in `**`, cuts marked with `…`.
   */
  snippet: string;
  /**
   * When the entry was recorded (ISO 8601, UTC).
   */
  timestamp: string;
}
/**
 * This interface was referenced by `AgentlsWireTypes`'s JSON-Schema
 * via the `definition` "SearchSessionsParams".
 */
export interface SearchSessionsParams {
  /**
   * Most hits returned (default 20).
   */
  limit?: number | null;
  /**
   * FTS5 query (words, "phrases", prefix*, AND/OR/NOT); plain text works too.
   */
  query: string;
}
/**
 * This interface was referenced by `AgentlsWireTypes`'s JSON-Schema
 * via the `definition` "SearchSessionsResult".
 */
export interface SearchSessionsResult {
  hits: SearchHit[];
}
/**
 * This interface was referenced by `AgentlsWireTypes`'s JSON-Schema
 * via the `definition` "SessionInfoResult".
 */
export interface SessionInfoResult {
  engine: string;
  model: string;
  models: ModelState;
  modes: ModeState;
  provider: string;
  sessionId: string;
}
/**
 * This interface was referenced by `AgentlsWireTypes`'s JSON-Schema
 * via the `definition` "SessionRef".
 */
export interface SessionRef {
  sessionId: string;
}
/**
 * This interface was referenced by `AgentlsWireTypes`'s JSON-Schema
 * via the `definition` "SessionUpdateParams".
 */
export interface SessionUpdateParams {
  /**
   * Per-session, strictly increasing across turns.
   */
  seq: number;
  sessionId: string;
  turnId: string;
  update:
    | UserMessageChunk
    | AgentMessageChunk
    | AgentThoughtChunk
    | ToolCall
    | ToolCallUpdate
    | StepFinish
    | Plan
    | QuestionNote
    | PermissionNote
    | SubagentUpdate
    | ModelSwitched
    | ModeChanged
    | Compaction
    | StreamRetry
    | McpStatus
    | WorkspaceTrust
    | StoreWarning
    | Checkpoint
    | TurnEnd;
}
/**
 * Text the user sent (replayed by session/load), or reports handed to the model.
 *
 * This interface was referenced by `AgentlsWireTypes`'s JSON-Schema
 * via the `definition` "UserMessageChunk".
 */
export interface UserMessageChunk {
  kind: "user_message_chunk";
  /**
   * `report`: not the user's words but background subagents' reports, handed to the model
   * as a message of the conversation. Absent for what the user sent.
   */
  origin?: "report" | null;
  text: string;
}
/**
 * The model asked for a tool; sent before it runs (and before any permission prompt).
 *
 * This interface was referenced by `AgentlsWireTypes`'s JSON-Schema
 * via the `definition` "ToolCall".
 */
export interface ToolCall {
  input: {
    [k: string]: unknown;
  };
  kind: "tool_call";
  locations?: Location[] | null;
  name: string;
  /**
   * Set on a call a subagent made: the `toolCallId` of the `task` call that started it
   * (its own `toolCallId` is then `<parent>/<id>`, unique in the session).
   */
  parentToolCallId?: string | null;
  /**
   * Short human title for the tool card, e.g. "Read src/app.py".
   */
  title: string;
  toolCallId: string;
  /**
   * What the tool does, for the card's icon.
   */
  toolKind:
    "read" | "edit" | "delete" | "move" | "search" | "execute" | "fetch" | "think" | "other";
}
/**
 * Progress or outcome of a tool call.
 *
 * This interface was referenced by `AgentlsWireTypes`'s JSON-Schema
 * via the `definition` "ToolCallUpdate".
 */
export interface ToolCallUpdate {
  diff?: Diff | null;
  error?: string | null;
  kind: "tool_call_update";
  /**
   * The result as the model sees it (capped at 50,000 characters); while `in_progress`, what
   * a running command has printed so far (its last 8,000 characters).
   */
  output?: string | null;
  /**
   * As on the `tool_call` this updates.
   */
  parentToolCallId?: string | null;
  status: "in_progress" | "completed" | "failed" | "denied";
  toolCallId: string;
}
/**
 * One model call finished.
 *
 * This interface was referenced by `AgentlsWireTypes`'s JSON-Schema
 * via the `definition` "StepFinish".
 */
export interface StepFinish {
  finishReason: string;
  kind: "step_finish";
  step: number;
  usage: Usage;
}
/**
 * A subagent started, progressed or finished.
 *
 * This interface was referenced by `AgentlsWireTypes`'s JSON-Schema
 * via the `definition` "SubagentUpdate".
 */
export interface SubagentUpdate {
  id: string;
  kind: "subagent";
  outputFiles?: string[] | null;
  profile: string;
  status: "running" | "completed" | "failed" | "aborted";
  summary?: string | null;
}
/**
 * The model call failed with a transient error (429, 5xx, dropped connection, cut stream)
 * and is retried after `delay` seconds. Everything streamed since the last `step_finish`
 * (message and thought chunks, announced tool calls) is discarded: the retry streams the
 * reply again from its start.
 *
 * This interface was referenced by `AgentlsWireTypes`'s JSON-Schema
 * via the `definition` "StreamRetry".
 */
export interface StreamRetry {
  /**
   * 1 for the first retry.
   */
  attempt: number;
  /**
   * Seconds until the retry starts.
   */
  delay: number;
  /**
   * What went wrong, as the provider reported it.
   */
  error: string;
  kind: "stream_retry";
}
/**
 * The workspace is not trusted, so agentls ignored what its files asked for: settings of
 * `.agentls/config.json` that would widen permissions (a mode, allow rules, `null`s), the
 * `allowed-tools` of its skills. Sent at the session's first turn. A client may offer
 * "Trust this folder": trusting it (the editor's workspace trust passed as `workspaceTrusted`
 * on `session/new`, the user config's `trustedProjects`, `--trust`) applies to new sessions.
 *
 * This interface was referenced by `AgentlsWireTypes`'s JSON-Schema
 * via the `definition` "WorkspaceTrust".
 */
export interface WorkspaceTrust {
  /**
   * The workspace is the home folder, `/` or a folder above the home folder (an editor with
   * no folder open): no command runs unasked there and no `trustedProjects` entry trusts it. Sent
   * at the first turn whether or not anything was ignored; a client may propose opening a
   * project folder instead of offering to trust this one.
   */
  broad?: boolean | null;
  /**
   * The workspace folder, as the user would add it to `trustedProjects`.
   */
  cwd: string;
  /**
   * What was ignored, in words (`permissions.mode (bypassPermissions)`, `skill x: allowed-tools`).
   */
  ignored: string[];
  kind: "workspace_trust";
  trusted: boolean;
}
/**
 * The session store could not write this session's events (the disk is full, the
 * database cannot be written). The session goes on in memory; the writes are kept and
 * retried with the next ones, and the turn's `turn_end` and result say `stored: false`.
 *
 * This interface was referenced by `AgentlsWireTypes`'s JSON-Schema
 * via the `definition` "StoreWarning".
 */
export interface StoreWarning {
  /**
   * What the store reported, e.g. `database or disk is full`.
   */
  error: string;
  kind: "store_warning";
  /**
   * Writes waiting for the store.
   */
  pending: number;
}
/**
 * Always the last update of a turn; mirrors the `session/prompt` result.
 *
 * This interface was referenced by `AgentlsWireTypes`'s JSON-Schema
 * via the `definition` "TurnEnd".
 */
export interface TurnEnd {
  error?: string | null;
  kind: "turn_end";
  stopReason:
    "end_turn" | "max_tokens" | "max_turn_requests" | "refusal" | "cancelled" | "error" | "timeout";
  /**
   * `false`: the session store failed to write some of this session's events up to this
   * turn's end (see `store_warning`); they are kept in memory and written once the store
   * accepts writes again. Absent when everything reached the store (or there is no store).
   */
  stored?: boolean | null;
  terminal: "completed" | "aborted" | "failed" | "timed_out";
  /**
   * Steers accepted (`queued: true`) that the turn ended before taking: never sent to the
   * model and dropped by the server; send them again if they still apply.
   */
  unsentSteers?: string[] | null;
  usage: Usage;
}
/**
 * This interface was referenced by `AgentlsWireTypes`'s JSON-Schema
 * via the `definition` "SetModeParams".
 */
export interface SetModeParams {
  modeId: "default" | "plan" | "acceptEdits" | "bypassPermissions";
  sessionId: string;
}
/**
 * This interface was referenced by `AgentlsWireTypes`'s JSON-Schema
 * via the `definition` "SetModelParams".
 */
export interface SetModelParams {
  modelId: string;
  sessionId: string;
}
/**
 * A skill: a SKILL.md folder the model runs with the `skill` tool or the user as `/name`.
 *
 * This interface was referenced by `AgentlsWireTypes`'s JSON-Schema
 * via the `definition` "SkillInfo".
 */
export interface SkillInfo {
  /**
   * Tools that run without asking while the skill is active.
   */
  allowedTools?: string[];
  description: string;
  model?: string | null;
  /**
   * The model can run it with the `skill` tool.
   */
  modelInvocable: boolean;
  name: string;
  /**
   * The skill's SKILL.md file.
   */
  path: string;
  /**
   * Which discovery layer it comes from (a later layer wins on a name clash).
   */
  source: "builtin" | "user" | "project";
  /**
   * The user can run it as `/name args` at the start of a prompt.
   */
  userInvocable: boolean;
  version?: string | null;
}
/**
 * This interface was referenced by `AgentlsWireTypes`'s JSON-Schema
 * via the `definition` "SkillsListParams".
 */
export interface SkillsListParams {
  /**
   * An absolute workspace directory, when there is no session yet.
   */
  cwd?: string | null;
  /**
   * The session's workspace, as its engine sees it.
   */
  sessionId?: string | null;
}
/**
 * This interface was referenced by `AgentlsWireTypes`'s JSON-Schema
 * via the `definition` "SkillsListResult".
 */
export interface SkillsListResult {
  /**
   * Sorted by name.
   */
  skills: SkillInfo[];
  warnings?: CatalogWarning[];
}
/**
 * This interface was referenced by `AgentlsWireTypes`'s JSON-Schema
 * via the `definition` "SteerParams".
 */
export interface SteerParams {
  /**
   * @minItems 1
   */
  prompt: [
    TextContent | ImageContent | ResourceLink | ResourceContent,
    ...(TextContent | ImageContent | ResourceLink | ResourceContent)[]
  ];
  sessionId: string;
}
/**
 * This interface was referenced by `AgentlsWireTypes`'s JSON-Schema
 * via the `definition` "SteerResult".
 */
export interface SteerResult {
  queued: boolean;
}
/**
 * This interface was referenced by `AgentlsWireTypes`'s JSON-Schema
 * via the `definition` "StopSubagentParams".
 */
export interface StopSubagentParams {
  sessionId: string;
  taskId: string;
}
/**
 * This interface was referenced by `AgentlsWireTypes`'s JSON-Schema
 * via the `definition` "StopSubagentResult".
 */
export interface StopSubagentResult {
  /**
   * False when it had already finished (or was stopped before).
   */
  stopped: boolean;
}
/**
 * A subagent profile the `task` tool can start.
 *
 * This interface was referenced by `AgentlsWireTypes`'s JSON-Schema
 * via the `definition` "SubagentInfo".
 */
export interface SubagentInfo {
  description: string;
  /**
   * Model calls it may make before it must stop.
   */
  maxSteps: number;
  model?: string | null;
  name: string;
  source: "builtin" | "user" | "project";
  /**
   * The tools it may use; absent means every tool.
   */
  tools?: string[] | null;
}
/**
 * This interface was referenced by `AgentlsWireTypes`'s JSON-Schema
 * via the `definition` "SubagentsListParams".
 */
export interface SubagentsListParams {
  /**
   * An absolute workspace directory, when there is no session yet.
   */
  cwd?: string | null;
  /**
   * The session's workspace, as its engine sees it.
   */
  sessionId?: string | null;
}
/**
 * This interface was referenced by `AgentlsWireTypes`'s JSON-Schema
 * via the `definition` "SubagentsListResult".
 */
export interface SubagentsListResult {
  /**
   * With `sessionId`: the session's background subagents, running and finished, oldest
   * first.
   */
  background?: BackgroundSubagent[];
  subagents: SubagentInfo[];
  warnings?: CatalogWarning[];
}

/** Every method name, from the method table (protocol/methods.py). */
export const Method = {
  ConnectionAttach: "connection/attach",
  EnginesList: "engines/list",
  Exit: "exit",
  Initialize: "initialize",
  Initialized: "initialized",
  McpList: "mcp/list",
  ModelsList: "models/list",
  SessionAskQuestion: "session/ask_question",
  SessionCancel: "session/cancel",
  SessionClose: "session/close",
  SessionList: "session/list",
  SessionLoad: "session/load",
  SessionNew: "session/new",
  SessionPrompt: "session/prompt",
  SessionRequestPermission: "session/request_permission",
  SessionRewind: "session/rewind",
  SessionSearch: "session/search",
  SessionSetMode: "session/set_mode",
  SessionSetModel: "session/set_model",
  SessionSteer: "session/steer",
  SessionUpdate: "session/update",
  Shutdown: "shutdown",
  SkillsList: "skills/list",
  SubagentsList: "subagents/list",
  SubagentsStop: "subagents/stop",
} as const;
export type MethodName = (typeof Method)[keyof typeof Method];

export interface ClientRequests {
  /** Authenticate a connection to a listening server and give it its environment; only as the connection's first message, and required first on TCP. */
  "connection/attach": { params: AttachParams; result: AttachResult };
  /** Engines this server can run. */
  "engines/list": { params: Empty; result: EnginesListResult };
  /** The first request; any other before it is `-32002` (ServerNotInitialized). */
  "initialize": { params: InitializeParams; result: InitializeResult };
  /** MCP servers of a session (live status and tools) or of a workspace (as configured). */
  "mcp/list": { params: McpListParams; result: McpListResult };
  /** Models known to the catalogue, for pickers. */
  "models/list": { params: ModelsListParams; result: ModelsListResult };
  /** Free the session's resources (a running turn is cancelled); a stored session stays loadable. */
  "session/close": { params: SessionRef; result: Empty };
  /** Stored sessions, newest first, a page at a time. */
  "session/list": { params: ListSessionsParams; result: ListSessionsResult };
  /** Open a stored session: its history is replayed as `session/update` events before the answer, then the session takes prompts again with its full context. */
  "session/load": { params: LoadSessionParams; result: SessionInfoResult };
  /** Create a session in a workspace. */
  "session/new": { params: NewSessionParams; result: SessionInfoResult };
  /** Run one turn; answers when the turn reaches its terminal. Events stream meanwhile. */
  "session/prompt": { params: PromptParams; result: PromptResult };
  /** Undo a turn and every later one: restore the files they changed (see `checkpoint` updates) and, if asked, branch the conversation before it. Refused while a turn runs (`-31002`) and when a file changed outside agentls since (`-31006`). */
  "session/rewind": { params: RewindParams; result: RewindResult };
  /** Full-text search over what every stored session showed the user. */
  "session/search": { params: SearchSessionsParams; result: SearchSessionsResult };
  /** Switch permission mode; takes effect on the next tool call. */
  "session/set_mode": { params: SetModeParams; result: Empty };
  /** Switch model; takes effect on the next model call. */
  "session/set_model": { params: SetModelParams; result: Empty };
  /** Queue a user message into the running turn, before its next model call. */
  "session/steer": { params: SteerParams; result: SteerResult };
  /** End every running turn (`aborted`), then answer `null`. */
  "shutdown": { params: null; result: null };
  /** Skills a workspace can run (slash commands, the `skill` tool) and files that were skipped. */
  "skills/list": { params: SkillsListParams; result: SkillsListResult };
  /** Subagent profiles the `task` tool can start in a workspace, and a session's background subagents. */
  "subagents/list": { params: SubagentsListParams; result: SubagentsListResult };
  /** Stop one background subagent of a session; the model is told at its next call. */
  "subagents/stop": { params: StopSubagentParams; result: StopSubagentResult };
}

export interface ClientNotifications {
  /** Exit the process (after `shutdown`). */
  "exit": null;
  /** The client has the `initialize` answer. */
  "initialized": InitializedParams;
  /** Cancel the running turn; its prompt request then answers with terminal `aborted`. */
  "session/cancel": SessionRef;
}

export interface ServerRequests {
  /** Ask the user one to four multiple-choice questions (free text allowed). */
  "session/ask_question": { params: AskQuestionParams; result: AskQuestionResult };
  /** Ask the user whether a tool call may run. */
  "session/request_permission": { params: RequestPermissionParams; result: RequestPermissionResult };
}

export interface ServerNotifications {
  /** One event of a running turn. */
  "session/update": SessionUpdateParams;
}

export type SessionUpdate = SessionUpdateParams["update"];
export type SessionUpdateKindName = SessionUpdate["kind"];
export type ContentBlock = PromptParams["prompt"][number];

/** Every error code, from protocol/errors.py. */
export const ErrorCode = {
  /** no session with that id */
  SessionNotFound: -31001,
  /** the session is running a turn; cancel it, wait, or steer */
  SessionBusy: -31002,
  /** the requested engine cannot start */
  EngineUnavailable: -31003,
  /** the model provider is unknown or not configured (e.g. missing API key) */
  ProviderUnavailable: -31004,
  /** a connection to a listening server presented no token or a wrong one; it is closed after this answer */
  Unauthorized: -31005,
  /** `session/rewind` changed nothing: files it would restore changed outside agentls since (`data.conflicts` lists them), or the turn is not this session's */
  RewindRefused: -31006,
  /** a request came before `initialize` (LSP's ServerNotInitialized) */
  ServerNotInitialized: -32002,
  /** the message is not a JSON-RPC 2.0 request or notification */
  InvalidRequest: -32600,
  /** no such method */
  MethodNotFound: -32601,
  /** params do not match the method's schema; `data` lists the failing fields */
  InvalidParams: -32602,
  /** the server failed while handling the request */
  InternalError: -32603,
  /** the frame body is not valid JSON */
  ParseError: -32700,
  /** the client cancelled the request with `$/cancelRequest` */
  RequestCancelled: -32800,
} as const;
export type ErrorCodeName = keyof typeof ErrorCode;
