package dev.agentls.core.panel;

import com.google.gson.JsonObject;
import dev.agentls.core.client.AgentClient;
import dev.agentls.core.client.AgentUi;
import dev.agentls.core.client.ServerState;
import dev.agentls.core.client.UserPrompts;
import dev.agentls.core.panel.PanelMessages.HostToPanel;
import dev.agentls.core.panel.PanelMessages.PanelToHost;
import dev.agentls.core.panel.PanelMessages.SessionRow;
import dev.agentls.core.protocol.ContentBlock;
import dev.agentls.core.protocol.Json;
import dev.agentls.core.protocol.Wire;
import dev.agentls.core.rpc.RpcException;
import java.time.Instant;
import java.time.ZoneId;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;

/**
 * Forwards between the chat panel and the agentls server: panel messages become requests,
 * updates and server states become panel messages. It keeps only the current session and
 * whether a prompt is in flight; the server owns everything else. Questions and permission
 * requests are asked inline in the panel when the host can show them ({@link PanelHost#asksInPanel}),
 * otherwise through the IDE's {@link UserPrompts}.
 *
 * <p>Wiring: {@code bridge = new PanelBridge(host, prompts)}, {@code client = new
 * AgentClient(launcher, bridge)}, {@code bridge.attach(client)}, then {@code client.start()}.
 * Once the server is ready the bridge opens a session; after a crash it starts the server again
 * at once and opens a new session.
 */
public final class PanelBridge implements AgentUi {
    public static final String HISTORY_UNAVAILABLE = "Session history is not available from this agentls server.";
    private static final DateTimeFormatter WHEN = DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm");

    private final PanelHost host;
    private final UserPrompts prompts;
    private final Object lock = new Object();
    private AgentClient client;
    private boolean panelReady;
    private HostToPanel.Server server = new HostToPanel.Server("starting", null);
    private boolean restarting;
    private Wire.SessionInfoResult session;
    private String loading;
    private List<Wire.SessionUpdateParams> replay = new ArrayList<>();
    private boolean prompting;
    private CompletableFuture<Void> creating;
    private final Map<String, OpenPermission> permissions = new LinkedHashMap<>();
    private int nextRequest = 1;
    /** Why there is no session (no model set up, or session/new failed), said again after a page reload. */
    private HostToPanel problem;

    public PanelBridge(PanelHost host, UserPrompts prompts) {
        this.host = host;
        this.prompts = prompts;
    }

    public void attach(AgentClient client) {
        synchronized (lock) {
            this.client = client;
        }
    }

    public Optional<Wire.SessionInfoResult> session() {
        synchronized (lock) {
            return Optional.ofNullable(session);
        }
    }

    public boolean busy() {
        synchronized (lock) {
            return prompting;
        }
    }

    // -- from the panel ---------------------------------------------------------------------

    /** A message the page sent with {@code window.__agentHostPost(json)}. */
    public void receive(String json) {
        PanelToHost message;
        try {
            message = PanelMessages.readPanelToHost(json);
        } catch (RuntimeException e) {
            host.log("ignored an unreadable panel message: " + e.getMessage());
            return;
        }
        if (message != null) handle(message);
    }

