package dev.agentls.core.rpc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.channels.Channels;
import java.nio.channels.Pipe;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The connection against a scripted peer on the other end of two pipes. */
class JsonRpcConnectionTest {
    private JsonRpcConnection conn;
    private Peer peer;
    private final List<String> log = new CopyOnWriteArrayList<>();

    /** The server side: reads the client's frames, writes raw frames back. */
    static final class Peer {
        final OutputStream toClient;
        final BlockingQueue<JsonObject> received = new LinkedBlockingQueue<>();

        Peer(InputStream fromClient, OutputStream toClient) {
            this.toClient = toClient;
            Thread reader = new Thread(() -> {
                FrameReader frames = new FrameReader(fromClient, s -> {});
                try {
                    byte[] body;
                    while ((body = frames.next()) != null) {
                        received.add(JsonParser.parseString(new String(body, StandardCharsets.UTF_8)).getAsJsonObject());
                    }
                } catch (IOException ignored) {
                    // closed
                }
            });
            reader.setDaemon(true);
            reader.start();
        }

        JsonObject next() throws InterruptedException {
            JsonObject msg = received.poll(5, TimeUnit.SECONDS);
            if (msg == null) throw new AssertionError("the client sent nothing");
            return msg;
        }

        void send(String json) throws IOException {
            toClient.write(FrameReaderTest.frame(json));
            toClient.flush();
        }
    }

    @BeforeEach
    void connect() throws IOException {
        Pipe toClient = Pipe.open();
        Pipe fromClient = Pipe.open();
        peer = new Peer(Channels.newInputStream(fromClient.source()), Channels.newOutputStream(toClient.sink()));
        conn = new JsonRpcConnection(Channels.newInputStream(toClient.source()),
                Channels.newOutputStream(fromClient.sink()), "test", log::add);
    }

    @AfterEach
    void close() throws IOException {
        conn.close();
        peer.toClient.close();
    }

    private static JsonObject json(String text) {
        return JsonParser.parseString(text).getAsJsonObject();
    }

    @Test
    void requestsGetTheirOwnAnswersInAnyOrder() throws Exception {
        conn.start();
        CompletableFuture<JsonElement> first = conn.request("a/first", json("{\"x\":1}"));
        CompletableFuture<JsonElement> second = conn.request("a/second", null);
        JsonObject one = peer.next();
        JsonObject two = peer.next();
        assertEquals(json("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"a/first\",\"params\":{\"x\":1}}"), one);
        assertEquals(json("{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"a/second\"}"), two);
        peer.send("{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":\"two\"}");
        peer.send("{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"ok\":true}}");
        assertEquals(json("{\"ok\":true}"), first.get(5, TimeUnit.SECONDS));
        assertEquals("two", second.get(5, TimeUnit.SECONDS).getAsString());
    }

    @Test
    void errorResponsesFailTheRequestWithCodeAndData() throws Exception {
        conn.start();
        CompletableFuture<JsonElement> call = conn.request("session/prompt", json("{}"));
        peer.next();
        peer.send("{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":-32602,\"message\":\"invalid params: prompt\","
                + "\"data\":[{\"path\":\"prompt\"}]}}");
        ExecutionException e = assertThrows(ExecutionException.class, () -> call.get(5, TimeUnit.SECONDS));
        RpcException rpc = assertInstanceOf(RpcException.class, e.getCause());
        assertEquals(RpcException.INVALID_PARAMS, rpc.code());
        assertEquals("invalid params: prompt", rpc.getMessage());
        assertEquals(JsonParser.parseString("[{\"path\":\"prompt\"}]"), rpc.data());
    }

