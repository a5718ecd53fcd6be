package dev.agentls.core.rpc;

/** The connection ended (the server exited or its stdout closed) before an answer came. */
public class ConnectionClosedException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public ConnectionClosedException(String message) {
        super(message);
    }
}
