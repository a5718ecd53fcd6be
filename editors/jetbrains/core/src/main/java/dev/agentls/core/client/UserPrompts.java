package dev.agentls.core.client;

import dev.agentls.core.protocol.Wire.AskQuestionParams;
import dev.agentls.core.protocol.Wire.AskQuestionResult;
import dev.agentls.core.protocol.Wire.RequestPermissionParams;
import dev.agentls.core.protocol.Wire.RequestPermissionResult;
import java.util.concurrent.CompletableFuture;

/**
 * What the server asks the user. Both are called on the connection's reader thread and must
 * return at once; complete the future when the user has answered (from any thread). When the
 * server withdraws the request (the turn was cancelled or timed out) the client cancels the
 * future: watch for that to close the dialog.
 */
public interface UserPrompts {
    /** One to four multiple-choice questions (free text allowed); answer or decline. */
    CompletableFuture<AskQuestionResult> askQuestions(AskQuestionParams params);

    /** May this tool call run? Select one of the offered options, or cancel. */
    CompletableFuture<RequestPermissionResult> requestPermission(RequestPermissionParams params);
}
