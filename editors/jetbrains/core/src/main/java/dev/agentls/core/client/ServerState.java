package dev.agentls.core.client;

/** Where the agentls server process is in its life, as the client reports it. */
public enum ServerState {
    /** Spawned, waiting for the answer to {@code initialize}. */
    STARTING,
    /** Initialized: requests go through. */
    READY,
    /** It stopped unexpectedly; the next request starts it again. */
    CRASHED,
    /** Not running: never started, stopped on purpose, failed to start, or crashed too often. */
    STOPPED
}
