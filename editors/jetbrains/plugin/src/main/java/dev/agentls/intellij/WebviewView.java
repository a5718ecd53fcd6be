package dev.agentls.intellij;

import com.intellij.ide.ui.LafManagerListener;
import com.intellij.openapi.application.ApplicationManager;
import com.intellij.openapi.util.Disposer;
import com.intellij.ui.jcef.JBCefBrowser;
import com.intellij.ui.jcef.JBCefBrowserBase;
import com.intellij.ui.jcef.JBCefJSQuery;
import dev.agentls.core.panel.PanelBridge;
import dev.agentls.core.panel.PanelPage;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import javax.swing.JComponent;

/**
 * The shared chat panel ({@code editors/webview}, bundled under {@code /webview/}) in JCEF.
 * Pages are served from the made-up origin {@value #ORIGIN} by {@link PanelResources}; the page
 * sends through {@code window.__agentHostPost} (a {@link JBCefJSQuery}) and receives through
 * {@code window.__agentReceive}.
 */
final class WebviewView implements AgentView {
    static final String HOST = "agentls.panel";
    static final String ORIGIN = "http://" + HOST;

    private final JBCefBrowser browser;
    private final JBCefJSQuery query;
    private int themeVersion;

    WebviewView(PanelBridge bridge) {
        browser = JBCefBrowser.createBuilder().build();
        // Created before the browser starts, so that the page can call it from its first script.
        query = JBCefJSQuery.create((JBCefBrowserBase) browser);
        query.addHandler(json -> {
            bridge.receive(json);
            return null;
        });
        String page = PanelPage.fill(resource("index.html"), new PanelPage.Page(
                ORIGIN + "/panel.js", ORIGIN + "/panel.css", PanelPage.nonce(), ORIGIN,
                PanelPage.hostPostScript(query.inject("json")), List.of(ORIGIN + "/theme.css")));
        browser.getJBCefClient().addRequestHandler(new PanelResources(HOST, path -> switch (path) {
            case "index.html" -> PanelResources.Resource.of(page, "text/html");
            case "panel.js" -> PanelResources.Resource.of(resource("panel.js"), "text/javascript");
            case "panel.css" -> PanelResources.Resource.of(resource("panel.css"), "text/css");
            case "theme.css" -> PanelResources.Resource.of(Theme.css(), "text/css");
            default -> null;
        }), browser.getCefBrowser());
        Disposer.register(this, browser); // the query goes with the browser's client
        ApplicationManager.getApplication().getMessageBus().connect(this)
                .subscribe(LafManagerListener.TOPIC, source -> reloadTheme());
        browser.loadURL(ORIGIN + "/index.html");
    }

    @Override
    public JComponent component() {
        return browser.getComponent();
    }

    @Override
    public void post(String json) {
        run(PanelPage.receiveScript(json));
    }

    /** The IDE's theme changed: fetch theme.css again (the panel keeps its state). */
    private void reloadTheme() {
        themeVersion++;
        run("var l = document.querySelector('link[href^=\"" + ORIGIN + "/theme.css\"]');"
                + " if (l) l.href = '" + ORIGIN + "/theme.css?v=" + themeVersion + "';");
    }

    private void run(String script) {
        browser.getCefBrowser().executeJavaScript(script, ORIGIN + "/index.html", 0);
    }

    @Override
    public void dispose() {
        // the browser is disposed as a child
    }

    private static String resource(String name) {
        try (InputStream in = WebviewView.class.getResourceAsStream("/webview/" + name)) {
            if (in == null) throw new IllegalStateException("the plugin was built without /webview/" + name);
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
