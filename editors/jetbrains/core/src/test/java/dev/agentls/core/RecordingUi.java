package dev.agentls.core;

import dev.agentls.core.client.AgentUi;
import dev.agentls.core.client.ServerState;
import dev.agentls.core.protocol.Json;
import dev.agentls.core.protocol.SessionUpdate;
import dev.agentls.core.protocol.Wire;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Function;
import java.util.function.Predicate;

/** An AgentUi that records everything and answers with replaceable functions. */
public class RecordingUi implements AgentUi {
    public final List<Wire.SessionUpdateParams> updates = new CopyOnWriteArrayList<>();
    public final List<String> states = new CopyOnWriteArrayList<>();
    public final List<String> logs = new CopyOnWriteArrayList<>();
    public final List<Wire.AskQuestionParams> questions = new CopyOnWriteArrayList<>();
    public final List<Wire.RequestPermissionParams> permissions = new CopyOnWriteArrayList<>();
    public final List<CompletableFuture<?>> pending = new CopyOnWriteArrayList<>();
    public volatile Function<Wire.AskQuestionParams, CompletableFuture<Wire.AskQuestionResult>> onQuestion =
            p -> CompletableFuture.completedFuture(Wire.AskQuestionResult.declinedByUser());
    public volatile Function<Wire.RequestPermissionParams, CompletableFuture<Wire.RequestPermissionResult>> onPermission =
            p -> CompletableFuture.completedFuture(Wire.RequestPermissionResult.selected("allow_once"));

    @Override
    public void onUpdate(Wire.SessionUpdateParams update) {
        updates.add(update);
    }

    @Override
    public CompletableFuture<Wire.AskQuestionResult> askQuestions(Wire.AskQuestionParams params) {
        questions.add(params);
        CompletableFuture<Wire.AskQuestionResult> answer = onQuestion.apply(params);
        pending.add(answer);
        return answer;
    }

    @Override
    public CompletableFuture<Wire.RequestPermissionResult> requestPermission(Wire.RequestPermissionParams params) {
        permissions.add(params);
        CompletableFuture<Wire.RequestPermissionResult> answer = onPermission.apply(params);
        pending.add(answer);
        return answer;
    }

    @Override
    public void onServerState(ServerState state, String message) {
        states.add(message == null ? state.name() : state.name() + ": " + message);
    }

    @Override
    public void log(String line) {
        logs.add(line);
    }

    public List<String> kinds() {
        return updates.stream().map(u -> Json.kindOf(u.update())).toList();
    }

    public <T extends SessionUpdate> List<T> updatesOf(Class<T> type) {
        return updates.stream().map(Wire.SessionUpdateParams::update).filter(type::isInstance).map(type::cast).toList();
    }

    /** Generous: the machines these run on may be busy. */
    public static void waitFor(String what, java.util.function.BooleanSupplier condition) throws InterruptedException {
        long deadline = System.nanoTime() + 45_000_000_000L;
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) throw new AssertionError("timed out waiting for " + what);
            Thread.sleep(10);
        }
    }

    public boolean sawUpdate(Predicate<SessionUpdate> predicate) {
        return updates.stream().map(Wire.SessionUpdateParams::update).anyMatch(predicate);
    }
}
