package dev.agentls.core.client;

import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import dev.agentls.core.protocol.ContentBlock;
import dev.agentls.core.protocol.Json;
import dev.agentls.core.protocol.Methods;
import dev.agentls.core.protocol.Methods.Method;
import dev.agentls.core.protocol.SessionUpdate;
import dev.agentls.core.protocol.Wire;
import dev.agentls.core.rpc.JsonRpcConnection;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * The agentls server as a child process: spawns it through a {@link ServerLauncher}, runs the
 * LSP lifecycle ({@code initialize}, {@code initialized}, {@code shutdown}, {@code exit}),
 * sends the agentls methods and routes what the server sends to an {@link AgentUi}.
 *
 * <p>Every call returns a future and never blocks. The first call starts the server. When the
 * server dies, pending calls fail with {@link dev.agentls.core.rpc.ConnectionClosedException},
 * the UI hears {@link ServerState#CRASHED}, and the next call starts a new server (at most four
 * times in three minutes; after that {@link ServerState#STOPPED} until {@link #restart()}).
 */
public final class AgentClient implements AutoCloseable {
    /** Settings for one client; {@link #defaults()} suits an IDE. */
    public record Options(String clientName, String clientVersion, Duration startTimeout, Duration stopTimeout,
                          RestartPolicy restarts) {
        public static Options defaults() {
            return new Options("agentls-jetbrains", "0.1.0", Duration.ofSeconds(30), Duration.ofSeconds(3),
                    RestartPolicy.standard());
        }
    }

    private static final int STDERR_TAIL = 20;

    private final ServerLauncher launcher;
    private final AgentUi ui;
    private final Options options;
    private final Object lock = new Object();
    private Server server;
    private ServerState state = ServerState.STOPPED;
    private String refusal;
    private JsonObject serverInfo = new JsonObject();

    public AgentClient(ServerLauncher launcher, AgentUi ui) {
        this(launcher, ui, Options.defaults());
    }

    public AgentClient(ServerLauncher launcher, AgentUi ui, Options options) {
        this.launcher = launcher;
        this.ui = ui;
        this.options = options;
    }

        public ServerState state() {
        synchronized (lock) {
            return state;
        }
    }

    /** The server's {@code capabilities.experimental.agentls} from the last {@code initialize}. */
    public JsonObject serverInfo() {
        synchronized (lock) {
            return serverInfo.deepCopy();
        }
    }

    // -- the agentls methods ----------------------------------------------------------------

    public <P, R> CompletableFuture<R> request(Method<P, R> method, P params) {
        if (method.isNotification() || method.direction() != Methods.Direction.CLIENT_TO_SERVER) {
            throw new IllegalArgumentException(method.name() + " is not a client request");
        }
        return running()
                .thenCompose(s -> s.conn.request(method.name(), Json.toTree(params)))
                .thenApply(result -> Json.fromTree(result, method.result()));
    }

    /** Sends a notification if the server is running; false when there is none to send it to. */
    public <P> boolean notify(Method<P, Void> method, P params) {
        Server s;
        synchronized (lock) {
            s = state == ServerState.READY ? server : null;
        }
        return s != null && s.conn.notify(method.name(), Json.toTree(params));
    }

    public CompletableFuture<Wire.SessionInfoResult> newSession(Wire.NewSessionParams params) {
        return request(Methods.SESSION_NEW, params);
    }

    /** Runs one turn; completes when it reaches its terminal. Events go to {@link AgentUi#onUpdate}. */
    public CompletableFuture<Wire.PromptResult> prompt(String sessionId, List<ContentBlock> prompt) {
        return request(Methods.SESSION_PROMPT, new Wire.PromptParams(sessionId, prompt, null));
    }

    public boolean cancel(String sessionId) {
        return notify(Methods.SESSION_CANCEL, new Wire.SessionRef(sessionId));
    }

    public CompletableFuture<Wire.SteerResult> steer(String sessionId, String text) {
        return request(Methods.SESSION_STEER, new Wire.SteerParams(sessionId, List.of(ContentBlock.text(text))));
    }

    public CompletableFuture<Wire.Empty> setModel(String sessionId, String modelId) {
        return request(Methods.SESSION_SET_MODEL, new Wire.SetModelParams(sessionId, modelId));
    }

    public CompletableFuture<Wire.Empty> setMode(String sessionId, String modeId) {
        return request(Methods.SESSION_SET_MODE, new Wire.SetModeParams(sessionId, modeId));
    }

    public CompletableFuture<Wire.Empty> closeSession(String sessionId) {
        return request(Methods.SESSION_CLOSE, new Wire.SessionRef(sessionId));
    }

    /** Opens a stored session; its history arrives as updates before the answer. */
    public CompletableFuture<Wire.SessionInfoResult> loadSession(String sessionId) {
        return request(Methods.SESSION_LOAD, new Wire.LoadSessionParams(sessionId, null));
    }

    public CompletableFuture<Wire.ListSessionsResult> listSessions(Wire.ListSessionsParams params) {
        return request(Methods.SESSION_LIST, params);
    }

    public CompletableFuture<Wire.SearchSessionsResult> searchSessions(String query, Integer limit) {
        return request(Methods.SESSION_SEARCH, new Wire.SearchSessionsParams(query, limit));
    }

    public CompletableFuture<Wire.RewindResult> rewind(
            String sessionId, String turnId, boolean conversation, boolean dryRun) {
        return request(Methods.SESSION_REWIND, new Wire.RewindParams(sessionId, turnId, true, conversation, dryRun));
    }

    public CompletableFuture<Wire.ModelsListResult> models(String provider) {
        return request(Methods.MODELS_LIST, new Wire.ModelsListParams(provider));
    }

    public CompletableFuture<Wire.EnginesListResult> engines() {
        return request(Methods.ENGINES_LIST, new Wire.Empty());
    }

    // -- lifecycle --------------------------------------------------------------------------

    /** Starts the server unless it runs; completes with its {@code experimental.agentls} capabilities. */
    public CompletableFuture<JsonObject> start() {
        return running().thenApply(s -> serverInfo());
    }

    /** Stops the server if it runs, forgets earlier crashes, and starts it again. */
    public CompletableFuture<JsonObject> restart() {
        return stop().thenCompose(ignored -> {
            synchronized (lock) {
                refusal = null;
                options.restarts().reset();
            }
            return start();
        });
    }

    /** {@code shutdown} + {@code exit}; the process is killed if it has not exited in time. */
    public CompletableFuture<Void> stop() {
        Server s;
        synchronized (lock) {
            s = server;
            if (s == null) return CompletableFuture.completedFuture(null);
            s.stopping = true;
        }
        long timeout = options.stopTimeout().toMillis();
        return s.conn.request("shutdown", null)
                .orTimeout(timeout, TimeUnit.MILLISECONDS)
                .handle((result, error) -> {
                    s.conn.notify("exit", null);
                    s.conn.close();
                    return null;
                })
                .thenCompose(ignored -> s.process.onExit().orTimeout(timeout, TimeUnit.MILLISECONDS))
                .handle((process, error) -> {
                    if (error != null) s.process.destroyForcibly();
                    return null;
                })
                .thenCompose(ignored -> s.gone);
    }

    @Override
    public void close() {
        try {
            stop().get(options.stopTimeout().toMillis() * 3, TimeUnit.MILLISECONDS);
        } catch (Exception e) {
            Server s;
            synchronized (lock) {
                s = server;
            }
            if (s != null) s.process.destroyForcibly();
        }
    }

    /** The running server once it is initialized, starting one if there is none. */
    private CompletableFuture<Server> running() {
        Server s;
        boolean restarting;
        String failure = null;
        synchronized (lock) {
            if (server != null) return server.ready;
            if (refusal != null) return CompletableFuture.failedFuture(new ServerStoppedException(refusal));
            restarting = state == ServerState.CRASHED;
            try {
                s = new Server(launcher.launch());
                server = s;
                state = ServerState.STARTING;
            } catch (IOException | RuntimeException e) {
                s = null;
                state = ServerState.STOPPED;
                failure = "Cannot start the agentls server: " + e.getMessage();
            }
        }
        if (s == null) {
            ui.onServerState(ServerState.STOPPED, failure);
            return CompletableFuture.failedFuture(new ServerStoppedException(failure));
        }
        ui.onServerState(ServerState.STARTING, restarting ? "Restarting the agentls server." : null);
        s.begin(restarting);
        return s.ready;
    }

    /** One server process and its connection. */
    private final class Server {
        final Process process;
        final JsonRpcConnection conn;
        final CompletableFuture<Server> ready = new CompletableFuture<>();
        final CompletableFuture<Void> gone = new CompletableFuture<>();
        final Deque<String> stderrTail = new ArrayDeque<>();
        final OpenInteractions open = new OpenInteractions();
        final Thread drain = new Thread(this::drainStderr, "agentls-stderr");
        volatile boolean stopping;

        Server(Process process) {
            this.process = process;
            this.conn = new JsonRpcConnection(process.getInputStream(), process.getOutputStream(), "agentls", ui::log);
            conn.onNotification(Methods.SESSION_UPDATE.name(), this::onUpdate);
            conn.onRequest(Methods.SESSION_REQUEST_PERMISSION.name(), params -> {
                Wire.RequestPermissionParams p = Json.fromTree(params, Wire.RequestPermissionParams.class);
                return open.answer(p.turnId(), ui.requestPermission(p), Wire.RequestPermissionResult::cancelled);
            });
            conn.onRequest(Methods.SESSION_ASK_QUESTION.name(), params -> {
                Wire.AskQuestionParams p = Json.fromTree(params, Wire.AskQuestionParams.class);
                return open.answer(p.turnId(), ui.askQuestions(p), Wire.AskQuestionResult::declinedByUser);
            });
        }

        void begin(boolean restarting) {
            drain.setDaemon(true);
            drain.start();
            conn.closed().thenAccept(this::onClosed);
            conn.start();
            conn.request("initialize", initializeParams())
                    .orTimeout(options.startTimeout().toMillis(), TimeUnit.MILLISECONDS)
                    .whenComplete((result, error) -> {
                        if (error != null) {
                            ui.log("initialize failed: " + error);
                            // Only a hung server: one that exits on its own still has its last words on
                            // stderr, and destroying the process would close that.
                            Throwable cause = error instanceof CompletionException ? error.getCause() : error;
                            if (cause instanceof TimeoutException) process.destroyForcibly();
                            return;
                        }
                        conn.notify("initialized", Json.toTree(new Wire.InitializedParams()));
                        synchronized (lock) {
                            if (server != this) return;
                            state = ServerState.READY;
                            serverInfo = agentlsCapabilities(result);
                        }
                        ui.onServerState(ServerState.READY,
                                restarting ? "The agentls server restarted after it stopped unexpectedly." : null);
                        ready.complete(this);
                    });
        }

        private JsonElement initializeParams() {
            var agentls = new Wire.AgentlsClientCapabilities(true, true, true, true, true);
            var capabilities = new Wire.InitializeClientCapabilities(new Wire.ExperimentalClientCapabilities(agentls));
            var client = new Wire.Implementation(options.clientName(), options.clientVersion());
            return Json.toTree(new Wire.InitializeParams(ProcessHandle.current().pid(), client, capabilities));
        }

        private void onUpdate(JsonElement params) {
            Wire.SessionUpdateParams update = Json.fromTree(params, Wire.SessionUpdateParams.class);
            // Even if the server's $/cancelRequest never comes, the turn's end withdraws its requests.
            if (update.update() instanceof SessionUpdate.TurnEnd) open.turnEnded(update.turnId());
            ui.onUpdate(update);
        }

        private void onClosed(String reason) {
            int exit = exitCode();
            String tail = tail();
            ServerState next;
            String message;
            synchronized (lock) {
                if (server == this) server = null;
                if (stopping) {
                    next = ServerState.STOPPED;
                    message = null;
                } else if (!ready.isDone()) {
                    next = ServerState.STOPPED;
                    message = "The agentls server did not start (exit code " + exit + ")." + tail;
                } else if (options.restarts().allow(System.currentTimeMillis())) {
                    next = ServerState.CRASHED;
                    message = "The agentls server stopped unexpectedly (exit code " + exit + "); "
                            + "it starts again on the next request." + tail;
                } else {
                    next = ServerState.STOPPED;
                    message = "The agentls server keeps stopping; it was not restarted. Restart it when the "
                            + "cause is fixed." + tail;
                    refusal = message;
                }
                state = next;
            }
            ui.onServerState(next, message);
            ready.completeExceptionally(new ServerStoppedException(message == null ? "stopped" : message));
            gone.complete(null);
        }

        /** The exit code once the process has ended (killed if it has not), with its stderr read to the end. */
        private int exitCode() {
            try {
                if (process.waitFor(2, TimeUnit.SECONDS)) {
                    drain.join(1000);
                    return process.exitValue();
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            process.destroyForcibly();
            return -1;
        }

        private void drainStderr() {
            try (BufferedReader err = new BufferedReader(
                    new InputStreamReader(process.getErrorStream(), StandardCharsets.UTF_8))) {
                String line;
                while ((line = err.readLine()) != null) {
                    synchronized (stderrTail) {
                        stderrTail.addLast(line);
                        if (stderrTail.size() > STDERR_TAIL) stderrTail.removeFirst();
                    }
                    ui.log(line);
                }
            } catch (IOException ignored) {
                // the process is gone
            }
        }

        private String tail() {
            synchronized (stderrTail) {
                return stderrTail.isEmpty() ? "" : " Last output: " + stderrTail.peekLast();
            }
        }
    }

    private static JsonObject agentlsCapabilities(JsonElement initializeResult) {
        JsonElement caps = initializeResult;
        for (String key : List.of("capabilities", "experimental", "agentls")) {
            if (caps == null || !caps.isJsonObject()) return new JsonObject();
            caps = caps.getAsJsonObject().get(key);
        }
        return caps != null && caps.isJsonObject() ? caps.getAsJsonObject() : new JsonObject();
    }
}
