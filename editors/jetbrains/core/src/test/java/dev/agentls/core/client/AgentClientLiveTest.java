package dev.agentls.core.client;

import static dev.agentls.core.RecordingUi.waitFor;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import dev.agentls.core.LiveServer;
import dev.agentls.core.RecordingUi;
import dev.agentls.core.protocol.Answer;
import dev.agentls.core.protocol.ContentBlock;
import dev.agentls.core.protocol.SessionUpdate;
import dev.agentls.core.protocol.Wire;
import dev.agentls.core.rpc.ConnectionClosedException;
import dev.agentls.core.rpc.RpcException;
import java.nio.file.Files;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The client against a real `agentls serve` on the scripted model, over real stdio. */
class AgentClientLiveTest {
    private static final long WAIT = 45;

    private LiveServer server;
    private AgentClient client;
    private final RecordingUi ui = new RecordingUi();

    private AgentClient open(String replies) {
        server = new LiveServer(replies);
        client = new AgentClient(server, ui, new AgentClient.Options("agentls-jetbrains-tests", "0",
                Duration.ofSeconds(30), Duration.ofSeconds(10), RestartPolicy.standard()));
        return client;
    }

    @AfterEach
    void close() {
        if (client != null) client.close();
        if (server != null) server.close();
    }

    private Wire.SessionInfoResult newSession() throws Exception {
        return client.newSession(Wire.NewSessionParams.in(server.workspace.toString())).get(WAIT, TimeUnit.SECONDS);
    }

    private static List<ContentBlock> say(String text) {
        return List.of(ContentBlock.text(text));
    }

    @Test
    void aPromptStreamsItsEventsAndEndsWithOneTerminal() throws Exception {
        open("""
                [{"thinking": "Let me look.", "text": "Reading notes.txt now.",
                  "toolCalls": [{"name": "read_file", "arguments": {"path": "notes.txt"}}]},
                 {"text": "It says hello."}]""");
        Files.writeString(server.workspace.resolve("notes.txt"), "hello from the notes\n");
        JsonObject info = client.start().get(WAIT, TimeUnit.SECONDS);
        assertEquals(1, info.get("protocolVersion").getAsInt());
        assertEquals(List.of("STARTING", "READY"), ui.states);
        Wire.SessionInfoResult session = newSession();
        assertEquals("native", session.engine());

        Wire.PromptResult result = client.prompt(session.sessionId(), say("What is in notes.txt?")).get(WAIT, TimeUnit.SECONDS);

        assertEquals("completed", result.terminal());
        assertEquals("end_turn", result.stopReason());
        List<String> kinds = ui.kinds();
        assertEquals("turn_end", kinds.get(kinds.size() - 1));
        assertEquals(1, kinds.stream().filter("turn_end"::equals).count());
        assertTrue(kinds.indexOf("agent_thought_chunk") < kinds.indexOf("agent_message_chunk"), kinds.toString());
        assertTrue(kinds.indexOf("tool_call") < kinds.indexOf("tool_call_update"), kinds.toString());
        assertTrue(kinds.contains("step_finish"), kinds.toString());
        long previous = 0;
        for (Wire.SessionUpdateParams update : ui.updates) {
            assertEquals(session.sessionId(), update.sessionId());
            assertEquals(result.turnId(), update.turnId());
            assertTrue(update.seq() > previous, "seq increases");
            previous = update.seq();
        }
        String said = String.join("", ui.updatesOf(SessionUpdate.AgentMessageChunk.class).stream()
                .map(SessionUpdate.AgentMessageChunk::text).toList());
        assertEquals("Reading notes.txt now.It says hello.", said);
        SessionUpdate.ToolCall call = ui.updatesOf(SessionUpdate.ToolCall.class).get(0);
        assertEquals("read_file", call.name());
        assertEquals("read", call.toolKind());
        assertEquals(JsonParser.parseString("{\"path\":\"notes.txt\"}"), call.input());
        SessionUpdate.ToolCallUpdate done = ui.updatesOf(SessionUpdate.ToolCallUpdate.class).stream()
                .filter(u -> u.status().equals("completed")).findFirst().orElseThrow();
        assertEquals(call.toolCallId(), done.toolCallId());
        assertTrue(done.output().contains("hello from the notes"), done.output());
        SessionUpdate.TurnEnd end = ui.updatesOf(SessionUpdate.TurnEnd.class).get(0);
        assertEquals(new SessionUpdate.TurnEnd("completed", "end_turn", result.usage(), null, null, null), end);
    }

