package dev.agentls.core.protocol;

import com.google.gson.JsonObject;
import com.google.gson.JsonPrimitive;
import com.google.gson.annotations.SerializedName;
import java.util.List;
import java.util.Map;

/**
 * The params and results of the agentls methods, as records named and shaped like the
 * {@code $defs} of {@code protocol/schema/agentls.schema.json} (a test holds them to it).
 * Field names are the wire names; a null field is absent on the wire. Literal-typed fields
 * (modes, terminals, statuses) are strings so that values added later pass through.
 */
public final class Wire {
    private Wire() {}

    /** Token counts, summed over the model calls they cover. */
    public record Usage(long inputTokens, long outputTokens, long cacheReadTokens, long cacheWriteTokens) {}

    /** A file (and optionally a line) a tool call touches. */
    public record Location(String path, Integer line) {}

    /** A whole-file change made by an edit tool; {@code oldText} is null when the file was created. */
    public record Diff(String path, String oldText, String newText) {}

    public record PlanEntry(String id, String content, String status) {}

    public record Empty() {}

    // -- sessions ---------------------------------------------------------------------------

    public record ModeInfo(String id, String name, String description) {}

    public record ModeState(String currentModeId, List<ModeInfo> availableModes) {}

    public record ModelInfo(String modelId, String name, String provider, Integer contextWindow, boolean vision) {}

    public record ModelState(String currentModelId, List<ModelInfo> availableModels) {}

    /**
     * How to start or reach an MCP server: a command (stdio) or a URL (streamable HTTP), the shape
     * of an entry of Claude Code's {@code .mcp.json}; {@code type}: stdio | http, inferred when absent.
     */
    public record McpServerConfig(String type, String command, List<String> args, Map<String, String> env, String cwd,
                                  String url, Map<String, String> headers, Double startupTimeout, Double toolTimeout) {}

    /**
     * {@code mcpServers}: MCP servers for this session by name, on top of the configured ones;
     * {@code workspaceTrusted}: the IDE's own trust in {@code cwd};
     * {@code sandbox}: where commands run ({@code workspace-write}, {@code read-only}, {@code off}).
     */
    public record NewSessionParams(String cwd, String engine, String provider, String model, String mode,
                                   String subagent, Map<String, McpServerConfig> mcpServers,
                                   Boolean workspaceTrusted, String sandbox) {
        public static NewSessionParams in(String cwd) {
            return new NewSessionParams(cwd, null, null, null, null, null, null, null, null);
        }

        public NewSessionParams withModelAndMode(String model, String mode) {
            return new NewSessionParams(cwd, engine, provider, model, mode, subagent, mcpServers, workspaceTrusted,
                    sandbox);
        }

        /** {@code trusted}: true when the IDE trusts {@code cwd}; null leaves the server to decide. */
        public NewSessionParams withWorkspaceTrusted(Boolean trusted) {
            return new NewSessionParams(cwd, engine, provider, model, mode, subagent, mcpServers, trusted, sandbox);
        }

        public NewSessionParams withSandbox(String sandbox) {
            return new NewSessionParams(cwd, engine, provider, model, mode, subagent, mcpServers, workspaceTrusted,
                    sandbox);
        }
    }

    public record SessionInfoResult(String sessionId, String engine, String model, String provider, ModeState modes,
                                    ModelState models) {}

    public record SessionRef(String sessionId) {}

    public record LoadSessionParams(String sessionId, Map<String, McpServerConfig> mcpServers) {}

    public record SetModelParams(String sessionId, String modelId) {}

    public record SetModeParams(String sessionId, String modeId) {}

    // -- turns ------------------------------------------------------------------------------

    /** {@code think}: "think" | "hard" | "ultra" | true | false. */
    public record PromptOptions(String model, JsonPrimitive think, Integer thinkingBudget, JsonObject providerOptions) {}

    public record PromptParams(String sessionId, List<ContentBlock> prompt, PromptOptions options) {}

