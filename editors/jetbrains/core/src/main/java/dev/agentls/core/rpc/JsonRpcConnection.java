package dev.agentls.core.rpc;

import com.google.gson.Gson;
import com.google.gson.GsonBuilder;
import com.google.gson.JsonElement;
import com.google.gson.JsonNull;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import com.google.gson.JsonPrimitive;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;

/**
 * JSON-RPC 2.0 over LSP framing, both directions: requests with numeric ids and futures for
 * their answers, notifications, and handlers for the requests and notifications the peer sends.
 *
 * <p>One reader thread delivers everything in arrival order: notification handlers run on it
 * (so they must not block), request handlers return a future and may complete it from any
 * thread; the response is written when it completes. A {@code $/cancelRequest} from the peer
 * cancels that future. When the stream ends, every pending request fails with
 * {@link ConnectionClosedException} and {@link #closed()} completes.
 */
public final class JsonRpcConnection {
    /** Answers one request from the peer. Throw or fail with {@link RpcException} to choose the error code. */
    @FunctionalInterface
    public interface RequestHandler {
        CompletableFuture<JsonElement> handle(JsonElement params) throws Exception;
    }

    private static final Gson GSON = new GsonBuilder().disableHtmlEscaping().serializeNulls().create();

    private final FrameReader reader;
    private final FrameWriter writer;
    private final String name;
    private final AtomicLong nextId = new AtomicLong(1);
    private final Map<String, CompletableFuture<JsonElement>> pending = new ConcurrentHashMap<>();
    private final Map<String, CompletableFuture<JsonElement>> inbound = new ConcurrentHashMap<>();
    private final Map<String, RequestHandler> requestHandlers = new ConcurrentHashMap<>();
    private final Map<String, Consumer<JsonElement>> notificationHandlers = new ConcurrentHashMap<>();
    private final CompletableFuture<String> closed = new CompletableFuture<>();
    private final Consumer<String> log;
    private volatile boolean open = true;

    /** {@code log} receives protocol problems: skipped bytes, unreadable frames, stray responses. */
    public JsonRpcConnection(InputStream in, OutputStream out, String name, Consumer<String> log) {
        this.reader = new FrameReader(in, log);
        this.writer = new FrameWriter(out);
        this.name = name;
        this.log = log;
    }

    public void onRequest(String method, RequestHandler handler) {
        requestHandlers.put(method, handler);
    }

    public void onNotification(String method, Consumer<JsonElement> handler) {
        notificationHandlers.put(method, handler);
    }

    /** Starts the reader thread; register handlers first. */
    public void start() {
        Thread thread = new Thread(this::readLoop, name + "-reader");
        thread.setDaemon(true);
        thread.start();
    }

    /** Completes with the reason once the connection has ended. */
    public CompletableFuture<String> closed() {
        return closed;
    }

    public boolean isOpen() {
        return open;
    }

    public CompletableFuture<JsonElement> request(String method, JsonElement params) {
        long id = nextId.getAndIncrement();
        String key = new JsonPrimitive(id).toString();
        CompletableFuture<JsonElement> future = new CompletableFuture<>();
        if (!open) {
            future.completeExceptionally(new ConnectionClosedException("the connection is closed"));
            return future;
        }
        pending.put(key, future);
        JsonObject msg = envelope();
        msg.addProperty("id", id);
        msg.addProperty("method", method);
        if (params != null) msg.add("params", params);
        try {
            send(msg);
        } catch (IOException e) {
            pending.remove(key);
            future.completeExceptionally(new ConnectionClosedException("cannot write to the server: " + e.getMessage()));
        }
        if (!open && pending.remove(key) != null) {
            future.completeExceptionally(new ConnectionClosedException("the connection is closed"));
        }
        return future;
    }

    /** Sends a notification; false when the connection is closed or the write failed. */
    public boolean notify(String method, JsonElement params) {
        if (!open) return false;
        JsonObject msg = envelope();
        msg.addProperty("method", method);
        if (params != null) msg.add("params", params);
        try {
            send(msg);
            return true;
        } catch (IOException e) {
            return false;
        }
    }

    /** Closes our end; the reader ends when the peer's output does. */
    public void close() {
        try {
            writer.close();
        } catch (IOException ignored) {
            // already closed
        }
    }

    // -- reading ----------------------------------------------------------------------------

    private void readLoop() {
        String reason = "end of stream";
        try {
            byte[] body;
            while ((body = reader.next()) != null) {
                dispatch(body);
            }
        } catch (IOException e) {
            reason = "read failed: " + e.getMessage();
        } catch (RuntimeException e) {
            reason = "reader failed: " + e;
            log.accept(name + ": " + reason);
        } finally {
            shutDown(reason);
        }
    }

    private void shutDown(String reason) {
        open = false;
        ConnectionClosedException error = new ConnectionClosedException("the connection closed (" + reason + ")");
        for (String key : List.copyOf(pending.keySet())) {
            CompletableFuture<JsonElement> future = pending.remove(key);
            if (future != null) future.completeExceptionally(error);
        }
        for (CompletableFuture<JsonElement> future : List.copyOf(inbound.values())) future.cancel(true);
        inbound.clear();
        closed.complete(reason);
    }