    public void handle(PanelToHost message) {
        if (message instanceof PanelToHost.Ready) {
            ready();
        } else if (message instanceof PanelToHost.Prompt p) {
            prompt(contentBlocks(p.prompt()));
        } else if (message instanceof PanelToHost.Cancel) {
            cancel();
        } else if (message instanceof PanelToHost.NewSession) {
            newSession();
        } else if (message instanceof PanelToHost.SetModel m) {
            setModel(m.modelId());
        } else if (message instanceof PanelToHost.ListSessions) {
            postSessions("");
        } else if (message instanceof PanelToHost.SearchSessions s) {
            postSessions(s.query() == null ? "" : s.query().strip());
        } else if (message instanceof PanelToHost.ResumeSession r) {
            resume(r.sessionId());
        } else if (message instanceof PanelToHost.OpenFile f) {
            host.openFile(f.path(), f.line());
        } else if (message instanceof PanelToHost.OpenLink l) {
            host.openLink(l.href());
        } else if (message instanceof PanelToHost.Copy c) {
            host.copy(c.text());
        } else if (message instanceof PanelToHost.TrustFolder) {
            trustFolder();
        } else if (message instanceof PanelToHost.PermissionAnswer a) {
            answerPermission(a);
        } else if (message instanceof PanelToHost.SetupProvider s) {
            host.setupProvider(s.how());
        } else if (message instanceof PanelToHost.Rewind r) {
            rewind(r.turnId());
        } else if (message instanceof PanelToHost.Unknown u) {
            host.log("ignored a panel message of unknown type " + u.type());
        }
    }

    private void ready() {
        HostToPanel.Server state;
        Wire.SessionInfoResult current;
        List<HostToPanel> asks = new ArrayList<>();
        HostToPanel why;
        synchronized (lock) {
            panelReady = true;
            state = server;
            current = session;
            why = problem;
            permissions.forEach((id, open) -> asks.add(new HostToPanel.PermissionRequest(id, open.params())));
        }
        post(state);
        if (current != null) post(new HostToPanel.Session(current, null, host.cwd()));
        else if (why != null) post(why);
        asks.forEach(this::post);
    }

    // -- from the server (AgentUi) ----------------------------------------------------------

    @Override
    public void onUpdate(Wire.SessionUpdateParams update) {
        synchronized (lock) {
            if (update.sessionId().equals(loading)) {
                replay.add(update);
                return;
            }
            if (session == null || !update.sessionId().equals(session.sessionId())) return;
        }
        post(new HostToPanel.Update(update));
    }

    @Override
    public void onServerState(ServerState state, String message) {
        HostToPanel.Server posted;
        AgentClient restart = null;
        List<OpenPermission> withdrawn = new ArrayList<>();
        synchronized (lock) {
            String word = switch (state) {
                case STARTING -> restarting ? "restarting" : "starting";
                case READY -> "ready";
                case CRASHED -> "restarting";
                case STOPPED -> "stopped";
            };
            restarting = state == ServerState.CRASHED || (restarting && state == ServerState.STARTING);
            posted = new HostToPanel.Server(word, message);
            server = posted;
            if (state != ServerState.READY && state != ServerState.STARTING) {
                session = null;
                prompting = false;
                withdrawn.addAll(permissions.values());
            }
            if (state == ServerState.CRASHED) restart = client;
        }
        post(posted);
        withdrawn.forEach(open -> open.answer().cancel(true));
        if (state == ServerState.READY) newSession();
        if (restart != null) restart.start().exceptionally(e -> null);
    }

    @Override
    public CompletableFuture<Wire.AskQuestionResult> askQuestions(Wire.AskQuestionParams params) {
        return prompts.askQuestions(params);
    }

    /**
     * Asked inline on the tool card when the host's panel can (answered with
     * {@code permissionAnswer}); the client cancels the future when the server withdraws it, and
     * the card closes. Otherwise the IDE's prompts ask.
     */
    @Override
    public CompletableFuture<Wire.RequestPermissionResult> requestPermission(Wire.RequestPermissionParams params) {
        if (!host.asksInPanel()) return prompts.requestPermission(params);
        var answer = new CompletableFuture<Wire.RequestPermissionResult>();
        String requestId;
        synchronized (lock) {
            if (session == null || !session.sessionId().equals(params.sessionId())) {
                return CompletableFuture.completedFuture(Wire.RequestPermissionResult.cancelled());
            }
            requestId = "perm" + nextRequest++;
            permissions.put(requestId, new OpenPermission(params, answer));
        }
        answer.whenComplete((result, error) -> {
            synchronized (lock) {
                permissions.remove(requestId);
            }
            post(new HostToPanel.PermissionClosed(requestId, answer.isCancelled() ? "withdrawn" : "answered"));
        });
        post(new HostToPanel.PermissionRequest(requestId, params));
        return answer;
    }

