package dev.agentls.core.panel;

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

    default void openFile(String path, Integer line) {}

    default void openLink(String href) {}

    default void copy(String text) {}

    default void log(String message) {}
}