    @Test
    void aQuestionIsAnsweredWithPicksAndFreeText() throws Exception {
        open("""
                [{"toolCalls": [{"name": "ask_user_question", "arguments": {"questions": [
                    {"question": "Which runner?", "header": "Runner",
                     "options": [{"label": "pytest", "description": "default"}, {"label": "unittest"}]},
                    {"question": "Which folders?", "header": "Folders", "options": [{"label": "src"}, {"label": "tests"}],
                     "multiSelect": true}]}}]},
                 {"text": "Thanks."}]""");
        ui.onQuestion = params -> {
            List<Answer> answers = new ArrayList<>();
            Wire.Question runner = params.questions().get(0);
            Wire.Question folders = params.questions().get(1);
            answers.add(Interactions.answer(runner, List.of(), "nose2, please"));
            answers.add(Interactions.answer(folders, List.of("src", "tests"), null));
            return CompletableFuture.completedFuture(Interactions.result(params.questions(), answers));
        };
        Wire.SessionInfoResult session = newSession();
        Wire.PromptResult result = client.prompt(session.sessionId(), say("set up tests")).get(WAIT, TimeUnit.SECONDS);

        assertEquals("completed", result.terminal());
        Wire.AskQuestionParams asked = ui.questions.get(0);
        assertEquals(session.sessionId(), asked.sessionId());
        assertEquals(List.of(
                new Wire.Question("Which runner?", "Runner", List.of(new Wire.QuestionOption("pytest", "default"),
                        new Wire.QuestionOption("unittest", null)), false),
                new Wire.Question("Which folders?", "Folders", List.of(new Wire.QuestionOption("src", null),
                        new Wire.QuestionOption("tests", null)), true)), asked.questions());
        String output = ui.updatesOf(SessionUpdate.ToolCallUpdate.class).stream()
                .filter(u -> u.status().equals("completed")).findFirst().orElseThrow().output();
        assertTrue(output.contains("nose2, please") && output.contains("src") && output.contains("tests"), output);
        assertTrue(ui.sawUpdate(u -> u instanceof SessionUpdate.QuestionNote), ui.kinds().toString());
    }

    @Test
    void permissionsAreAskedAndTheAnswerDecides() throws Exception {
        open("""
                [{"toolCalls": [{"name": "bash", "arguments": {"command": "echo allowed-run"}}]},
                 {"text": "Ran it."},
                 {"toolCalls": [{"name": "bash", "arguments": {"command": "echo rejected-run"}}]},
                 {"text": "Did not run it."}]""");
        ui.onPermission = params -> {
            String command = params.toolCall().input().get("command").getAsString();
            List<Wire.PermissionOption> choices = Interactions.permissionChoices(params);
            Wire.PermissionOption pick = choices.stream()
                    .filter(o -> o.kind().equals(command.contains("allowed") ? "allow_once" : "reject_once"))
                    .findFirst().orElseThrow();
            return CompletableFuture.completedFuture(Interactions.permissionResult(pick));
        };
        Wire.SessionInfoResult session = newSession();

        Wire.PromptResult first = client.prompt(session.sessionId(), say("run it")).get(WAIT, TimeUnit.SECONDS);
        assertEquals("completed", first.terminal());
        Wire.RequestPermissionParams asked = ui.permissions.get(0);
        assertEquals("bash", asked.toolCall().name());
        assertEquals("allow_once", Interactions.permissionChoices(asked).get(0).kind());
        assertTrue(Interactions.permissionTitle(asked).startsWith("Allow the agent to "), Interactions.permissionTitle(asked));
        assertTrue(ui.sawUpdate(u -> u instanceof SessionUpdate.ToolCallUpdate t && "completed".equals(t.status())
                && t.output() != null && t.output().contains("allowed-run")), ui.updates.toString());

        Wire.PromptResult second = client.prompt(session.sessionId(), say("run the other")).get(WAIT, TimeUnit.SECONDS);
        assertEquals("completed", second.terminal());
        assertEquals(2, ui.permissions.size());
        assertTrue(ui.sawUpdate(u -> u instanceof SessionUpdate.ToolCallUpdate t && "denied".equals(t.status())),
                ui.kinds().toString());
        assertTrue(ui.sawUpdate(u -> u instanceof SessionUpdate.PermissionNote n && "reject_once".equals(n.outcome())),
                ui.kinds().toString());
    }