    private void answerPermission(PanelToHost.PermissionAnswer answer) {
        OpenPermission open;
        synchronized (lock) {
            open = permissions.get(answer.requestId());
        }
        if (open == null) return;
        var offered = open.params().options().stream()
                .filter(o -> o.optionId().equals(answer.optionId()))
                .findFirst();
        if (offered.isEmpty()) {
            open.answer().complete(Wire.RequestPermissionResult.cancelled());
            return;
        }
        String note = answer.message() == null ? "" : answer.message().strip();
        boolean rejecting = offered.get().kind().startsWith("reject");
        open.answer().complete(new Wire.RequestPermissionResult(
                new Wire.PermissionOutcome("selected", offered.get().optionId()), null,
                rejecting && !note.isEmpty() ? note : null));
    }

    private record OpenPermission(Wire.RequestPermissionParams params,
                                  CompletableFuture<Wire.RequestPermissionResult> answer) {}

    @Override
    public void log(String line) {
        host.log(line);
    }

    // -- actions (the panel's and the IDE's) ------------------------------------------------

    /**
     * Opens a new session (closing the current one). Without a ready server it starts one
     * instead; the session follows when the server is ready.
     */
    public CompletableFuture<Void> newSession() {
        AgentClient c;
        Wire.SessionInfoResult old;
        boolean wasPrompting;
        CompletableFuture<Void> done;
        synchronized (lock) {
            if (creating != null) return creating;
            c = client;
            if (c == null) return CompletableFuture.completedFuture(null);
            boolean ready = "ready".equals(server.state());
            old = session;
            wasPrompting = prompting;
            done = ready ? new CompletableFuture<>() : null;
            creating = done;
        }
        if (done == null) {
            c.start().exceptionally(e -> null);
            return CompletableFuture.completedFuture(null);
        }
        if (old != null && wasPrompting) c.cancel(old.sessionId());
        String cwd = host.cwd();
        Wire.NewSessionParams params = Wire.NewSessionParams.in(cwd)
                .withModelAndMode(blankToNull(host.model()), blankToNull(host.permissionMode()))
                .withWorkspaceTrusted(host.workspaceTrusted() ? Boolean.TRUE : null);
        c.newSession(params).whenComplete((info, error) -> {
            synchronized (lock) {
                creating = null;
                if (error == null) {
                    session = info;
                    prompting = false;
                    problem = null;
                }
            }
            if (error == null) {
                post(new HostToPanel.Session(info, null, cwd));
                if (old != null) c.closeSession(old.sessionId()).exceptionally(e -> null);
            } else {
                HostToPanel why = unwrap(error) instanceof RpcException rpc && rpc.code() == RpcException.PROVIDER_UNAVAILABLE
                        ? new HostToPanel.Setup(messageOf(error), host.setupOffers())
                        : new HostToPanel.ErrorMessage("Could not start a session: " + messageOf(error));
                synchronized (lock) {
                    problem = why;
                }
                post(why);
            }
            done.complete(null);
        });
        return done;
    }

    /**
     * The panel's "Trust this folder": the IDE asks the user; once the folder is trusted a new
     * session opens with the project's settings and skills (the current one keeps the trust it
     * started with, as the server decided it then).
     */
    public CompletableFuture<Void> trustFolder() {
        return host.trustFolder().exceptionally(e -> false).thenCompose(trusted -> {
            if (Boolean.TRUE.equals(trusted)) return newSession();
            host.log("the folder was not trusted; sessions keep to the user's settings");
            return CompletableFuture.completedFuture(null);
        });
    }

