package dev.agentls.core.panel;

import com.google.gson.Gson;
import com.google.gson.GsonBuilder;
import com.google.gson.JsonObject;
import dev.agentls.core.protocol.Json;
import dev.agentls.core.protocol.TaggedUnion;
import dev.agentls.core.protocol.Wire;
import java.util.List;
import java.util.Map;

/**
 * The messages between the shared chat panel ({@code editors/webview}, see its
 * {@code src/messages.ts}) and its host, tagged on {@code type}. Over JCEF the page sends with
 * {@code window.__agentHostPost(json)} and receives through {@code window.__agentReceive(json)}.
 */
public final class PanelMessages {
    private PanelMessages() {}

    /** Host to panel. */
    public sealed interface HostToPanel {
        /** state: starting | ready | restarting | stopped. */
        record Server(String state, String message) implements HostToPanel {}

        /** A new or resumed session: the transcript starts over (a resume replays updates next). */
        record Session(Wire.SessionInfoResult session, Boolean resumed, String cwd) implements HostToPanel {}

        record Update(Wire.SessionUpdateParams params) implements HostToPanel {}

        record PromptResult(Wire.PromptResult result) implements HostToPanel {}

        record PromptError(String message) implements HostToPanel {}

        record ErrorMessage(String message) implements HostToPanel {}

        record Model(String modelId) implements HostToPanel {}

        record Mode(String modeId) implements HostToPanel {}

        /** The session list, or why there is none ({@code unavailable}). */
        record Sessions(List<SessionRow> sessions, String query, String unavailable) implements HostToPanel {}

        record FocusInput() implements HostToPanel {}

        /** A permission request, asked inline on its tool card until answered or withdrawn. */
        record PermissionRequest(String requestId, Wire.RequestPermissionParams params) implements HostToPanel {}

        /** reason: answered | withdrawn (the server's {@code $/cancelRequest}, or the turn ended). */
        record PermissionClosed(String requestId, String reason) implements HostToPanel {}

        /**
         * No model to talk to (no key, no local model): the first-run card. {@code offers}: what the
         * host can set up ({@code key}, {@code local}); {@code detail}: the server's own words.
         */
        record Setup(String detail, List<String> offers) implements HostToPanel {}

        /**
         * Context chips for the composer ({@code resource} / {@code resource_link} blocks, kept raw);
         * {@code text} fills the input, {@code send} sends at once.
         */
        record Attach(List<JsonObject> blocks, String text, Boolean send) implements HostToPanel {}

        /** The active editor's file and selection, sent with each prompt; null: none. */
        record ActiveEditor(JsonObject block) implements HostToPanel {}

        /** What {@code @query} matches, best first. */
        record Mentions(String query, List<MentionItem> items) implements HostToPanel {}

        /** {@code turnId} and the later turns were undone: their files restored or removed. */
        record Rewound(String turnId, List<String> restored, List<String> removed) implements HostToPanel {}
    }

    /** What {@code @} can attach. kind: file | problems | terminal. */
    public record MentionItem(String kind, String label, String detail, String uri, JsonObject range) {}

    /** One row of the panel's session list (a stored session or a search hit). */
    public record SessionRow(String sessionId, String title, String detail, String updatedAt) {}

    /** Panel to host. */
    public sealed interface PanelToHost {
        record Ready() implements PanelToHost {}

        /** ACP-style content blocks; kept raw so that one unknown block does not lose the prompt. */
        record Prompt(List<JsonObject> prompt) implements PanelToHost {}

        record Cancel() implements PanelToHost {}

        record NewSession() implements PanelToHost {}

        record SetModel(String modelId) implements PanelToHost {}

        record ListSessions() implements PanelToHost {}

        record SearchSessions(String query) implements PanelToHost {}

        record ResumeSession(String sessionId) implements PanelToHost {}

        record OpenFile(String path, Integer line) implements PanelToHost {}

        record OpenLink(String href) implements PanelToHost {}

        record Copy(String text) implements PanelToHost {}

        /** The user asked to trust the session's folder. */
        record TrustFolder() implements PanelToHost {}

        /** The user's choice; no option id dismisses the request. {@code message}: a rejection's note. */
        record PermissionAnswer(String requestId, String optionId, String message) implements PanelToHost {}

        /** A first-run way to get a model: {@code key} or {@code local}. */
        record SetupProvider(String how) implements PanelToHost {}

