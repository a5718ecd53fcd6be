package dev.agentls.intellij;

import com.google.gson.JsonObject;
import com.intellij.openapi.application.ApplicationManager;
import com.intellij.ui.components.JBLabel;
import com.intellij.ui.components.JBScrollPane;
import com.intellij.ui.components.JBTextArea;
import com.intellij.util.ui.JBUI;
import dev.agentls.core.panel.PanelBridge;
import dev.agentls.core.panel.PanelMessages;
import dev.agentls.core.panel.PanelMessages.PanelToHost;
import dev.agentls.core.panel.PlainTranscript;
import java.awt.BorderLayout;
import java.awt.FlowLayout;
import java.awt.event.KeyAdapter;
import java.awt.event.KeyEvent;
import java.util.List;
import javax.swing.JButton;
import javax.swing.JComponent;
import javax.swing.JPanel;

/**
 * The tool window without JCEF (some remote and embedded setups): the conversation as plain
 * text, a prompt box, Send and Stop. Same bridge, same messages as the web panel.
 */
final class FallbackView implements AgentView {
    private final PanelBridge bridge;
    private final PlainTranscript transcript = new PlainTranscript();
    private final JBTextArea log = new JBTextArea();
    private final JBTextArea input = new JBTextArea(3, 40);
    private final JBLabel status = new JBLabel();
    private final JPanel root = new JPanel(new BorderLayout());

    FallbackView(PanelBridge bridge) {
        this.bridge = bridge;
        log.setEditable(false);
        log.setLineWrap(true);
        log.setWrapStyleWord(true);
        input.setLineWrap(true);
        input.getEmptyText().setText("Ask the agent… (Ctrl+Enter sends)");
        input.addKeyListener(new KeyAdapter() {
            @Override
            public void keyPressed(KeyEvent e) {
                if (e.getKeyCode() == KeyEvent.VK_ENTER && e.isControlDown()) {
                    e.consume();
                    send();
                }
            }
        });
        JButton sendButton = new JButton("Send");
        sendButton.addActionListener(e -> send());
        JButton stopButton = new JButton("Stop");
        stopButton.addActionListener(e -> bridge.handle(new PanelToHost.Cancel()));
        JPanel buttons = new JPanel(new FlowLayout(FlowLayout.RIGHT, JBUI.scale(4), 0));
        buttons.add(stopButton);
        buttons.add(sendButton);
        JPanel south = new JPanel(new BorderLayout(0, JBUI.scale(4)));
        south.add(new JBScrollPane(input), BorderLayout.CENTER);
        south.add(buttons, BorderLayout.SOUTH);
        south.setBorder(JBUI.Borders.empty(4));
        status.setBorder(JBUI.Borders.empty(4));
        root.add(status, BorderLayout.NORTH);
        root.add(new JBScrollPane(log), BorderLayout.CENTER);
        root.add(south, BorderLayout.SOUTH);
        status.setText("JCEF is not available here: showing the conversation as plain text.");
    }

    /** Unlike the web page, this view is ready as soon as it is shown. */
    @Override
    public void shown() {
        bridge.handle(new PanelToHost.Ready());
    }

    private void send() {
        String text = input.getText().strip();
        if (text.isEmpty()) return;
        input.setText("");
        transcript.userPrompt(text);
        refresh();
        JsonObject block = new JsonObject();
        block.addProperty("type", "text");
        block.addProperty("text", text);
        bridge.receive(PanelMessages.write(new PanelToHost.Prompt(List.of(block))));
    }

    @Override
    public JComponent component() {
        return root;
    }

    @Override
    public void post(String json) {
        transcript.accept(json);
        ApplicationManager.getApplication().invokeLater(this::refresh);
    }

    private void refresh() {
        log.setText(transcript.text());
        log.setCaretPosition(log.getDocument().getLength());
        status.setText(transcript.status());
    }

    @Override
    public void dispose() {}
}
