package dev.agentls.core.client;

/** The server is not running and was not started: it failed to start, or crashed too often. */
public class ServerStoppedException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public ServerStoppedException(String message) {
        super(message);
    }
}
