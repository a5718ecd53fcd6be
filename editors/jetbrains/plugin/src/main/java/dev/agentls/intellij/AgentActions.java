package dev.agentls.intellij;

import com.intellij.openapi.actionSystem.ActionUpdateThread;
import com.intellij.openapi.actionSystem.AnAction;
import com.intellij.openapi.actionSystem.AnActionEvent;
import com.intellij.openapi.application.ApplicationManager;
import com.intellij.openapi.application.ModalityState;
import com.intellij.openapi.project.DumbAware;
import com.intellij.openapi.project.Project;
import com.intellij.openapi.ui.Messages;
import com.intellij.openapi.ui.popup.JBPopupFactory;
import com.intellij.openapi.wm.ToolWindowManager;
import com.intellij.ui.SimpleListCellRenderer;
import dev.agentls.core.panel.PanelMessages.SessionRow;
import dev.agentls.core.protocol.Wire;
import java.util.List;
import org.jetbrains.annotations.NotNull;

/** Tools | agentls: thin actions over the project's {@link AgentProjectService}. */
public final class AgentActions {
    private AgentActions() {}

    private abstract static class ProjectAction extends AnAction implements DumbAware {
        @Override
        public @NotNull ActionUpdateThread getActionUpdateThread() {
            return ActionUpdateThread.BGT;
        }

        @Override
        public void update(@NotNull AnActionEvent e) {
            e.getPresentation().setEnabled(e.getProject() != null);
        }

        @Override
        public void actionPerformed(@NotNull AnActionEvent e) {
            Project project = e.getProject();
            if (project != null) perform(project, AgentProjectService.getInstance(project));
        }

        abstract void perform(Project project, AgentProjectService service);
    }

    private static void showToolWindow(Project project) {
        var window = ToolWindowManager.getInstance(project).getToolWindow("agentls");
        if (window != null) window.show();
    }

    public static final class NewSession extends ProjectAction {
        @Override
        void perform(Project project, AgentProjectService service) {
            showToolWindow(project);
            service.bridge().newSession();
        }
    }

    public static final class Cancel extends ProjectAction {
        @Override
        void perform(Project project, AgentProjectService service) {
            service.bridge().cancel();
        }
    }

    public static final class RestartServer extends ProjectAction {
        @Override
        void perform(Project project, AgentProjectService service) {
            service.restartServer();
        }
    }

    public static final class SwitchModel extends ProjectAction {
        @Override
        void perform(Project project, AgentProjectService service) {
            Wire.SessionInfoResult session = service.bridge().session().orElse(null);
            if (session == null) {
                Messages.showInfoMessage(project, "There is no agentls session yet.", "agentls");
                return;
            }
            List<String> models = session.models().availableModels().stream().map(Wire.ModelInfo::modelId).toList();
            JBPopupFactory.getInstance().createPopupChooserBuilder(models)
                    .setTitle("Switch Model")
                    .setRenderer(SimpleListCellRenderer.create("", id -> id.equals(session.model()) ? id + " (current)" : id))
                    .setItemChosenCallback(id -> service.bridge().setModel(id))
                    .createPopup()
                    .showCenteredInCurrentWindow(project);
        }
    }

    public static final class ResumeSession extends ProjectAction {
        @Override
        void perform(Project project, AgentProjectService service) {
            service.bridge().fetchSessions("").whenComplete((rows, error) ->
                    ApplicationManager.getApplication().invokeLater(() -> {
                        if (project.isDisposed()) return;
                        if (error != null || rows.isEmpty()) {
                            Messages.showInfoMessage(project, error != null ? "Cannot list sessions: " + error.getMessage()
                                    : "No earlier sessions in this project.", "agentls");
                            return;
                        }
                        JBPopupFactory.getInstance().createPopupChooserBuilder(rows)
                                .setTitle("Resume Session")
                                .setRenderer(SimpleListCellRenderer.<SessionRow>create("",
                                        row -> row.title() + (row.updatedAt() == null ? "" : "  ·  " + row.updatedAt())))
                                .setItemChosenCallback(row -> {
                                    showToolWindow(project);
                                    service.bridge().resume(row.sessionId());
                                })
                                .createPopup()
                                .showCenteredInCurrentWindow(project);
                    }, ModalityState.nonModal()));
        }
    }
}
