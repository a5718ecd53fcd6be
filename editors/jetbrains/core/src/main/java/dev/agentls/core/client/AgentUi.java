package dev.agentls.core.client;

import dev.agentls.core.protocol.Wire.SessionUpdateParams;

/**
 * The user interface an {@link AgentClient} talks to; the IDE implements it. Methods may be
 * called on any thread (updates on the connection's reader thread, in order): hop to the UI
 * thread as needed, and never block.
 */
public interface AgentUi extends UserPrompts {
    /** One event of a turn, to render. */
    void onUpdate(SessionUpdateParams update);

    /** The server started, became ready, crashed or stopped; {@code message} says why, or is null. */
    default void onServerState(ServerState state, String message) {}

    /** A line of the server's stderr, or a note from the client about the connection. */
    default void log(String line) {}
}
