package dev.agentls.core.panel;

import static dev.agentls.core.RecordingUi.waitFor;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import dev.agentls.core.LiveServer;
import dev.agentls.core.client.AgentClient;
import dev.agentls.core.client.UserPrompts;
import dev.agentls.core.protocol.Wire;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The bridge between a JCEF-style page and a real `agentls serve`: JSON strings in, JSON strings out. */
class PanelBridgeLiveTest {
    private LiveServer server;
    private AgentClient client;
    private PanelBridge bridge;
    private final List<JsonObject> posted = new CopyOnWriteArrayList<>();
    private final List<String> actions = new CopyOnWriteArrayList<>();
    private volatile boolean ideTrusts;
    private volatile boolean userTrustsWhenAsked;
    private volatile boolean asksInPanel;
    private volatile String rewindAnswer;

    /** The page's side: what __agentReceive got, parsed. */
    private final class Page implements PanelHost {
        @Override
        public void post(String json) {
            PanelMessages.readHostToPanel(json); // every message must be one the panel knows
            posted.add(JsonParser.parseString(json).getAsJsonObject());
        }

        @Override
        public String cwd() {
            return server.workspace.toString();
        }

        @Override
        public boolean workspaceTrusted() {
            return ideTrusts;
        }

        @Override
        public boolean asksInPanel() {
            return asksInPanel;
        }

        @Override
        public CompletableFuture<Boolean> trustFolder() {
            actions.add("trust " + cwd());
            ideTrusts = userTrustsWhenAsked;
            return CompletableFuture.completedFuture(ideTrusts);
        }

        @Override
        public void openFile(String path, Integer line) {
            actions.add("open " + path + ":" + line);
        }

        @Override
        public void openLink(String href) {
            actions.add("link " + href);
        }

        @Override
        public void copy(String text) {
            actions.add("copy " + text);
        }

        @Override
        public CompletableFuture<String> confirmRewind(Wire.RewindResult preview) {
            actions.add("rewind? " + preview.restored());
            return CompletableFuture.completedFuture(rewindAnswer);
        }
    }

    private static final UserPrompts ALLOW = new UserPrompts() {
        @Override
        public CompletableFuture<Wire.AskQuestionResult> askQuestions(Wire.AskQuestionParams params) {
            return CompletableFuture.completedFuture(Wire.AskQuestionResult.declinedByUser());
        }

        @Override
        public CompletableFuture<Wire.RequestPermissionResult> requestPermission(Wire.RequestPermissionParams params) {
            return CompletableFuture.completedFuture(Wire.RequestPermissionResult.selected("allow_once"));
        }
    };

    private void open(String replies) throws Exception {
        open(new LiveServer(replies));
    }

    private void open(LiveServer live) throws Exception {
        server = live;
        bridge = new PanelBridge(new Page(), ALLOW);
        client = new AgentClient(server, bridge);
        bridge.attach(client);
        bridge.receive("{\"type\":\"ready\"}");
        client.start().get(45, TimeUnit.SECONDS);
        waitForPosted("a session", m -> type(m).equals("session"));
    }

    @AfterEach
    void close() {
        if (client != null) client.close();
        if (server != null) server.close();
    }

    private static String type(JsonObject message) {
        return message.get("type").getAsString();
    }

    private List<String> types() {
        return posted.stream().map(PanelBridgeLiveTest::type).toList();
    }

    private JsonObject lastOf(String type) {
        List<JsonObject> found = posted.stream().filter(m -> type(m).equals(type)).toList();
        return found.get(found.size() - 1);
    }

    private void waitForPosted(String what, Predicate<JsonObject> predicate) throws InterruptedException {
        waitFor(what, () -> posted.stream().anyMatch(predicate));
    }

    private static String sessionIdOf(JsonObject sessionMessage) {
        return sessionMessage.getAsJsonObject("session").get("sessionId").getAsString();
    }

