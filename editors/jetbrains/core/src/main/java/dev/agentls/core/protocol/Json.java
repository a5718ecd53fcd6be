package dev.agentls.core.protocol;

import com.google.gson.Gson;
import com.google.gson.GsonBuilder;
import com.google.gson.JsonElement;
import com.google.gson.JsonParseException;
import com.google.gson.TypeAdapter;
import com.google.gson.stream.JsonReader;
import com.google.gson.stream.JsonToken;
import com.google.gson.stream.JsonWriter;
import java.io.IOException;
import java.lang.reflect.Type;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/** The one Gson configuration for agentls wire models: tagged unions, answers, absent nulls. */
public final class Json {
    private Json() {}

    static final TaggedUnion<ContentBlock> CONTENT = new TaggedUnion<>(ContentBlock.class, "type", null, null)
            .variant("text", ContentBlock.TextContent.class)
            .variant("image", ContentBlock.ImageContent.class)
            .variant("resource_link", ContentBlock.ResourceLink.class)
            .variant("resource", ContentBlock.ResourceContent.class);

    static final TaggedUnion<SessionUpdate> UPDATES = new TaggedUnion<>(SessionUpdate.class, "kind",
            SessionUpdate.Unknown::new, u -> ((SessionUpdate.Unknown) u).raw())
            .variant("user_message_chunk", SessionUpdate.UserMessageChunk.class)
            .variant("agent_message_chunk", SessionUpdate.AgentMessageChunk.class)
            .variant("agent_thought_chunk", SessionUpdate.AgentThoughtChunk.class)
            .variant("tool_call", SessionUpdate.ToolCall.class)
            .variant("tool_call_update", SessionUpdate.ToolCallUpdate.class)
            .variant("step_finish", SessionUpdate.StepFinish.class)
            .variant("plan", SessionUpdate.Plan.class)
            .variant("question", SessionUpdate.QuestionNote.class)
            .variant("permission", SessionUpdate.PermissionNote.class)
            .variant("subagent", SessionUpdate.SubagentUpdate.class)
            .variant("model_switched", SessionUpdate.ModelSwitched.class)
            .variant("mode_changed", SessionUpdate.ModeChanged.class)
            .variant("compaction", SessionUpdate.Compaction.class)
            .variant("stream_retry", SessionUpdate.StreamRetry.class)
            .variant("mcp_status", SessionUpdate.McpStatus.class)
            .variant("workspace_trust", SessionUpdate.WorkspaceTrust.class)
            .variant("store_warning", SessionUpdate.StoreWarning.class)
            .variant("checkpoint", SessionUpdate.Checkpoint.class)
            .variant("turn_end", SessionUpdate.TurnEnd.class);

    private static final TypeAdapter<Answer> ANSWER = new TypeAdapter<>() {
        @Override
        public void write(JsonWriter out, Answer answer) throws IOException {
            if (answer == null) {
                out.nullValue();
            } else if (!answer.multiple()) {
                out.value(answer.values().isEmpty() ? "" : answer.values().get(0));
            } else {
                out.beginArray();
                for (String value : answer.values()) out.value(value);
                out.endArray();
            }
        }

        @Override
        public Answer read(JsonReader in) throws IOException {
            JsonToken token = in.peek();
            if (token == JsonToken.NULL) {
                in.nextNull();
                return null;
            }
            if (token == JsonToken.STRING) return Answer.one(in.nextString());
            if (token != JsonToken.BEGIN_ARRAY) throw new JsonParseException("an answer is a string or a list of strings");
            List<String> values = new ArrayList<>();
            in.beginArray();
            while (in.hasNext()) values.add(in.nextString());
            in.endArray();
            return Answer.many(values);
        }
    };

    public static final Gson GSON = configure(new GsonBuilder()).create();

    /** Adds the agentls adapters to a builder (for hosts that configure their own Gson). */
    public static GsonBuilder configure(GsonBuilder builder) {
        return builder.disableHtmlEscaping()
                .registerTypeAdapterFactory(CONTENT)
                .registerTypeAdapterFactory(UPDATES)
                .registerTypeAdapter(Answer.class, ANSWER.nullSafe());
    }

    public static JsonElement toTree(Object value) {
        return GSON.toJsonTree(value);
    }

    public static <T> T fromTree(JsonElement tree, Class<T> type) {
        return GSON.fromJson(tree, type);
    }

    public static <T> T fromTree(JsonElement tree, Type type) {
        return GSON.fromJson(tree, type);
    }

    public static String write(Object value) {
        return GSON.toJson(value);
    }

    public static <T> T read(String json, Class<T> type) {
        return GSON.fromJson(json, type);
    }

    /** The {@code kind} of an update, also for kinds this client does not know. */
    public static String kindOf(SessionUpdate update) {
        return update instanceof SessionUpdate.Unknown unknown ? unknown.kind() : UPDATES.tagOf(update.getClass());
    }

    /** Every update kind this client knows, with its record. */
    public static Map<String, Class<? extends SessionUpdate>> updateKinds() {
        return Map.copyOf(UPDATES.variants());
    }

    /** Every content block type this client knows, with its record. */
    public static Map<String, Class<? extends ContentBlock>> contentTypes() {
        return Map.copyOf(CONTENT.variants());
    }
}
