package dev.agentls.core.client;

import java.util.ArrayDeque;
import java.util.Deque;

/** Restart a crashed server at most {@code maxRestarts} times within {@code windowMillis}. */
public final class RestartPolicy {
    private final int maxRestarts;
    private final long windowMillis;
    private final Deque<Long> crashes = new ArrayDeque<>();

    public RestartPolicy(int maxRestarts, long windowMillis) {
        this.maxRestarts = maxRestarts;
        this.windowMillis = windowMillis;
    }

    /** Four restarts in three minutes, like the VS Code extension. */
    public static RestartPolicy standard() {
        return new RestartPolicy(4, 3 * 60_000L);
    }

    /** Records a crash at {@code nowMillis}; true when another restart is allowed. */
    public synchronized boolean allow(long nowMillis) {
        crashes.addLast(nowMillis);
        while (!crashes.isEmpty() && nowMillis - crashes.peekFirst() > windowMillis) crashes.removeFirst();
        return crashes.size() <= maxRestarts;
    }

    public synchronized void reset() {
        crashes.clear();
    }
}