        /** The user typed {@code @query}: answer with {@link HostToPanel.Mentions}. */
        record MentionQuery(String query) implements PanelToHost {}

        /** The user picked a mention: answer with {@link HostToPanel.Attach}. */
        record Mention(MentionItem item) implements PanelToHost {}

        /** Undo this turn and the later ones: ask the user, then answer {@link HostToPanel.Rewound}. */
        record Rewind(String turnId) implements PanelToHost {}

        /** Show the request's proposed change in the IDE's diff view. */
        record ReviewProposal(String requestId) implements PanelToHost {}

        /** A message type this host does not know. */
        record Unknown(String type, JsonObject raw) implements PanelToHost {}
    }

    static final TaggedUnion<HostToPanel> HOST_TO_PANEL = new TaggedUnion<>(HostToPanel.class, "type", null, null)
            .variant("server", HostToPanel.Server.class)
            .variant("session", HostToPanel.Session.class)
            .variant("update", HostToPanel.Update.class)
            .variant("promptResult", HostToPanel.PromptResult.class)
            .variant("promptError", HostToPanel.PromptError.class)
            .variant("error", HostToPanel.ErrorMessage.class)
            .variant("model", HostToPanel.Model.class)
            .variant("mode", HostToPanel.Mode.class)
            .variant("sessions", HostToPanel.Sessions.class)
            .variant("focusInput", HostToPanel.FocusInput.class)
            .variant("permissionRequest", HostToPanel.PermissionRequest.class)
            .variant("permissionClosed", HostToPanel.PermissionClosed.class)
            .variant("setup", HostToPanel.Setup.class)
            .variant("attach", HostToPanel.Attach.class)
            .variant("activeEditor", HostToPanel.ActiveEditor.class)
            .variant("mentions", HostToPanel.Mentions.class)
            .variant("rewound", HostToPanel.Rewound.class);

    static final TaggedUnion<PanelToHost> PANEL_TO_HOST = new TaggedUnion<>(PanelToHost.class, "type",
            PanelToHost.Unknown::new, m -> ((PanelToHost.Unknown) m).raw())
            .variant("ready", PanelToHost.Ready.class)
            .variant("prompt", PanelToHost.Prompt.class)
            .variant("cancel", PanelToHost.Cancel.class)
            .variant("newSession", PanelToHost.NewSession.class)
            .variant("setModel", PanelToHost.SetModel.class)
            .variant("listSessions", PanelToHost.ListSessions.class)
            .variant("searchSessions", PanelToHost.SearchSessions.class)
            .variant("resumeSession", PanelToHost.ResumeSession.class)
            .variant("openFile", PanelToHost.OpenFile.class)
            .variant("openLink", PanelToHost.OpenLink.class)
            .variant("copy", PanelToHost.Copy.class)
            .variant("trustFolder", PanelToHost.TrustFolder.class)
            .variant("permissionAnswer", PanelToHost.PermissionAnswer.class)
            .variant("setupProvider", PanelToHost.SetupProvider.class)
            .variant("mentionQuery", PanelToHost.MentionQuery.class)
            .variant("mention", PanelToHost.Mention.class)
            .variant("rewind", PanelToHost.Rewind.class)
            .variant("reviewProposal", PanelToHost.ReviewProposal.class);

    public static final Gson GSON = Json.configure(new GsonBuilder())
            .registerTypeAdapterFactory(HOST_TO_PANEL)
            .registerTypeAdapterFactory(PANEL_TO_HOST)
            .create();

    public static String write(HostToPanel message) {
        return GSON.toJson(message, HostToPanel.class);
    }

    public static HostToPanel readHostToPanel(String json) {
        return GSON.fromJson(json, HostToPanel.class);
    }

    public static String write(PanelToHost message) {
        return GSON.toJson(message, PanelToHost.class);
    }

    public static PanelToHost readPanelToHost(String json) {
        return GSON.fromJson(json, PanelToHost.class);
    }

    /** Message types with their records, for the contract test against {@code messages.ts}. */
    public static Map<String, Class<? extends HostToPanel>> hostToPanelTypes() {
        return Map.copyOf(HOST_TO_PANEL.variants());
    }

    public static Map<String, Class<? extends PanelToHost>> panelToHostTypes() {
        return Map.copyOf(PANEL_TO_HOST.variants());
    }
}