    @Test
    void aSelectionReachesTheModelAsContextNamingItsFileAndLines() throws Exception {
        open("[]");
        server.env("AGENTLS_SCRIPT", "");  // no script: the model answers with the prompt it got
        Wire.SessionInfoResult session = newSession();
        String uri = server.workspace.resolve("app.py").toUri().toString();
        List<ContentBlock> prompt = List.of(ContentBlock.text("what is this?"),
                ContentBlock.selection(uri, "def total():\n    return 0", 4, 5));

        Wire.PromptResult result = client.prompt(session.sessionId(), prompt).get(WAIT, TimeUnit.SECONDS);

        assertEquals("completed", result.terminal());
        String said = String.join("", ui.updatesOf(SessionUpdate.AgentMessageChunk.class).stream()
                .map(SessionUpdate.AgentMessageChunk::text).toList());
        assertTrue(said.contains("<context kind=\"selection\" path=\"app.py\" lines=\"5-6\">"), said);
        assertTrue(said.contains("def total():"), said);
    }

    @Test
    void anEditIsApprovedInTheUsersOwnVersionThenRewound() throws Exception {
        open("""
                [{"toolCalls": [{"name": "edit_file",
                                 "arguments": {"path": "app.py", "old_string": "return 0", "new_string": "return 1"}}]},
                 {"text": "Changed it."}]""");
        Files.writeString(server.workspace.resolve("app.py"), "x = 0\nreturn 0\n");
        List<Wire.ToolCallRef> asked = new ArrayList<>();
        ui.onPermission = params -> {
            asked.add(params.toolCall());
            return CompletableFuture.completedFuture(
                    Wire.RequestPermissionResult.allowEdited("allow_once", "x = 0\nreturn 2\n"));
        };
        Wire.SessionInfoResult session = newSession();

        Wire.PromptResult result = client.prompt(session.sessionId(), say("bump it")).get(WAIT, TimeUnit.SECONDS);

        assertEquals("completed", result.terminal());
        Wire.Diff proposal = asked.get(0).proposal();
        assertEquals("x = 0\nreturn 0\n", proposal.oldText());
        assertEquals("x = 0\nreturn 1\n", proposal.newText());
        assertEquals("x = 0\nreturn 2\n", Files.readString(server.workspace.resolve("app.py")));
        SessionUpdate.Checkpoint kept = ui.updatesOf(SessionUpdate.Checkpoint.class).get(0);
        assertEquals(1, kept.files().size());

        Wire.RewindResult preview = client.rewind(session.sessionId(), result.turnId(), false, true)
                .get(WAIT, TimeUnit.SECONDS);
        assertEquals(kept.files(), preview.restored());
        assertEquals("x = 0\nreturn 2\n", Files.readString(server.workspace.resolve("app.py")));
        Wire.RewindResult done = client.rewind(session.sessionId(), result.turnId(), true, false)
                .get(WAIT, TimeUnit.SECONDS);
        assertEquals("x = 0\nreturn 0\n", Files.readString(server.workspace.resolve("app.py")));
        assertNotNull(done.sessionId(), "the conversation branched");
    }

    @Test
    void cancelEndsTheTurnAborted() throws Exception {
        open("[{\"text\": \"" + "word ".repeat(200) + "\", \"delay\": 0.05}]");
        Wire.SessionInfoResult session = newSession();
        CompletableFuture<Wire.PromptResult> turn = client.prompt(session.sessionId(), say("talk for a while"));
        waitFor("the first streamed word", () -> ui.sawUpdate(u -> u instanceof SessionUpdate.AgentMessageChunk));
        long cancelled = System.nanoTime();
        assertTrue(client.cancel(session.sessionId()));
        Wire.PromptResult result = turn.get(WAIT, TimeUnit.SECONDS);
        long millis = (System.nanoTime() - cancelled) / 1_000_000;

        assertEquals("aborted", result.terminal());
        assertEquals("cancelled", result.stopReason());
        // The server promises 1 s (its own tests hold it to that); allow for a busy test machine.
        assertTrue(millis < 5000, "aborted after " + millis + " ms");
        assertTrue(ui.updatesOf(SessionUpdate.AgentMessageChunk.class).size() < 150, "the turn stopped streaming");
        assertEquals("aborted", ui.updatesOf(SessionUpdate.TurnEnd.class).get(0).terminal());
    }