    /** {@code terminal}: completed | aborted | failed | timed_out. */
    public record PromptResult(String turnId, String terminal, String stopReason, Usage usage, String error, List<String> unsentSteers, Boolean stored) {}

    public record SteerParams(String sessionId, List<ContentBlock> prompt) {}

    public record SteerResult(boolean queued) {}

    public record SessionUpdateParams(String sessionId, String turnId, long seq, SessionUpdate update) {}

    // -- interactions (server -> client requests) -------------------------------------------

    /**
     * The tool call a permission is asked for; {@code reason} says why the user is asked;
     * {@code proposal} (file edits and writes, else null): the whole file before and after.
     */
    public record ToolCallRef(String toolCallId, String name, String title, JsonObject input, String reason, String risk,
                              Diff proposal) {}

    /** {@code kind}: allow_once | allow_always | reject_once | reject_always. */
    public record PermissionOption(String optionId, String name, String kind) {}

    public record RequestPermissionParams(String sessionId, String turnId, ToolCallRef toolCall,
                                          List<PermissionOption> options) {}

    /** {@code outcome}: selected (with {@code optionId}) | cancelled. */
    public record PermissionOutcome(String outcome, String optionId) {}

    public record RequestPermissionResult(PermissionOutcome outcome, JsonObject updatedInput, String message) {
        public static RequestPermissionResult selected(String optionId) {
            return new RequestPermissionResult(new PermissionOutcome("selected", optionId), null, null);
        }

        public static RequestPermissionResult cancelled() {
            return new RequestPermissionResult(new PermissionOutcome("cancelled", null), null, null);
        }

        /** Allow once, writing {@code content} (the user's version of a proposed change) instead. */
        public static RequestPermissionResult allowEdited(String optionId, String content) {
            JsonObject edited = new JsonObject();
            edited.addProperty("content", content);
            return new RequestPermissionResult(new PermissionOutcome("selected", optionId), edited, null);
        }
    }

    public record QuestionOption(String label, String description) {}

    public record Question(String question, String header, List<QuestionOption> options, boolean multiSelect) {}

    public record AskQuestionParams(String sessionId, String turnId, List<Question> questions) {}

    /** Answers keyed by question text, or {@code declined}. */
    public record AskQuestionResult(Map<String, Answer> answers, Boolean declined) {
        public static AskQuestionResult answered(Map<String, Answer> answers) {
            return new AskQuestionResult(answers, null);
        }

        public static AskQuestionResult declinedByUser() {
            return new AskQuestionResult(null, true);
        }
    }

    // -- catalogues and history -------------------------------------------------------------

    public record ModelsListParams(String provider) {}

    public record ModelsListResult(List<ModelInfo> models) {}

    /** {@code capabilities}: what the engine supports (images, thinking, steer, permissions, questions). */
    public record EngineInfo(String id, String name, boolean available, String description,
                             Map<String, Boolean> capabilities) {}

    public record EnginesListResult(List<EngineInfo> engines) {}

    public record ListSessionsParams(String cwd, String cursor, Integer limit) {}

    public record SessionSummary(String sessionId, String title, String cwd, String updatedAt) {}

    public record ListSessionsResult(List<SessionSummary> data, String nextCursor) {}

    public record SearchSessionsParams(String query, Integer limit) {}

    /** Undo {@code turnId} and every later turn: its files, and with {@code conversation} a branch session. */
    public record RewindParams(String sessionId, String turnId, boolean files, boolean conversation, boolean dryRun) {}

    /** {@code conflicts}: on a dry run, files changed outside agentls since; {@code sessionId}: the branch. */
    public record RewindResult(List<String> restored, List<String> removed, List<String> conflicts, String sessionId) {}

    public record SearchHit(String sessionId, String role, String snippet, String timestamp) {}

    public record SearchSessionsResult(List<SearchHit> hits) {}

    /** A session's workspace ({@code sessionId}) or a directory ({@code cwd}); one of them is required. */
    public record SkillsListParams(String sessionId, String cwd) {}