    @Test
    void aPromptFromThePanelStreamsBackAsPanelMessages() throws Exception {
        open("[{\"toolCalls\": [{\"name\": \"bash\", \"arguments\": {\"command\": \"echo from-the-panel\"}}]}, {\"text\": \"Done.\"}]");
        assertEquals(List.of("server", "server", "server", "session"), types());
        assertEquals(List.of("starting", "starting", "ready"),
                posted.subList(0, 3).stream().map(m -> m.get("state").getAsString()).toList());
        JsonObject session = lastOf("session");
        assertEquals(server.workspace.toString(), session.get("cwd").getAsString());
        posted.clear();

        bridge.receive("{\"type\":\"prompt\",\"prompt\":[{\"type\":\"text\",\"text\":\"run it\"},{\"type\":\"video\",\"url\":\"x\"}]}");
        waitForPosted("the prompt result", m -> type(m).equals("promptResult"));

        List<String> types = types();
        assertEquals("promptResult", types.get(types.size() - 1));
        assertTrue(types.subList(0, types.size() - 1).stream().allMatch("update"::equals), types.toString());
        for (JsonObject update : posted.subList(0, types.size() - 1)) {
            assertEquals(sessionIdOf(session), update.getAsJsonObject("params").get("sessionId").getAsString());
        }
        JsonObject turnEnd = posted.get(types.size() - 2).getAsJsonObject("params").getAsJsonObject("update");
        assertEquals("turn_end", turnEnd.get("kind").getAsString());
        assertEquals("completed", lastOf("promptResult").getAsJsonObject("result").get("terminal").getAsString());
        assertTrue(posted.stream().anyMatch(m -> m.toString().contains("from-the-panel")), "the command ran");
        assertTrue(!bridge.busy());
    }

    @Test
    void aTurnIsRewoundFromThePanelAfterTheUserSaysSo() throws Exception {
        open("[{\"toolCalls\": [{\"name\": \"write_file\", \"arguments\": {\"path\": \"notes.md\", \"content\": \"new\\n\"}}]},"
                + " {\"text\": \"Wrote it.\"}]");
        Path notes = server.workspace.resolve("notes.md");
        Files.writeString(notes, "old\n");
        bridge.receive("{\"type\":\"prompt\",\"prompt\":[{\"type\":\"text\",\"text\":\"write notes\"}]}");
        waitForPosted("the prompt result", m -> type(m).equals("promptResult"));
        String turnId = lastOf("promptResult").getAsJsonObject("result").get("turnId").getAsString();
        assertEquals("new\n", Files.readString(notes));

        rewindAnswer = null;  // the user says no: nothing changes
        bridge.receive("{\"type\":\"rewind\",\"turnId\":\"" + turnId + "\"}");
        waitFor("the question", () -> actions.stream().anyMatch(a -> a.startsWith("rewind? ")));
        assertEquals("new\n", Files.readString(notes));

        rewindAnswer = "files";
        bridge.receive("{\"type\":\"rewind\",\"turnId\":\"" + turnId + "\"}");
        waitForPosted("the rewind", m -> type(m).equals("rewound"));
        assertEquals("old\n", Files.readString(notes));
        assertEquals(turnId, lastOf("rewound").get("turnId").getAsString());
        assertEquals(1, lastOf("rewound").getAsJsonArray("restored").size());
    }

    @Test
    void cancelAndNewSessionFromThePanel() throws Exception {
        open("[{\"text\": \"" + "word ".repeat(200) + "\", \"delay\": 0.05}]");
        String first = sessionIdOf(lastOf("session"));
        bridge.receive("{\"type\":\"prompt\",\"prompt\":[{\"type\":\"text\",\"text\":\"talk\"}]}");
        waitForPosted("streaming", m -> type(m).equals("update"));
        assertTrue(bridge.busy());
        bridge.receive("{\"type\":\"cancel\"}");
        waitForPosted("the prompt result", m -> type(m).equals("promptResult"));
        assertEquals("aborted", lastOf("promptResult").getAsJsonObject("result").get("terminal").getAsString());

        posted.clear();
        bridge.receive("{\"type\":\"newSession\"}");
        waitForPosted("the new session", m -> type(m).equals("session"));
        assertNotEquals(first, sessionIdOf(lastOf("session")));
        bridge.receive("{\"type\":\"openFile\",\"path\":\"src/a.py\",\"line\":3}");
        bridge.receive("{\"type\":\"openLink\",\"href\":\"https://example.org\"}");
        bridge.receive("{\"type\":\"copy\",\"text\":\"x = 1\"}");
        bridge.receive("{\"type\":\"teleport\"}");
        bridge.receive("not json at all");
        assertEquals(List.of("open src/a.py:3", "link https://example.org", "copy x = 1"), actions);
    }

