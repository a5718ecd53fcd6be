package dev.agentls.core.client;

import com.google.gson.JsonElement;
import dev.agentls.core.protocol.Json;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;

/**
 * The server's questions and permission requests that wait for the user, by turn. Each UI
 * answer becomes the JSON-RPC response; a withdrawal reaches the UI's future as a cancel, whether
 * it comes as {@code $/cancelRequest} or as the end of the request's turn.
 */
final class OpenInteractions {
    private final Map<String, Set<CompletableFuture<JsonElement>>> byTurn = new ConcurrentHashMap<>();

    /**
     * The response for one request: the UI's answer, or {@code otherwise} when the UI gives none
     * (fails, or cancels its own future). Cancelling the response cancels the UI's future.
     */
    <T> CompletableFuture<JsonElement> answer(String turnId, CompletableFuture<T> fromUi, Supplier<T> otherwise) {
        CompletableFuture<JsonElement> response = new CompletableFuture<>();
        if (fromUi == null) {
            response.complete(Json.toTree(otherwise.get()));
            return response;
        }
        fromUi.whenComplete((value, error) ->
                response.complete(Json.toTree(error == null && value != null ? value : otherwise.get())));
        response.whenComplete((value, error) -> {
            if (response.isCancelled()) fromUi.cancel(true);
        });
        if (turnId != null) {
            byTurn.computeIfAbsent(turnId, t -> ConcurrentHashMap.newKeySet()).add(response);
            response.whenComplete((value, error) -> {
                Set<CompletableFuture<JsonElement>> open = byTurn.get(turnId);
                if (open != null) open.remove(response);
            });
        }
        return response;
    }

    /** A request still open when its turn ends is moot: withdraw it so the UI closes its dialog. */
    void turnEnded(String turnId) {
        Set<CompletableFuture<JsonElement>> open = byTurn.remove(turnId);
        if (open != null) open.forEach(response -> response.cancel(true));
    }
}