    /** {@code source}: builtin | user | project. */
    public record SkillInfo(String name, String description, String source, String path, boolean userInvocable,
                            boolean modelInvocable, List<String> allowedTools, String version, String model) {}

    /** A skill or subagent profile file that was skipped, and why. */
    public record CatalogWarning(String path, String message) {}

    public record SkillsListResult(List<SkillInfo> skills, List<CatalogWarning> warnings) {}

    public record SubagentsListParams(String sessionId, String cwd) {}

    /** {@code tools}: absent means every tool. */
    public record SubagentInfo(String name, String description, String source, List<String> tools, int maxSteps,
                               String model) {}

    /** A session's background subagent; {@code status}: running | completed | failed | aborted. */
    public record BackgroundSubagent(String taskId, String profile, String description, String status, String turnId,
                                     String activity, boolean reported) {}

    /** {@code background}: with {@code sessionId}, the session's background subagents. */
    public record SubagentsListResult(List<SubagentInfo> subagents, List<CatalogWarning> warnings,
                                      List<BackgroundSubagent> background) {}

    public record StopSubagentParams(String sessionId, String taskId) {}

    /** {@code stopped}: false when it had already finished. */
    public record StopSubagentResult(boolean stopped) {}

    public record McpListParams(String sessionId, String cwd) {}

    /** {@code name} as the model calls it ({@code mcp__<server>__<tool>}); {@code tool}: the server's own name. */
    public record McpToolInfo(String name, String tool, String title, String description) {}

    public record McpImplementation(String name, String version) {}

    /**
     * An MCP server of a workspace or session. {@code transport}: stdio | http; {@code source}:
     * user | project | client; {@code status}: starting | connected | failed | stopped | disabled
     * | untrusted | configured.
     */
    public record McpServerInfo(String name, String transport, String source, String status, String error,
                                McpImplementation serverInfo, List<McpToolInfo> tools) {}

    public record McpListResult(List<McpServerInfo> servers) {}

    // -- lifecycle: what initialize carries each way ----------------------------------------

    /** What the client can show; each is false when absent. */
    /** {@code reportTurns}: it shows turns it did not prompt (background subagents' reports). */
    public record AgentlsClientCapabilities(boolean permissions, boolean questions, boolean images, boolean diffs,
                                            boolean reportTurns) {}

    public record ExperimentalClientCapabilities(AgentlsClientCapabilities agentls) {}

    public record InitializeClientCapabilities(ExperimentalClientCapabilities experimental) {}

    public record Implementation(String name, String version) {}

    public record InitializeParams(Long processId, Implementation clientInfo, InitializeClientCapabilities capabilities) {}

    /**
     * Where commands run by default; {@code notice} says why there is no sandbox when one was asked for.
     * {@code protectedPaths} is the wire's {@code protected} (a Java keyword).
     */
    public record SandboxStatus(String mode, String configured, boolean network, List<String> allowedHosts,
                                boolean autoAllow, String kind, String notice, Boolean networkAsk,
                                String sockets, List<String> denyRead,
                                @SerializedName("protected") List<String> protectedPaths) {}

    public record AgentlsServerCapabilities(int protocolVersion, String version, List<String> engines,
                                            List<String> providers, List<String> features, SandboxStatus sandbox) {}

    public record ExperimentalServerCapabilities(AgentlsServerCapabilities agentls) {}

    /** Only {@code experimental.agentls}: agentls implements none of LSP's language features. */
    public record ServerCapabilities(ExperimentalServerCapabilities experimental) {}

    public record InitializeResult(ServerCapabilities capabilities, Implementation serverInfo) {}

    public record InitializedParams() {}

    // -- a listening server (agentls serve --listen) --------------------------------------------

    /** The first message on a connection to a listening server; {@code door}: "serve" or "print". */
    public record AttachParams(String token, Map<String, String> env, String cwd, List<String> argv, String door) {}

    public record AttachResult(String version, long pid) {}
}
