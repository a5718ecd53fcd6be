package dev.agentls.core.panel;

import dev.agentls.core.protocol.Wire;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * What the IDE does for the panel: deliver messages to the page and act on its requests.
 * Called from any thread.
 */
public interface PanelHost {
    /** Delivers one host-to-panel message (JSON) to the page: {@code window.__agentReceive(json)}. */
    void post(String json);

    /** The workspace new sessions run in. */
    String cwd();

    /** Model for new sessions; null or empty uses the server's configuration. */
    default String model() {
        return null;
    }

    /** Permission mode for new sessions; null or empty uses the server's configuration. */
    default String permissionMode() {
        return null;
    }

    /** The IDE's own trust in {@link #cwd()}; passed as {@code workspaceTrusted} on session/new. */
    default boolean workspaceTrusted() {
        return false;
    }

    /**
     * "Trust this folder": let the user trust {@link #cwd()} (the IDE's trust dialog). Completes
     * with whether the folder is trusted now; the bridge then opens a trusted session.
     */
    default CompletableFuture<Boolean> trustFolder() {
        return CompletableFuture.completedFuture(false);
    }

    /**
     * Whether permission requests are asked inline in the panel (the web panel) rather than
     * through the IDE's {@code UserPrompts} (a plain view that cannot show them).
     */
    default boolean asksInPanel() {
        return false;
    }

    /** The first-run ways this host can set up a model ({@code key}, {@code local}); none by default. */
    default List<String> setupOffers() {
        return List.of();
    }

    /** Set up a model the way the user picked on the first-run card, then restart the server. */
    default void setupProvider(String how) {}

    /**
     * Ask before undoing turns, showing what a dry run says would change: {@code files},
     * {@code conversation} (files and a branch session), or null (no; the default: a host that
     * cannot ask undoes nothing).
     */
    default CompletableFuture<String> confirmRewind(Wire.RewindResult preview) {
        return CompletableFuture.completedFuture(null);
    }

    default void openFile(String path, Integer line) {}

    default void openLink(String href) {}

    default void copy(String text) {}

    default void log(String message) {}
}