    @Test
    void storedSessionsAreListedAndResumedWithTheirHistory() throws Exception {
        open("[{\"text\": \"The login test freezes the clock.\"}]");
        String first = sessionIdOf(lastOf("session"));
        bridge.receive("{\"type\":\"prompt\",\"prompt\":[{\"type\":\"text\",\"text\":\"why does the login test fail\"}]}");
        waitForPosted("the prompt result", m -> type(m).equals("promptResult"));
        bridge.receive("{\"type\":\"newSession\"}");
        waitFor("a second session", () -> !sessionIdOf(lastOf("session")).equals(first));

        bridge.receive("{\"type\":\"listSessions\"}");
        waitForPosted("the session list", m -> type(m).equals("sessions"));
        JsonObject list = lastOf("sessions");
        assertEquals(first, list.getAsJsonArray("sessions").get(0).getAsJsonObject().get("sessionId").getAsString());
        assertEquals("why does the login test fail",
                list.getAsJsonArray("sessions").get(0).getAsJsonObject().get("title").getAsString());
        posted.clear();
        bridge.receive("{\"type\":\"searchSessions\",\"query\":\"clock\"}");
        waitForPosted("the search hits", m -> type(m).equals("sessions"));
        assertEquals("clock", lastOf("sessions").get("query").getAsString());
        assertEquals(first, lastOf("sessions").getAsJsonArray("sessions").get(0).getAsJsonObject().get("sessionId").getAsString());

        posted.clear();
        bridge.receive("{\"type\":\"resumeSession\",\"sessionId\":\"" + first + "\"}");
        waitForPosted("the resumed session", m -> type(m).equals("session"));
        waitFor("the replayed history", () -> types().size() > 2);
        assertEquals("session", types().get(0));
        assertTrue(posted.get(0).get("resumed").getAsBoolean());
        assertEquals(first, sessionIdOf(posted.get(0)));
        List<String> replayed = posted.subList(1, posted.size()).stream()
                .map(m -> m.getAsJsonObject("params").getAsJsonObject("update").get("kind").getAsString()).toList();
        assertEquals("user_message_chunk", replayed.get(0), replayed.toString());
        assertTrue(posted.stream().anyMatch(m -> m.toString().contains("freezes the clock")), posted.toString());
        assertEquals(first, bridge.session().orElseThrow().sessionId());
    }

    @Test
    void aCrashRestartsTheServerAndOpensANewSession() throws Exception {
        open("[]");
        String before = sessionIdOf(lastOf("session"));
        posted.clear();
        server.last().destroyForcibly();
        waitFor("a new session", () -> posted.stream().anyMatch(m -> type(m).equals("session")));
        List<String> states = posted.stream().filter(m -> type(m).equals("server"))
                .map(m -> m.get("state").getAsString()).toList();
        assertEquals(List.of("restarting", "restarting", "ready"), states);
        assertTrue(posted.get(0).get("message").getAsString().contains("stopped unexpectedly"), posted.get(0).toString());
        assertNotEquals(before, sessionIdOf(lastOf("session")));
        assertEquals(2, server.processes.size());
    }

    @Test
    void newSessionStartsAStoppedServer() throws Exception {
        open("[]");
        client.stop().get(45, TimeUnit.SECONDS);
        waitForPosted("the stopped state", m -> type(m).equals("server") && m.get("state").getAsString().equals("stopped"));
        posted.clear();
        bridge.receive("{\"type\":\"newSession\"}");
        waitForPosted("a session from a new server", m -> type(m).equals("session"));
        assertEquals(2, server.processes.size());
    }

    /** A cloned repository whose config asks for a mode an untrusted folder does not get. */
    private static LiveServer untrustedRepository() throws Exception {
        LiveServer live = new LiveServer("[]");
        Path config = Files.createDirectories(live.workspace.resolve(".agentls")).resolve("config.json");
        Files.writeString(config, "{\"permissions\": {\"mode\": \"acceptEdits\"}}");
        return live;
    }

    private static String modeOf(JsonObject sessionMessage) {
        return sessionMessage.getAsJsonObject("session").getAsJsonObject("modes").get("currentModeId").getAsString();
    }

    @Test
    void trustThisFolderAsksTheIdeThenOpensATrustedSession() throws Exception {
        userTrustsWhenAsked = true;
        open(untrustedRepository());
        String first = sessionIdOf(lastOf("session"));
        assertEquals("default", modeOf(lastOf("session")));

        bridge.receive("{\"type\":\"trustFolder\"}");
        waitForPosted("a trusted session", m -> type(m).equals("session") && !sessionIdOf(m).equals(first));
        assertEquals(List.of("trust " + server.workspace), actions);
        assertEquals("acceptEdits", modeOf(lastOf("session")));
    }