    @Test
    void serverRequestsAreAnsweredByTheirHandlers() throws Exception {
        conn.onRequest("session/ask_question", params -> CompletableFuture.completedFuture(
                json("{\"answers\":{\"q\":\"" + params.getAsJsonObject().get("n").getAsInt() + "\"}}")));
        conn.onRequest("broken", params -> {
            throw new IllegalStateException("boom");
        });
        conn.start();
        peer.send("{\"jsonrpc\":\"2.0\",\"id\":\"agentls-1\",\"method\":\"session/ask_question\",\"params\":{\"n\":7}}");
        assertEquals(json("{\"jsonrpc\":\"2.0\",\"id\":\"agentls-1\",\"result\":{\"answers\":{\"q\":\"7\"}}}"), peer.next());
        peer.send("{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"no/such\",\"params\":{}}");
        JsonObject unknown = peer.next();
        assertEquals(5, unknown.get("id").getAsInt());
        assertEquals(RpcException.METHOD_NOT_FOUND, unknown.getAsJsonObject("error").get("code").getAsInt());
        peer.send("{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"broken\"}");
        JsonObject broken = peer.next();
        assertEquals(json("{\"code\":-32603,\"message\":\"boom\"}"), broken.getAsJsonObject("error"));
    }

    @Test
    void handlerErrorsKeepTheirRpcCode() throws Exception {
        conn.onRequest("picky", params -> CompletableFuture.failedFuture(new RpcException(RpcException.SESSION_NOT_FOUND, "no session")));
        conn.start();
        peer.send("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"picky\"}");
        assertEquals(json("{\"code\":-31001,\"message\":\"no session\"}"), peer.next().getAsJsonObject("error"));
    }

    @Test
    void cancelRequestFromThePeerCancelsThePendingAnswer() throws Exception {
        CompletableFuture<JsonElement> answer = new CompletableFuture<>();
        conn.onRequest("session/request_permission", params -> answer);
        conn.start();
        peer.send("{\"jsonrpc\":\"2.0\",\"id\":\"p1\",\"method\":\"session/request_permission\",\"params\":{}}");
        peer.send("{\"jsonrpc\":\"2.0\",\"method\":\"$/cancelRequest\",\"params\":{\"id\":\"p1\"}}");
        JsonObject response = peer.next();
        assertTrue(answer.isCancelled());
        assertEquals("p1", response.get("id").getAsString());
        assertEquals(RpcException.REQUEST_CANCELLED, response.getAsJsonObject("error").get("code").getAsInt());
    }

    @Test
    void notificationsArriveInOrderAndUnknownOnesAreIgnored() throws Exception {
        BlockingQueue<Integer> seen = new LinkedBlockingQueue<>();
        conn.onNotification("session/update", params -> seen.add(params.getAsJsonObject().get("seq").getAsInt()));
        conn.start();
        for (int i = 1; i <= 50; i++) {
            if (i == 25) peer.send("{\"jsonrpc\":\"2.0\",\"method\":\"what/ever\",\"params\":{}}");
            peer.send("{\"jsonrpc\":\"2.0\",\"method\":\"session/update\",\"params\":{\"seq\":" + i + "}}");
        }
        for (int i = 1; i <= 50; i++) assertEquals(i, seen.poll(5, TimeUnit.SECONDS));
        assertEquals(List.of(), log);
    }

    @Test
    void unreadableFramesAreLoggedAndReadingGoesOn() throws Exception {
        BlockingQueue<JsonElement> seen = new LinkedBlockingQueue<>();
        conn.onNotification("n", seen::add);
        conn.start();
        peer.send("{not json");
        peer.send("[1, 2]");
        peer.send("{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32700,\"message\":\"parse error\"}}");
        peer.send("{\"jsonrpc\":\"2.0\",\"method\":\"n\",\"params\":{\"ok\":1}}");
        assertEquals(json("{\"ok\":1}"), seen.poll(5, TimeUnit.SECONDS));
        assertEquals(3, log.size(), log.toString());
    }

    @Test
    void endOfStreamFailsPendingRequests() throws Exception {
        conn.start();
        CompletableFuture<JsonElement> call = conn.request("session/prompt", json("{}"));
        peer.next();
        peer.toClient.close();
        ExecutionException e = assertThrows(ExecutionException.class, () -> call.get(5, TimeUnit.SECONDS));
        assertInstanceOf(ConnectionClosedException.class, e.getCause());
        assertEquals("end of stream", conn.closed().get(5, TimeUnit.SECONDS));
        CompletableFuture<JsonElement> late = conn.request("x", null);
        assertInstanceOf(ConnectionClosedException.class,
                assertThrows(ExecutionException.class, () -> late.get(1, TimeUnit.SECONDS)).getCause());
    }
}
