package dev.agentls.intellij;

import com.intellij.openapi.application.ApplicationManager;
import com.intellij.openapi.components.PersistentStateComponent;
import com.intellij.openapi.components.Service;
import com.intellij.openapi.components.State;
import com.intellij.openapi.components.Storage;
import org.jetbrains.annotations.NotNull;

/** Settings | Tools | agentls, stored in agentls.xml. */
@Service(Service.Level.APP)
@State(name = "AgentlsSettings", storages = @Storage("agentls.xml"))
public final class AgentSettings implements PersistentStateComponent<AgentSettings.State> {
    public static final class State {
        /** Command line that starts the server; empty: `agentls serve` from PATH. */
        public String serverCommand = "";
        /** Model for new sessions; empty: the server's configuration. */
        public String model = "";
        /** default, plan, acceptEdits or bypassPermissions, for new sessions. */
        public String permissionMode = "default";
    }

    private State state = new State();

    public static AgentSettings getInstance() {
        return ApplicationManager.getApplication().getService(AgentSettings.class);
    }

    @Override
    public @NotNull State getState() {
        return state;
    }

    @Override
    public void loadState(@NotNull State loaded) {
        state = loaded;
    }
}
