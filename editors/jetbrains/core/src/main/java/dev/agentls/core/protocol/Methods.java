package dev.agentls.core.protocol;

import dev.agentls.core.protocol.Wire.AskQuestionParams;
import dev.agentls.core.protocol.Wire.AskQuestionResult;
import dev.agentls.core.protocol.Wire.AttachParams;
import dev.agentls.core.protocol.Wire.AttachResult;
import dev.agentls.core.protocol.Wire.Empty;
import dev.agentls.core.protocol.Wire.EnginesListResult;
import dev.agentls.core.protocol.Wire.ListSessionsParams;
import dev.agentls.core.protocol.Wire.ListSessionsResult;
import dev.agentls.core.protocol.Wire.McpListParams;
import dev.agentls.core.protocol.Wire.McpListResult;
import dev.agentls.core.protocol.Wire.RewindParams;
import dev.agentls.core.protocol.Wire.RewindResult;
import dev.agentls.core.protocol.Wire.ModelsListParams;
import dev.agentls.core.protocol.Wire.ModelsListResult;
import dev.agentls.core.protocol.Wire.NewSessionParams;
import dev.agentls.core.protocol.Wire.PromptParams;
import dev.agentls.core.protocol.Wire.PromptResult;
import dev.agentls.core.protocol.Wire.RequestPermissionParams;
import dev.agentls.core.protocol.Wire.RequestPermissionResult;
import dev.agentls.core.protocol.Wire.SearchSessionsParams;
import dev.agentls.core.protocol.Wire.SearchSessionsResult;
import dev.agentls.core.protocol.Wire.SessionInfoResult;
import dev.agentls.core.protocol.Wire.LoadSessionParams;
import dev.agentls.core.protocol.Wire.SessionRef;
import dev.agentls.core.protocol.Wire.SessionUpdateParams;
import dev.agentls.core.protocol.Wire.SetModeParams;
import dev.agentls.core.protocol.Wire.SkillsListParams;
import dev.agentls.core.protocol.Wire.SkillsListResult;
import dev.agentls.core.protocol.Wire.SubagentsListParams;
import dev.agentls.core.protocol.Wire.StopSubagentParams;
import dev.agentls.core.protocol.Wire.StopSubagentResult;
import dev.agentls.core.protocol.Wire.SubagentsListResult;
import dev.agentls.core.protocol.Wire.SetModelParams;
import dev.agentls.core.protocol.Wire.SteerParams;
import dev.agentls.core.protocol.Wire.SteerResult;
import java.util.List;
import java.util.Optional;

/**
 * The agentls method table, mirroring {@code protocol/methods.py}: each method named once, with
 * its direction and its params and result records (no result: a notification). A test checks
 * it against {@code protocol/schema/agentls.schema.json}.
 */
public final class Methods {
    private Methods() {}

    public enum Direction { CLIENT_TO_SERVER, SERVER_TO_CLIENT }

    public record Method<P, R>(String name, Direction direction, Class<P> params, Class<R> result) {
        public boolean isNotification() {
            return result == null;
        }
    }

    private static <P, R> Method<P, R> call(String name, Class<P> params, Class<R> result) {
        return new Method<>(name, Direction.CLIENT_TO_SERVER, params, result);
    }

    private static <P, R> Method<P, R> ask(String name, Class<P> params, Class<R> result) {
        return new Method<>(name, Direction.SERVER_TO_CLIENT, params, result);
    }

    public static final Method<NewSessionParams, SessionInfoResult> SESSION_NEW =
            call("session/new", NewSessionParams.class, SessionInfoResult.class);
    public static final Method<PromptParams, PromptResult> SESSION_PROMPT =
            call("session/prompt", PromptParams.class, PromptResult.class);
    public static final Method<SessionRef, Void> SESSION_CANCEL = call("session/cancel", SessionRef.class, null);
    public static final Method<SteerParams, SteerResult> SESSION_STEER =
            call("session/steer", SteerParams.class, SteerResult.class);
    public static final Method<SetModelParams, Empty> SESSION_SET_MODEL =
            call("session/set_model", SetModelParams.class, Empty.class);
    public static final Method<SetModeParams, Empty> SESSION_SET_MODE =
            call("session/set_mode", SetModeParams.class, Empty.class);
    public static final Method<SessionRef, Empty> SESSION_CLOSE = call("session/close", SessionRef.class, Empty.class);
    public static final Method<LoadSessionParams, SessionInfoResult> SESSION_LOAD =
            call("session/load", LoadSessionParams.class, SessionInfoResult.class);
    public static final Method<ListSessionsParams, ListSessionsResult> SESSION_LIST =
            call("session/list", ListSessionsParams.class, ListSessionsResult.class);
    public static final Method<SearchSessionsParams, SearchSessionsResult> SESSION_SEARCH =
            call("session/search", SearchSessionsParams.class, SearchSessionsResult.class);
    public static final Method<RewindParams, RewindResult> SESSION_REWIND =
            call("session/rewind", RewindParams.class, RewindResult.class);
    public static final Method<ModelsListParams, ModelsListResult> MODELS_LIST =
            call("models/list", ModelsListParams.class, ModelsListResult.class);
    public static final Method<Empty, EnginesListResult> ENGINES_LIST =
            call("engines/list", Empty.class, EnginesListResult.class);
    public static final Method<SessionUpdateParams, Void> SESSION_UPDATE =
            new Method<>("session/update", Direction.SERVER_TO_CLIENT, SessionUpdateParams.class, null);
    public static final Method<RequestPermissionParams, RequestPermissionResult> SESSION_REQUEST_PERMISSION =
            ask("session/request_permission", RequestPermissionParams.class, RequestPermissionResult.class);
    public static final Method<AskQuestionParams, AskQuestionResult> SESSION_ASK_QUESTION =
            ask("session/ask_question", AskQuestionParams.class, AskQuestionResult.class);

    public static final Method<SkillsListParams, SkillsListResult> SKILLS_LIST =
            call("skills/list", SkillsListParams.class, SkillsListResult.class);
    public static final Method<SubagentsListParams, SubagentsListResult> SUBAGENTS_LIST =
            call("subagents/list", SubagentsListParams.class, SubagentsListResult.class);
    public static final Method<StopSubagentParams, StopSubagentResult> SUBAGENTS_STOP =
            call("subagents/stop", StopSubagentParams.class, StopSubagentResult.class);
    public static final Method<McpListParams, McpListResult> MCP_LIST =
            call("mcp/list", McpListParams.class, McpListResult.class);

    public static final Method<AttachParams, AttachResult> CONNECTION_ATTACH =
            call("connection/attach", AttachParams.class, AttachResult.class);

    public static final List<Method<?, ?>> ALL = List.of(
            SESSION_NEW, SESSION_PROMPT, SESSION_CANCEL, SESSION_STEER, SESSION_SET_MODEL, SESSION_SET_MODE,
            SESSION_CLOSE, SESSION_LOAD, SESSION_REWIND, SESSION_LIST, SESSION_SEARCH, MODELS_LIST, ENGINES_LIST,
            SESSION_UPDATE, SESSION_REQUEST_PERMISSION, SESSION_ASK_QUESTION, SKILLS_LIST, SUBAGENTS_LIST,
            SUBAGENTS_STOP, MCP_LIST, CONNECTION_ATTACH);

    public static final int PROTOCOL_VERSION = 1;

    public static Optional<Method<?, ?>> byName(String name) {
        return ALL.stream().filter(m -> m.name().equals(name)).findFirst();
    }
}
