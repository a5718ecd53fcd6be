package dev.agentls.intellij;

import com.intellij.ide.BrowserUtil;
import com.intellij.ide.impl.TrustedProjects;
import com.intellij.notification.NotificationGroupManager;
import com.intellij.notification.NotificationType;
import com.intellij.openapi.Disposable;
import com.intellij.openapi.application.ApplicationManager;
import com.intellij.openapi.components.Service;
import com.intellij.openapi.diagnostic.Logger;
import com.intellij.openapi.fileEditor.OpenFileDescriptor;
import com.intellij.openapi.ide.CopyPasteManager;
import com.intellij.openapi.project.Project;
import com.intellij.openapi.util.SystemInfo;
import com.intellij.openapi.vfs.LocalFileSystem;
import com.intellij.openapi.vfs.VirtualFile;
import com.intellij.util.EnvironmentUtil;
import dev.agentls.core.client.AgentClient;
import dev.agentls.core.client.AgentUi;
import dev.agentls.core.client.ProcessLauncher;
import dev.agentls.core.client.ServerCommand;
import dev.agentls.core.client.ServerState;
import dev.agentls.core.panel.PanelBridge;
import dev.agentls.core.panel.PanelHost;
import dev.agentls.core.protocol.Wire;
import java.awt.datatransfer.StringSelection;
import java.io.IOException;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import org.jetbrains.annotations.NotNull;

/**
 * One agentls server per project: owns the {@link AgentClient} and the {@link PanelBridge},
 * and is the panel's host (opening files, links, the clipboard).
 */
@Service(Service.Level.PROJECT)
public final class AgentProjectService implements Disposable {
    private static final Logger LOG = Logger.getInstance(AgentProjectService.class);

    private final Project project;
    private final PanelBridge bridge;
    private final AgentClient client;
    private volatile AgentView view;

    public AgentProjectService(@NotNull Project project) {
        this.project = project;
        this.bridge = new PanelBridge(new Host(), new IdePrompts(project));
        this.client = new AgentClient(this::launch, new NotifyingUi());
        bridge.attach(client);
    }

    public static AgentProjectService getInstance(@NotNull Project project) {
        return project.getService(AgentProjectService.class);
    }

    public PanelBridge bridge() {
        return bridge;
    }

    public AgentClient client() {
        return client;
    }

    void show(AgentView view) {
        this.view = view;
    }

    /** Starts the server unless it runs; failures are reported in the panel and as a notification. */
    public void start() {
        client.start().exceptionally(error -> null);
    }

    public CompletableFuture<?> restartServer() {
        return client.restart().exceptionally(error -> null);
    }

    @Override
    public void dispose() {
        // Not waited for: the server also exits when its stdin closes with the IDE.
        client.stop();
    }

    private Process launch() throws IOException {
        AgentSettings.State settings = AgentSettings.getInstance().getState();
        // The login shell's environment: a GUI-started IDE's own PATH may not contain agentls.
        Map<String, String> env = new HashMap<>(EnvironmentUtil.getEnvironmentMap());
        ServerCommand command = ServerCommand.resolve(settings.serverCommand, env, SystemInfo.isWindows)
                .orElseThrow(() -> new IOException(ServerCommand.NOT_FOUND));
        LOG.info("starting " + String.join(" ", command.argv()) + " (from " + command.source() + ") in " + cwd());
        return new ProcessLauncher(command.argv(), Path.of(cwd()), env).launch();
    }

    private String cwd() {
        String base = project.getBasePath();
        return base != null ? base : System.getProperty("user.home");
    }

    private void notify(String message, NotificationType type) {
        NotificationGroupManager.getInstance().getNotificationGroup("agentls")
                .createNotification("agentls", message, type)
                .notify(project);
    }

    /** The bridge, plus a balloon when the server crashes or cannot start. */
    private final class NotifyingUi implements AgentUi {
        @Override
        public void onUpdate(Wire.SessionUpdateParams update) {
            bridge.onUpdate(update);
        }

        @Override
        public CompletableFuture<Wire.AskQuestionResult> askQuestions(Wire.AskQuestionParams params) {
            return bridge.askQuestions(params);
        }

        @Override
        public CompletableFuture<Wire.RequestPermissionResult> requestPermission(Wire.RequestPermissionParams params) {
            return bridge.requestPermission(params);
        }

        @Override
        public void onServerState(ServerState state, String message) {
            bridge.onServerState(state, message);
            if (message == null || project.isDisposed()) return;
            if (state == ServerState.CRASHED) notify(message, NotificationType.WARNING);
            if (state == ServerState.STOPPED) notify(message, NotificationType.ERROR);
        }

        @Override
        public void log(String line) {
            LOG.info("agentls: " + line);
        }
    }

    /** What the panel asks of the IDE. */
    private final class Host implements PanelHost {
        @Override
        public void post(String json) {
            AgentView current = view;
            if (current != null) current.post(json);
        }

        @Override
        public String cwd() {
            return AgentProjectService.this.cwd();
        }

        @Override
        public String model() {
            return AgentSettings.getInstance().getState().model;
        }

        @Override
        public String permissionMode() {
            return AgentSettings.getInstance().getState().permissionMode;
        }

        @Override
        public boolean workspaceTrusted() {
            return TrustedProjects.isTrusted(project);
        }

        /** The web panel asks on the tool card; the plain fallback view has no cards, so a dialog asks. */
        @Override
        public boolean asksInPanel() {
            return view instanceof WebviewView;
        }

        @Override
        public CompletableFuture<Boolean> trustFolder() {
            CompletableFuture<Boolean> trusted = new CompletableFuture<>();
            ApplicationManager.getApplication().invokeLater(() -> {
                if (project.isDisposed()) {
                    trusted.complete(false);
                    return;
                }
                // The IDE's own trust dialog; trusting here trusts the project for the whole IDE.
                trusted.complete(TrustedProjects.confirmLoadingUntrustedProject(project,
                        "Trust this folder?",
                        "agentls ignores what an untrusted project's config and skills ask for "
                                + "(a permission mode, allow rules, tool grants). Trust " + cwd() + "?",
                        "Trust Folder", "Cancel"));
            });
            return trusted;
        }

        @Override
        public void openFile(String path, Integer line) {
            Path file = Path.of(cwd()).resolve(path);
            ApplicationManager.getApplication().invokeLater(() -> {
                if (project.isDisposed()) return;
                VirtualFile vf = LocalFileSystem.getInstance().refreshAndFindFileByNioFile(file);
                if (vf == null) {
                    AgentProjectService.this.notify("Cannot open " + path, NotificationType.WARNING);
                    return;
                }
                new OpenFileDescriptor(project, vf, line == null ? 0 : Math.max(0, line - 1), 0).navigate(true);
            });
        }

        @Override
        public void openLink(String href) {
            if (href != null && href.matches("(?i)^(https?|mailto):.*")) BrowserUtil.browse(href);
        }

        @Override
        public void copy(String text) {
            CopyPasteManager.getInstance().setContents(new StringSelection(text));
        }

        @Override
        public void log(String message) {
            LOG.info(message);
        }
    }
}
