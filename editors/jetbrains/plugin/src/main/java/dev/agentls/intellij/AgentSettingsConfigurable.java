package dev.agentls.intellij;

import com.intellij.openapi.options.Configurable;
import com.intellij.openapi.project.Project;
import com.intellij.openapi.project.ProjectManager;
import com.intellij.openapi.ui.ComboBox;
import com.intellij.ui.components.JBLabel;
import com.intellij.ui.components.JBTextField;
import com.intellij.util.ui.FormBuilder;
import java.util.Objects;
import javax.swing.JComponent;
import javax.swing.JPanel;

/** The server command, the model and the permission mode for new sessions. */
public final class AgentSettingsConfigurable implements Configurable {
    private static final String[] MODES = {"default", "plan", "acceptEdits", "bypassPermissions"};

    private JBTextField serverCommand;
    private JBTextField model;
    private ComboBox<String> mode;

    @Override
    public String getDisplayName() {
        return "agentls";
    }

    @Override
    public JComponent createComponent() {
        serverCommand = new JBTextField();
        serverCommand.getEmptyText().setText("agentls serve (from PATH)");
        model = new JBTextField();
        model.getEmptyText().setText("the server's configuration");
        mode = new ComboBox<>(MODES);
        JPanel panel = FormBuilder.createFormBuilder()
                .addLabeledComponent("Server command:", serverCommand)
                .addComponentToRightColumn(new JBLabel("e.g. /path/to/.venv/bin/agentls serve; a program alone gets 'serve' added"))
                .addLabeledComponent("Model for new sessions:", model)
                .addLabeledComponent("Permission mode:", mode)
                .addComponentFillVertically(new JPanel(), 0)
                .getPanel();
        reset();
        return panel;
    }

    @Override
    public boolean isModified() {
        AgentSettings.State s = AgentSettings.getInstance().getState();
        return !serverCommand.getText().strip().equals(s.serverCommand)
                || !model.getText().strip().equals(s.model)
                || !Objects.equals(mode.getSelectedItem(), s.permissionMode);
    }

    @Override
    public void apply() {
        AgentSettings.State s = AgentSettings.getInstance().getState();
        boolean commandChanged = !serverCommand.getText().strip().equals(s.serverCommand);
        s.serverCommand = serverCommand.getText().strip();
        s.model = model.getText().strip();
        s.permissionMode = (String) mode.getSelectedItem();
        for (Project project : ProjectManager.getInstance().getOpenProjects()) {
            AgentProjectService service = project.getServiceIfCreated(AgentProjectService.class);
            if (service == null) continue;
            if (commandChanged) service.restartServer();
            else service.bridge().setMode(s.permissionMode);
        }
    }

    @Override
    public void reset() {
        AgentSettings.State s = AgentSettings.getInstance().getState();
        serverCommand.setText(s.serverCommand);
        model.setText(s.model);
        mode.setSelectedItem(s.permissionMode);
    }

    @Override
    public void disposeUIResources() {
        serverCommand = null;
        model = null;
        mode = null;
    }
}
