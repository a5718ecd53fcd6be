package dev.agentls.core.protocol;

import com.google.gson.JsonObject;
import java.util.List;

/**
 * One event of a turn, the {@code update} of a {@code session/update} notification, tagged on
 * {@code kind}. Kinds this client does not know arrive as {@link Unknown} and are passed on
 * unchanged (clients ignore what they do not know).
 */
public sealed interface SessionUpdate {
    /** Text the user sent (replayed by session/load). */
    /** {@code origin}: {@code report} for background subagents' reports, null for the user's words. */
    record UserMessageChunk(String text, String origin) implements SessionUpdate {}

    /** A piece of the assistant's answer, streamed. */
    record AgentMessageChunk(String text) implements SessionUpdate {}

    /** A piece of the model's visible thinking, streamed. */
    record AgentThoughtChunk(String text) implements SessionUpdate {}

    /**
     * The model asked for a tool; sent before it runs and before any permission prompt.
     * {@code parentToolCallId} is set on a subagent's calls: the id of its task call.
     */
    record ToolCall(String toolCallId, String name, String title, String toolKind, JsonObject input,
                    List<Wire.Location> locations, String parentToolCallId) implements SessionUpdate {}

    /** Progress or outcome of a tool call: in_progress, completed, failed or denied. */
    record ToolCallUpdate(String toolCallId, String parentToolCallId, String status, String output,
                          String error, Wire.Diff diff) implements SessionUpdate {}

    /** One model call finished. */
    record StepFinish(int step, String finishReason, Wire.Usage usage) implements SessionUpdate {}

    /** The agent's todo list, replaced whole on every change. */
    record Plan(List<Wire.PlanEntry> entries) implements SessionUpdate {}

    /** Mirror of a session/ask_question request and its outcome. */
    record QuestionNote(List<JsonObject> questions, String outcome) implements SessionUpdate {}

    /** Mirror of a session/request_permission request and its outcome. */
    record PermissionNote(String toolCallId, String outcome) implements SessionUpdate {}

    /** A subagent started, progressed or finished. */
    record SubagentUpdate(String id, String profile, String status, String summary, List<String> outputFiles)
            implements SessionUpdate {}

    /** The session moved to another model (vision routing, set_model). */
    record ModelSwitched(String model, String reason) implements SessionUpdate {}

    /** The session's permission mode changed during a turn (the user approved a plan). */
    record ModeChanged(String mode, String reason) implements SessionUpdate {}

    /** History was compacted to fit the context window (token estimates). */
    record Compaction(long before, long after) implements SessionUpdate {}

    /** A transient model error; the reply is streamed again from its start after {@code delay} seconds. */
    record StreamRetry(int attempt, double delay, String error) implements SessionUpdate {}

    /** An MCP server of the session changed state; {@code tools}: how many it gives, when connected. */
    record McpStatus(String server, String status, String error, Integer tools) implements SessionUpdate {}

    /** The workspace is not trusted: what its config and skills asked for and did not get. */
    record WorkspaceTrust(boolean trusted, String cwd, List<String> ignored, Boolean broad) implements SessionUpdate {}

    /** The session store could not write; the session goes on in memory, {@code pending} writes wait. */
    record StoreWarning(String error, int pending) implements SessionUpdate {}

    /** The turn changed {@code files} through the file tools and kept what they held: session/rewind restores them. */
    record Checkpoint(List<String> files) implements SessionUpdate {}

    /** Always the last update of a turn; mirrors the session/prompt result. {@code stored}: false when the store failed. */
    record TurnEnd(String terminal, String stopReason, Wire.Usage usage, String error, List<String> unsentSteers, Boolean stored) implements SessionUpdate {}

    /** A kind this client does not know, kept whole. */
    record Unknown(String kind, JsonObject raw) implements SessionUpdate {}
}