    @Test
    void aFolderTheUserDoesNotTrustKeepsItsSession() throws Exception {
        userTrustsWhenAsked = false;
        open(untrustedRepository());
        String first = sessionIdOf(lastOf("session"));
        bridge.trustFolder().get(45, TimeUnit.SECONDS);
        assertEquals(List.of("trust " + server.workspace), actions);
        assertEquals(first, sessionIdOf(lastOf("session")));
        assertEquals(1, posted.stream().filter(m -> type(m).equals("session")).count());
    }

    @Test
    void nothingIsPostedBeforeThePanelIsReady() {
        PanelBridge quiet = new PanelBridge(new Page(), ALLOW);
        quiet.onServerState(dev.agentls.core.client.ServerState.STOPPED, "no server");
        assertEquals(List.of(), posted);
        quiet.receive("{\"type\":\"ready\"}");
        assertEquals("{\"type\":\"server\",\"state\":\"stopped\",\"message\":\"no server\"}", posted.get(0).toString());
    }

    private static final String WRITE_THEN_DONE = "[{\"toolCalls\": [{\"name\": \"write_file\", \"arguments\": "
            + "{\"path\": \"note.txt\", \"content\": \"hi\\n\"}}]}, {\"text\": \"Done.\"}]";

    @Test
    void aPermissionRequestIsAskedInThePanelAndAnsweredFromIt() throws Exception {
        asksInPanel = true;
        open(WRITE_THEN_DONE);
        bridge.receive("{\"type\":\"prompt\",\"prompt\":[{\"type\":\"text\",\"text\":\"write it\"}]}");
        waitForPosted("the permission request", m -> type(m).equals("permissionRequest"));
        JsonObject asked = lastOf("permissionRequest");
        String requestId = asked.get("requestId").getAsString();
        assertEquals("write_file", asked.getAsJsonObject("params").getAsJsonObject("toolCall").get("name").getAsString());

        posted.clear();
        bridge.receive("{\"type\":\"ready\"}"); // the page reloaded: the open request is asked again
        waitForPosted("the request again", m -> type(m).equals("permissionRequest"));
        assertEquals(requestId, lastOf("permissionRequest").get("requestId").getAsString());

        bridge.receive("{\"type\":\"permissionAnswer\",\"requestId\":\"" + requestId + "\",\"optionId\":\"allow_once\"}");
        waitForPosted("the prompt result", m -> type(m).equals("promptResult"));
        assertEquals("answered", lastOf("permissionClosed").get("reason").getAsString());
        assertEquals("hi\n", Files.readString(server.workspace.resolve("note.txt")));
    }

    @Test
    void aPermissionRequestNobodyAnswersIsWithdrawnFromThePanel() throws Exception {
        asksInPanel = true;
        LiveServer live = new LiveServer(WRITE_THEN_DONE);
        Path config = Files.createDirectories(live.home.resolve("config").resolve("agentls")).resolve("config.json");
        Files.writeString(config, "{\"permissions\": {\"approvalTimeout\": 1}}");
        open(live);
        bridge.receive("{\"type\":\"prompt\",\"prompt\":[{\"type\":\"text\",\"text\":\"write it\"}]}");
        waitForPosted("the prompt result", m -> type(m).equals("promptResult"));
        String requestId = lastOf("permissionRequest").get("requestId").getAsString();
        JsonObject closed = lastOf("permissionClosed");
        assertEquals(requestId, closed.get("requestId").getAsString());
        assertEquals("withdrawn", closed.get("reason").getAsString());
        assertTrue(Files.notExists(server.workspace.resolve("note.txt")));
        int before = posted.size();
        bridge.receive("{\"type\":\"permissionAnswer\",\"requestId\":\"" + requestId + "\",\"optionId\":\"allow_once\"}");
        assertEquals(before, posted.size(), "a late answer changes nothing");
    }

    @Test
    void withNoModelSetUpThePanelGetsTheFirstRunCardAlsoAfterAReload() throws Exception {
        server = new LiveServer("[]").env("AGENTLS_PROVIDER", "anthropic");
        bridge = new PanelBridge(new Page(), ALLOW);
        client = new AgentClient(server, bridge);
        bridge.attach(client);
        bridge.receive("{\"type\":\"ready\"}");
        client.start().get(45, TimeUnit.SECONDS);
        waitForPosted("the first-run card", m -> type(m).equals("setup"));
        assertTrue(lastOf("setup").get("detail").getAsString().contains("ANTHROPIC_API_KEY"));
        posted.clear();
        bridge.receive("{\"type\":\"ready\"}");
        assertEquals(List.of("server", "setup"), types());
    }
}