    @Test
    void cancelWithdrawsAPendingPermissionRequest() throws Exception {
        open("[{\"toolCalls\": [{\"name\": \"bash\", \"arguments\": {\"command\": \"echo never\"}}]}]");
        CompletableFuture<Wire.RequestPermissionResult> unanswered = new CompletableFuture<>();
        ui.onPermission = params -> unanswered;
        Wire.SessionInfoResult session = newSession();
        CompletableFuture<Wire.PromptResult> turn = client.prompt(session.sessionId(), say("run something"));
        waitFor("the permission request", () -> !ui.permissions.isEmpty());
        client.cancel(session.sessionId());

        assertEquals("aborted", turn.get(WAIT, TimeUnit.SECONDS).terminal());
        waitFor("the request to be withdrawn", unanswered::isCancelled);
    }

    @Test
    void serverErrorsArriveAsRpcExceptions() throws Exception {
        open("[{\"text\": \"" + "slow ".repeat(100) + "\", \"delay\": 0.05}]");
        ExecutionException unknown = assertThrows(ExecutionException.class,
                () -> client.prompt("sess_nope", say("hi")).get(WAIT, TimeUnit.SECONDS));
        assertEquals(RpcException.SESSION_NOT_FOUND, assertInstanceOf(RpcException.class, unknown.getCause()).code());

        Wire.SessionInfoResult session = newSession();
        CompletableFuture<Wire.PromptResult> running = client.prompt(session.sessionId(), say("one"));
        waitFor("the turn to stream", () -> ui.sawUpdate(u -> u instanceof SessionUpdate.AgentMessageChunk));
        ExecutionException busy = assertThrows(ExecutionException.class,
                () -> client.prompt(session.sessionId(), say("two")).get(WAIT, TimeUnit.SECONDS));
        assertEquals(RpcException.SESSION_BUSY, assertInstanceOf(RpcException.class, busy.getCause()).code());

        ExecutionException invalid = assertThrows(ExecutionException.class,
                () -> client.prompt(session.sessionId(), List.of()).get(WAIT, TimeUnit.SECONDS));
        RpcException rpc = assertInstanceOf(RpcException.class, invalid.getCause());
        assertEquals(RpcException.INVALID_PARAMS, rpc.code());
        assertNotNull(rpc.data());
        client.cancel(session.sessionId());
        assertEquals("aborted", running.get(WAIT, TimeUnit.SECONDS).terminal());
    }

    @Test
    void aCrashIsReportedAndTheNextCallRestartsTheServer() throws Exception {
        open("""
                [{"text": "First answer."},
                 {"text": "%s", "delay": 0.05}]""".formatted("long ".repeat(200)));
        Wire.SessionInfoResult session = newSession();
        assertEquals("completed", client.prompt(session.sessionId(), say("first")).get(WAIT, TimeUnit.SECONDS).terminal());
        CompletableFuture<Wire.PromptResult> inFlight = client.prompt(session.sessionId(), say("second"));
        waitFor("the second turn to stream", () -> ui.updatesOf(SessionUpdate.AgentMessageChunk.class).size() > 2);

        server.last().destroyForcibly();

        ExecutionException lost = assertThrows(ExecutionException.class, () -> inFlight.get(WAIT, TimeUnit.SECONDS));
        assertInstanceOf(ConnectionClosedException.class, lost.getCause());
        waitFor("the crash report", () -> ui.states.get(ui.states.size() - 1).startsWith("CRASHED"));
        assertEquals(ServerState.CRASHED, client.state());
        String report = ui.states.get(ui.states.size() - 1);
        assertTrue(report.startsWith("CRASHED: The agentls server stopped unexpectedly"), report);
        assertEquals(1, server.processes.size());

        // The next call starts a new server; the stored session can be opened again there.
        ui.updates.clear();
        Wire.SessionInfoResult reopened = client.loadSession(session.sessionId()).get(WAIT, TimeUnit.SECONDS);
        assertEquals(2, server.processes.size());
        assertEquals(ServerState.READY, client.state());
        assertEquals(session.sessionId(), reopened.sessionId());
        assertTrue(ui.states.contains("READY: The agentls server restarted after it stopped unexpectedly."), ui.states.toString());
        assertTrue(ui.sawUpdate(u -> u instanceof SessionUpdate.UserMessageChunk c && c.text().equals("first")),
                ui.updates.toString());
        assertTrue(ui.sawUpdate(u -> u instanceof SessionUpdate.AgentMessageChunk c && c.text().contains("First")),
                ui.updates.toString());
        Wire.SessionInfoResult fresh = newSession();
        assertEquals("completed", client.prompt(fresh.sessionId(), say("again")).get(WAIT, TimeUnit.SECONDS).terminal());
    }

