package dev.agentls.intellij;

import com.intellij.openapi.editor.colors.EditorColorsManager;
import com.intellij.openapi.project.Project;
import com.intellij.openapi.ui.DialogWrapper;
import com.intellij.ui.components.JBLabel;
import com.intellij.ui.components.JBScrollPane;
import com.intellij.ui.components.JBTextArea;
import com.intellij.util.ui.JBUI;
import dev.agentls.core.client.Interactions;
import dev.agentls.core.protocol.Wire;
import java.awt.BorderLayout;
import java.awt.Font;
import java.awt.event.ActionEvent;
import java.util.List;
import javax.swing.Action;
import javax.swing.JComponent;
import javax.swing.JPanel;
import org.jetbrains.annotations.NotNull;

/** May this tool call run? One button per option the server offers; Esc or closing is no answer. */
final class PermissionDialog extends DialogWrapper {
    private final Wire.RequestPermissionParams params;
    private final List<Wire.PermissionOption> choices;
    private Wire.PermissionOption chosen;

    PermissionDialog(Project project, Wire.RequestPermissionParams params) {
        super(project, false);
        this.params = params;
        this.choices = Interactions.permissionChoices(params);
        setTitle("agentls: Permission");
        init();
    }

    /** The option picked, or null when the dialog was closed without one. */
    Wire.PermissionOption chosen() {
        return chosen;
    }

    @Override
    protected JComponent createCenterPanel() {
        JPanel panel = new JPanel(new BorderLayout(0, JBUI.scale(8)));
        panel.add(new JBLabel(Interactions.permissionTitle(params)), BorderLayout.NORTH);
        JBTextArea detail = new JBTextArea(Interactions.permissionDetail(params));
        detail.setEditable(false);
        detail.setFont(new Font(EditorColorsManager.getInstance().getGlobalScheme().getEditorFontName(), Font.PLAIN,
                detail.getFont().getSize()));
        JBScrollPane scroll = new JBScrollPane(detail);
        scroll.setPreferredSize(JBUI.size(520, 180));
        panel.add(scroll, BorderLayout.CENTER);
        return panel;
    }

    @Override
    protected Action @NotNull [] createActions() {
        Action[] actions = new Action[choices.size()];
        for (int i = 0; i < actions.length; i++) {
            Wire.PermissionOption option = choices.get(i);
            actions[i] = new DialogWrapperAction(option.name()) {
                @Override
                protected void doAction(ActionEvent e) {
                    chosen = option;
                    close(OK_EXIT_CODE);
                }
            };
        }
        if (actions.length > 0) actions[0].putValue(DEFAULT_ACTION, Boolean.TRUE);
        return actions;
    }
}
