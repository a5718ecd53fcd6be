package dev.agentls.core.panel;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.gson.Gson;
import dev.agentls.core.Repo;
import java.nio.file.Files;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class PanelPageTest {
    /** The template as editors/webview's build writes it (used when dist/ has not been built). */
    static final String TEMPLATE = """
            <!DOCTYPE html>
            <html lang="en">
            <head>
            <meta charset="UTF-8">
            <meta http-equiv="Content-Security-Policy" content="default-src &#39;none&#39;; img-src {{cspSource}} data: blob:; style-src {{cspSource}}; font-src {{cspSource}}; script-src &#39;nonce-{{nonce}}&#39;">
            <meta name="viewport" content="width=device-width, initial-scale=1.0">
            <link rel="stylesheet" href="{{styleUri}}">
            <title>agentls</title>
            </head>
            <body>
            <div id="app"></div>
            <script nonce="{{nonce}}" src="{{scriptUri}}"></script>
            </body>
            </html>
            """;

    static String template() throws Exception {
        var built = Repo.path("editors/webview/dist/index.html");
        return Files.exists(built) ? Files.readString(built) : TEMPLATE;
    }

    @Test
    void thePageRunsTheBridgeBeforeTheBundleUnderTheSameNonce() throws Exception {
        String nonce = PanelPage.nonce();
        assertEquals(32, nonce.length());
        String html = PanelPage.fill(template(), new PanelPage.Page("http://agentls.panel/panel.js",
                "http://agentls.panel/panel.css", nonce, "http://agentls.panel",
                PanelPage.hostPostScript("window.cefQuery({request: json});"), List.of("http://agentls.panel/theme.css")));
        assertFalse(html.contains("{{"), html);
        assertTrue(html.contains("script-src &#39;nonce-" + nonce + "&#39;"), html);
        assertTrue(html.contains("style-src http://agentls.panel;"), html);
        int bridge = html.indexOf("<script nonce=\"" + nonce + "\">window.__agentHostPost = function (json) {");
        int bundle = html.indexOf("<script nonce=\"" + nonce + "\" src=\"http://agentls.panel/panel.js\">");
        assertTrue(bridge > 0 && bundle > bridge, html);
        assertTrue(html.indexOf("theme.css") < html.indexOf("</head>"), html);
    }

    @Test
    void messagesReachThePageAsAStringLiteral() {
        String json = "{\"type\":\"update\",\"text\":\"</script><b>\\\"quoted\\\" ' \u2028 line\"}";
        String script = PanelPage.receiveScript(json);
        assertTrue(script.startsWith("window.__agentReceive && window.__agentReceive(\""), script);
        assertFalse(script.contains("</script>"), script);
        assertFalse(script.contains("\u2028"), script);
        String literal = script.substring(script.indexOf('(') + 1, script.lastIndexOf(')'));
        assertEquals(json, new Gson().fromJson(literal, String.class));
    }

    @Test
    void themeVariablesKeepOnlyPlainValues() {
        String css = PanelPage.themeCss(Map.of("--vscode-foreground", "#bbbbbb", "--vscode-font-family", "'JetBrains Mono', monospace",
                "--vscode-evil", "red; } body { display: none", "not-a-variable", "#fff"));
        assertEquals(":root {\n  --vscode-font-family: 'JetBrains Mono', monospace;\n  --vscode-foreground: #bbbbbb;\n}\n", css);
    }
}
