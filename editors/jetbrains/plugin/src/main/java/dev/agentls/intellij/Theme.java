package dev.agentls.intellij;

import com.intellij.openapi.editor.colors.EditorColorsManager;
import com.intellij.openapi.editor.colors.EditorColorsScheme;
import com.intellij.ui.JBColor;
import com.intellij.util.ui.JBUI;
import com.intellij.util.ui.UIUtil;
import dev.agentls.core.panel.PanelPage;
import java.awt.Color;
import java.awt.Font;
import java.util.HashMap;
import java.util.Map;

/** The IDE's current colours and fonts as the panel's CSS variables (it uses VS Code's names). */
final class Theme {
    private Theme() {}

    static String css() {
        EditorColorsScheme editor = EditorColorsManager.getInstance().getGlobalScheme();
        Color background = UIUtil.getPanelBackground();
        Color foreground = UIUtil.getLabelForeground();
        Color border = JBColor.border();
        Color link = JBUI.CurrentTheme.Link.Foreground.ENABLED;
        Color focus = JBUI.CurrentTheme.Focus.focusColor();
        Font font = UIUtil.getLabelFont();
        Map<String, String> vars = new HashMap<>();
        vars.put("--vscode-foreground", hex(foreground));
        vars.put("--vscode-sideBar-background", hex(background));
        vars.put("--vscode-editor-background", hex(editor.getDefaultBackground()));
        vars.put("--vscode-editorWidget-background", hex(background));
        vars.put("--vscode-textCodeBlock-background", hex(editor.getDefaultBackground()));
        vars.put("--vscode-input-background", hex(UIUtil.getTextFieldBackground()));
        vars.put("--vscode-input-foreground", hex(UIUtil.getTextFieldForeground()));
        vars.put("--vscode-dropdown-background", hex(UIUtil.getTextFieldBackground()));
        vars.put("--vscode-dropdown-foreground", hex(UIUtil.getTextFieldForeground()));
        for (String name : new String[] {"--vscode-input-border", "--vscode-panel-border", "--vscode-widget-border",
                "--vscode-dropdown-border"}) {
            vars.put(name, hex(border));
        }
        vars.put("--vscode-focusBorder", hex(focus));
        vars.put("--vscode-button-background", hex(focus));
        vars.put("--vscode-button-foreground", "#ffffff");
        vars.put("--vscode-textLink-foreground", hex(link));
        vars.put("--vscode-descriptionForeground", hex(UIUtil.getContextHelpForeground()));
        vars.put("--vscode-errorForeground", hex(UIUtil.getErrorForeground()));
        vars.put("--vscode-list-hoverBackground", hex(UIUtil.getListSelectionBackground(false)));
        vars.put("--vscode-font-family", "'" + font.getFamily().replace("'", "") + "', sans-serif");
        vars.put("--vscode-font-size", font.getSize() + "px");
        vars.put("--vscode-editor-font-family", "'" + editor.getEditorFontName().replace("'", "") + "', monospace");
        return PanelPage.themeCss(vars);
    }

    private static String hex(Color c) {
        return String.format("#%02x%02x%02x", c.getRed(), c.getGreen(), c.getBlue());
    }
}