    /** Sends a prompt to the current session; the result or the failure goes to the panel. */
    public CompletableFuture<Void> prompt(List<ContentBlock> blocks) {
        AgentClient c;
        String sessionId;
        String refused = null;
        synchronized (lock) {
            c = client;
            sessionId = session == null ? null : session.sessionId();
            if (sessionId == null) refused = "No session yet: the server is not ready.";
            else if (blocks.isEmpty()) refused = "Nothing to send.";
            else prompting = true;
        }
        if (refused != null) {
            post(new HostToPanel.PromptError(refused));
            return CompletableFuture.completedFuture(null);
        }
        return c.prompt(sessionId, blocks).handle((result, error) -> {
            synchronized (lock) {
                if (session != null && session.sessionId().equals(sessionId)) prompting = false;
            }
            post(error == null ? new HostToPanel.PromptResult(result) : new HostToPanel.PromptError(messageOf(error)));
            return null;
        });
    }

    public void cancel() {
        AgentClient c;
        String sessionId;
        synchronized (lock) {
            if (session == null) return;
            c = client;
            sessionId = session.sessionId();
        }
        c.cancel(sessionId);
    }

    public CompletableFuture<Void> setModel(String modelId) {
        AgentClient c;
        Wire.SessionInfoResult current;
        synchronized (lock) {
            if (session == null || modelId == null || modelId.isBlank()) return CompletableFuture.completedFuture(null);
            c = client;
            current = session;
        }
        return c.setModel(current.sessionId(), modelId).handle((ok, error) -> {
            if (error == null) {
                post(new HostToPanel.Model(modelId));
            } else {
                post(new HostToPanel.ErrorMessage("Could not switch to " + modelId + ": " + messageOf(error)));
                post(new HostToPanel.Model(current.model()));
            }
            return null;
        });
    }

    public CompletableFuture<Void> setMode(String modeId) {
        AgentClient c;
        String sessionId;
        synchronized (lock) {
            if (session == null || modeId == null || modeId.isBlank()) return CompletableFuture.completedFuture(null);
            c = client;
            sessionId = session.sessionId();
        }
        return c.setMode(sessionId, modeId).handle((ok, error) -> {
            if (error != null) post(new HostToPanel.ErrorMessage("Could not switch to " + modeId + " mode: " + messageOf(error)));
            else post(new HostToPanel.Mode(modeId));
            return null;
        });
    }

    /** Stored sessions in this workspace, or search hits when {@code query} is not empty. */
    public CompletableFuture<List<SessionRow>> fetchSessions(String query) {
        AgentClient c;
        synchronized (lock) {
            c = client;
        }
        if (query != null && !query.isEmpty()) {
            return c.searchSessions(query, 50).thenApply(found -> found.hits().stream()
                    .map(h -> new SessionRow(h.sessionId(), h.snippet(), h.role() + " · " + h.sessionId(), when(h.timestamp())))
                    .toList());
        }
        // An open session that has not run a turn yet (no title) has nothing to resume.
        return c.listSessions(new Wire.ListSessionsParams(host.cwd(), null, 50)).thenApply(found -> found.data().stream()
                .filter(s -> s.title() != null && !s.title().isEmpty())
                .map(s -> new SessionRow(s.sessionId(), s.title(), s.cwd(), when(s.updatedAt())))
                .toList());
    }

    private void postSessions(String query) {
        fetchSessions(query).whenComplete((rows, error) -> post(error == null
                ? new HostToPanel.Sessions(rows, query, null)
                : new HostToPanel.Sessions(List.of(), query, unavailable(error, "Could not list sessions: "))));
    }

