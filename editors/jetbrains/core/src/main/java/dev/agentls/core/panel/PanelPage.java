package dev.agentls.core.panel;

import com.google.gson.Gson;
import java.security.SecureRandom;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * The panel's HTML page for a JCEF host, made from the webview's template
 * ({@code editors/webview/dist/index.html}, placeholders {@code {{scriptUri}}},
 * {@code {{styleUri}}}, {@code {{nonce}}}, {@code {{cspSource}}}), plus the two scripts of the
 * JCEF bridge. The page keeps the template's Content Security Policy: scripts only with the
 * nonce, styles only from {@code cspSource}.
 */
public final class PanelPage {
    private PanelPage() {}

    /** @param bootstrap script run before the bundle (defines {@code window.__agentHostPost}) */
    public record Page(String scriptUri, String styleUri, String nonce, String cspSource, String bootstrap,
                       List<String> extraStylesheets) {}

    private static final Gson JS = new Gson();
    private static final Pattern CSS_VALUE = Pattern.compile("[#(),.%\\w \\-'\"]*");
    private static final Pattern CSS_NAME = Pattern.compile("--[\\w-]+");

    /** A fresh random nonce (128 bits, hex), one per page load. */
    public static String nonce() {
        byte[] bytes = new byte[16];
        new SecureRandom().nextBytes(bytes);
        return HexFormat.of().formatHex(bytes);
    }

    public static String fill(String template, Page page) {
        String html = template
                .replace("{{scriptUri}}", attr(page.scriptUri()))
                .replace("{{styleUri}}", attr(page.styleUri()))
                .replace("{{nonce}}", attr(page.nonce()))
                .replace("{{cspSource}}", attr(page.cspSource()));
        StringBuilder links = new StringBuilder();
        for (String href : page.extraStylesheets()) {
            links.append("<link rel=\"stylesheet\" href=\"").append(attr(href)).append("\">\n");
        }
        html = insertBefore(html, "</head>", links.toString());
        if (page.bootstrap() != null) {
            String script = "<script nonce=\"" + attr(page.nonce()) + "\">" + page.bootstrap().replace("</", "<\\/") + "</script>\n";
            html = insertBefore(html, "<script", script);
        }
        return html;
    }

    /**
     * The bootstrap that defines {@code window.__agentHostPost(json)}; {@code sendJson} is the
     * host's JavaScript that sends the string in the variable {@code json} (with JCEF,
     * {@code JBCefJSQuery.inject("json")}).
     */
    public static String hostPostScript(String sendJson) {
        return "window.__agentHostPost = function (json) { " + sendJson + " };";
    }

    /** The JavaScript that delivers one message to the page; the message travels as a string literal. */
    public static String receiveScript(String json) {
        return "window.__agentReceive && window.__agentReceive(" + JS.toJson(json) + ");";
    }

    /**
     * A style sheet that sets the panel's colour and font variables (VS Code names, e.g.
     * {@code --vscode-foreground}) from the IDE's theme. Entries that are not plain CSS values are left out.
     */
    public static String themeCss(Map<String, String> variables) {
        StringBuilder css = new StringBuilder(":root {\n");
        variables.entrySet().stream().sorted(Map.Entry.comparingByKey()).forEach(e -> {
            if (CSS_NAME.matcher(e.getKey()).matches() && e.getValue() != null && CSS_VALUE.matcher(e.getValue()).matches()) {
                css.append("  ").append(e.getKey()).append(": ").append(e.getValue()).append(";\n");
            }
        });
        return css.append("}\n").toString();
    }

    private static String insertBefore(String html, String marker, String text) {
        int at = html.indexOf(marker);
        return at < 0 ? html : html.substring(0, at) + text + html.substring(at);
    }

    private static String attr(String value) {
        return value.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
                .replace("\"", "&quot;").replace("'", "&#39;");
    }
}
