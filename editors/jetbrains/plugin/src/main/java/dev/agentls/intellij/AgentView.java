package dev.agentls.intellij;

import com.intellij.openapi.Disposable;
import javax.swing.JComponent;

/** What shows the panel in the tool window: the shared web panel in JCEF, or the Swing fallback. */
interface AgentView extends Disposable {
    JComponent component();

    /** Delivers one host-to-panel message (JSON); callable from any thread. */
    void post(String json);

    /** Called once the service delivers to this view. */
    default void shown() {}
}
