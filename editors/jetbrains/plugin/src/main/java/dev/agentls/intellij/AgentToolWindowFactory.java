package dev.agentls.intellij;

import com.intellij.openapi.project.DumbAware;
import com.intellij.openapi.project.Project;
import com.intellij.openapi.wm.ToolWindow;
import com.intellij.openapi.wm.ToolWindowFactory;
import com.intellij.ui.content.Content;
import com.intellij.ui.content.ContentFactory;
import com.intellij.ui.jcef.JBCefApp;
import org.jetbrains.annotations.NotNull;

/** The agentls tool window: the shared chat panel in JCEF, or a plain Swing view without JCEF. */
public final class AgentToolWindowFactory implements ToolWindowFactory, DumbAware {
    @Override
    public void createToolWindowContent(@NotNull Project project, @NotNull ToolWindow toolWindow) {
        AgentProjectService service = AgentProjectService.getInstance(project);
        AgentView view = JBCefApp.isSupported()
                ? new WebviewView(service.bridge())
                : new FallbackView(service.bridge());
        Content content = ContentFactory.getInstance().createContent(view.component(), "", false);
        content.setDisposer(view);
        toolWindow.getContentManager().addContent(content);
        service.show(view);
        view.shown();
        service.start();
    }
}