    /** Undo a turn and the later ones: a dry run, the user's go-ahead, the rewind; a branch opens. */
    public CompletableFuture<Void> rewind(String turnId) {
        AgentClient c;
        String sessionId;
        synchronized (lock) {
            if (client == null || session == null || turnId == null) return CompletableFuture.completedFuture(null);
            if (prompting) {
                post(new HostToPanel.ErrorMessage("Stop the running turn before rewinding."));
                return CompletableFuture.completedFuture(null);
            }
            c = client;
            sessionId = session.sessionId();
        }
        return c.rewind(sessionId, turnId, false, true)
                .thenCompose(preview -> {
                    if (preview.conflicts() != null && !preview.conflicts().isEmpty()) {
                        post(new HostToPanel.ErrorMessage("Cannot rewind: changed since agentls wrote them: "
                                + String.join(", ", preview.conflicts())));
                        return CompletableFuture.completedFuture(null);
                    }
                    return host.confirmRewind(preview).thenCompose(how -> how == null
                            ? CompletableFuture.completedFuture(null)
                            : c.rewind(sessionId, turnId, how.equals("conversation"), false));
                })
                .thenCompose(done -> {
                    if (done == null) return CompletableFuture.<Void>completedFuture(null);
                    post(new HostToPanel.Rewound(turnId, done.restored(), done.removed()));
                    return done.sessionId() != null ? resume(done.sessionId()) : CompletableFuture.<Void>completedFuture(null);
                })
                .exceptionally(error -> {
                    post(new HostToPanel.ErrorMessage("Could not rewind: " + messageOf(error)));
                    return null;
                });
    }

    /** Opens a stored session; the panel gets the session, then its replayed history. */
    public CompletableFuture<Void> resume(String sessionId) {
        AgentClient c;
        synchronized (lock) {
            if (client == null || sessionId == null || sessionId.isBlank()) return CompletableFuture.completedFuture(null);
            c = client;
            loading = sessionId;
            replay = new ArrayList<>();
        }
        return c.loadSession(sessionId).handle((info, error) -> {
            List<Wire.SessionUpdateParams> history;
            synchronized (lock) {
                history = replay;
                replay = new ArrayList<>();
                loading = null;
                if (error == null) {
                    session = info;
                    prompting = false;
                    problem = null;
                }
            }
            if (error != null) {
                post(new HostToPanel.Sessions(List.of(), null, unavailable(error, "Could not resume the session: ")));
                return null;
            }
            post(new HostToPanel.Session(info, true, host.cwd()));
            history.forEach(update -> post(new HostToPanel.Update(update)));
            return null;
        });
    }

    // -- helpers ----------------------------------------------------------------------------

    private void post(HostToPanel message) {
        synchronized (lock) {
            if (!panelReady) return;
        }
        host.post(PanelMessages.write(message));
    }

    private List<ContentBlock> contentBlocks(List<JsonObject> raw) {
        List<ContentBlock> blocks = new ArrayList<>();
        if (raw == null) return blocks;
        for (JsonObject block : raw) {
            try {
                blocks.add(Json.fromTree(block, ContentBlock.class));
            } catch (RuntimeException e) {
                host.log("dropped a prompt block the server would not understand: " + block.get("type"));
            }
        }
        return blocks;
    }

    private static String unavailable(Throwable error, String prefix) {
        Throwable cause = unwrap(error);
        if (cause instanceof RpcException rpc && rpc.code() == RpcException.METHOD_NOT_FOUND) return HISTORY_UNAVAILABLE;
        return prefix + cause.getMessage();
    }

    static String messageOf(Throwable error) {
        Throwable cause = unwrap(error);
        return cause.getMessage() != null ? cause.getMessage() : cause.toString();
    }

    private static Throwable unwrap(Throwable error) {
        return error instanceof CompletionException && error.getCause() != null ? error.getCause() : error;
    }

    private static String blankToNull(String value) {
        return value == null || value.isBlank() ? null : value;
    }

    static String when(String iso) {
        if (iso == null) return null;
        try {
            return WHEN.format(Instant.parse(iso).atZone(ZoneId.systemDefault()));
        } catch (DateTimeParseException e) {
            return iso;
        }
    }
}