    @Test
    void crashingTooOftenStopsRestarting() throws Exception {
        open("[]");
        client = new AgentClient(server, ui, new AgentClient.Options("t", "0", Duration.ofSeconds(30),
                Duration.ofSeconds(10), new RestartPolicy(1, 60_000)));
        client.start().get(WAIT, TimeUnit.SECONDS);
        server.last().destroyForcibly();
        waitFor("the first crash", () -> client.state() == ServerState.CRASHED);
        client.start().get(WAIT, TimeUnit.SECONDS);
        server.last().destroyForcibly();
        waitFor("the refusal", () -> client.state() == ServerState.STOPPED);
        ExecutionException refused = assertThrows(ExecutionException.class,
                () -> client.engines().get(WAIT, TimeUnit.SECONDS));
        assertInstanceOf(ServerStoppedException.class, refused.getCause());
        assertEquals(2, server.processes.size());

        client.restart().get(WAIT, TimeUnit.SECONDS);
        assertEquals(3, server.processes.size());
        assertEquals("native", client.engines().get(WAIT, TimeUnit.SECONDS).engines().get(0).id());
    }

    @Test
    void catalogueAndHistoryCallsParse() throws Exception {
        open("[{\"text\": \"Noted.\"}]");
        Wire.SessionInfoResult session = newSession();
        client.prompt(session.sessionId(), say("remember the login test")).get(WAIT, TimeUnit.SECONDS);
        assertTrue(client.models(null).get(WAIT, TimeUnit.SECONDS).models().size() > 0);
        Wire.ListSessionsResult listed = client.listSessions(new Wire.ListSessionsParams(server.workspace.toString(), null, 10))
                .get(WAIT, TimeUnit.SECONDS);
        assertEquals(session.sessionId(), listed.data().get(0).sessionId());
        Wire.SearchSessionsResult found = client.searchSessions("login", 5).get(WAIT, TimeUnit.SECONDS);
        assertEquals(session.sessionId(), found.hits().get(0).sessionId());
        client.setMode(session.sessionId(), "plan").get(WAIT, TimeUnit.SECONDS);
        client.closeSession(session.sessionId()).get(WAIT, TimeUnit.SECONDS);
    }

    @Test
    void stopShutsTheServerDownCleanly() throws Exception {
        open("[]");
        client.start().get(WAIT, TimeUnit.SECONDS);
        Process process = server.last();
        client.stop().get(WAIT, TimeUnit.SECONDS);
        assertTrue(process.waitFor(5, TimeUnit.SECONDS));
        assertEquals(0, process.exitValue());
        assertEquals(ServerState.STOPPED, client.state());
        assertEquals(List.of("STARTING", "READY", "STOPPED"), ui.states);
        assertTrue(client.start().get(WAIT, TimeUnit.SECONDS).has("protocolVersion"), "starts again on request");
    }

    @Test
    void aServerThatCannotStartIsReported() throws Exception {
        RecordingUi failing = new RecordingUi();
        AgentClient broken = new AgentClient(() -> new ProcessBuilder("/nonexistent/agentls", "serve").start(), failing);
        ExecutionException e = assertThrows(ExecutionException.class, () -> broken.start().get(WAIT, TimeUnit.SECONDS));
        assertInstanceOf(ServerStoppedException.class, e.getCause());
        assertTrue(failing.states.get(0).startsWith("STOPPED: Cannot start the agentls server"), failing.states.toString());

        AgentClient exits = new AgentClient(() -> new ProcessBuilder("sh", "-c", "echo no config >&2; exit 3").start(), failing);
        ExecutionException early = assertThrows(ExecutionException.class, () -> exits.start().get(WAIT, TimeUnit.SECONDS));
        assertInstanceOf(ServerStoppedException.class, early.getCause());
        assertEquals("STOPPED: The agentls server did not start (exit code 3). Last output: no config",
                failing.states.get(failing.states.size() - 1));
    }
}