    private void dispatch(byte[] body) {
        JsonElement parsed;
        try {
            parsed = JsonParser.parseString(new String(body, StandardCharsets.UTF_8));
        } catch (RuntimeException e) {
            log.accept(name + ": unreadable frame body: " + e.getMessage());
            return;
        }
        if (!parsed.isJsonObject()) {
            log.accept(name + ": ignored a frame that is not a JSON object");
            return;
        }
        JsonObject msg = parsed.getAsJsonObject();
        JsonElement id = msg.get("id");
        boolean hasId = id != null && !id.isJsonNull();
        if (msg.has("method") && msg.get("method").isJsonPrimitive()) {
            String method = msg.get("method").getAsString();
            if (hasId) handleRequest(id, method, msg.get("params"));
            else handleNotification(method, msg.get("params"));
        } else if (hasId) {
            handleResponse(id, msg);
        } else if (msg.has("error")) {
            log.accept(name + ": the server reported an error without an id: " + msg.get("error"));
        } else {
            log.accept(name + ": ignored a message that is neither a request, a notification nor a response");
        }
    }

    private void handleResponse(JsonElement id, JsonObject msg) {
        CompletableFuture<JsonElement> future = pending.remove(id.toString());
        if (future == null) {
            log.accept(name + ": a response to an unknown request id " + id);
            return;
        }
        if (msg.has("error") && msg.get("error").isJsonObject()) {
            future.completeExceptionally(toException(msg.getAsJsonObject("error")));
        } else {
            JsonElement result = msg.get("result");
            future.complete(result == null ? JsonNull.INSTANCE : result);
        }
    }

    private static RpcException toException(JsonObject error) {
        int code = error.has("code") && error.get("code").isJsonPrimitive()
                ? error.get("code").getAsInt() : RpcException.INTERNAL_ERROR;
        String message = error.has("message") && error.get("message").isJsonPrimitive()
                ? error.get("message").getAsString() : "error " + code;
        return new RpcException(code, message, error.get("data"));
    }

    private void handleNotification(String method, JsonElement params) {
        if (method.equals("$/cancelRequest")) {
            if (params != null && params.isJsonObject() && params.getAsJsonObject().has("id")) {
                CompletableFuture<JsonElement> future = inbound.get(params.getAsJsonObject().get("id").toString());
                if (future != null) future.cancel(true);
            }
            return;
        }
        Consumer<JsonElement> handler = notificationHandlers.get(method);
        if (handler == null) return; // unknown notifications (and other `$/` ones) are ignored
        try {
            handler.accept(params);
        } catch (RuntimeException e) {
            log.accept(name + ": the " + method + " handler failed: " + e);
        }
    }

    private void handleRequest(JsonElement id, String method, JsonElement params) {
        RequestHandler handler = requestHandlers.get(method);
        if (handler == null) {
            respondError(id, new RpcException(RpcException.METHOD_NOT_FOUND, "no handler for " + method));
            return;
        }
        CompletableFuture<JsonElement> future;
        try {
            future = handler.handle(params);
        } catch (Exception e) {
            future = CompletableFuture.failedFuture(e);
        }
        String key = id.toString();
        inbound.put(key, future);
        future.whenComplete((result, error) -> {
            inbound.remove(key);
            if (error == null) respond(id, result == null ? JsonNull.INSTANCE : result);
            else respondError(id, asRpcError(error));
        });
    }

    private static RpcException asRpcError(Throwable error) {
        Throwable cause = error instanceof CompletionException && error.getCause() != null ? error.getCause() : error;
        if (cause instanceof RpcException rpc) return rpc;
        if (cause instanceof CancellationException) {
            return new RpcException(RpcException.REQUEST_CANCELLED, "cancelled");
        }
        return new RpcException(RpcException.INTERNAL_ERROR, String.valueOf(cause.getMessage()));
    }

    // -- writing ----------------------------------------------------------------------------

    private void respond(JsonElement id, JsonElement result) {
        JsonObject msg = envelope();
        msg.add("id", id);
        msg.add("result", result);
        sendQuietly(msg);
    }

    private void respondError(JsonElement id, RpcException e) {
        JsonObject error = new JsonObject();
        error.addProperty("code", e.code());
        error.addProperty("message", e.getMessage());
        if (e.data() != null) error.add("data", e.data());
        JsonObject msg = envelope();
        msg.add("id", id);
        msg.add("error", error);
        sendQuietly(msg);
    }

    private void sendQuietly(JsonObject msg) {
        if (!open) return;
        try {
            send(msg);
        } catch (IOException e) {
            log.accept(name + ": could not write a response: " + e.getMessage());
        }
    }

    private void send(JsonObject msg) throws IOException {
        writer.write(GSON.toJson(msg));
    }

    private static JsonObject envelope() {
        JsonObject msg = new JsonObject();
        msg.addProperty("jsonrpc", "2.0");
        return msg;
    }
}
