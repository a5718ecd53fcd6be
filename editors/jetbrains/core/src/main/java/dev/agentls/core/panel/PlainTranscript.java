package dev.agentls.core.panel;

import dev.agentls.core.panel.PanelMessages.HostToPanel;
import dev.agentls.core.protocol.SessionUpdate;
import dev.agentls.core.protocol.Wire;

/**
 * The conversation as plain text, for hosts that cannot show the web panel (the IDE's Swing
 * fallback when JCEF is missing). Fed the same host-to-panel messages the web panel gets.
 */
public final class PlainTranscript {
    private final StringBuilder text = new StringBuilder();
    private String status = "Starting agentls…";
    private String block = "";

    public synchronized String text() {
        return text.toString();
    }

    public synchronized String status() {
        return status;
    }

    public synchronized void accept(String json) {
        accept(PanelMessages.readHostToPanel(json));
    }

    /** The user's own prompt, as sent. */
    public synchronized void userPrompt(String prompt) {
        startBlock("user", "\n> ");
        text.append(prompt.strip().replace("\n", "\n> "));
    }

    public synchronized void accept(HostToPanel message) {
        if (message instanceof HostToPanel.Server s) {
            status = switch (s.state()) {
                case "ready" -> "Ready";
                case "restarting" -> "Restarting agentls…";
                case "stopped" -> "agentls is not running";
                default -> "Starting agentls…";
            } + (s.message() == null ? "" : " — " + s.message());
        } else if (message instanceof HostToPanel.Session s) {
            text.setLength(0);
            block = "";
            status = "Session " + s.session().sessionId() + " · " + s.session().model();
        } else if (message instanceof HostToPanel.Update u) {
            update(u.params().update());
        } else if (message instanceof HostToPanel.PromptError e) {
            line("[error] " + e.message());
        } else if (message instanceof HostToPanel.ErrorMessage e) {
            line("[error] " + e.message());
        } else if (message instanceof HostToPanel.Model m) {
            status = "Model " + m.modelId();
        }
    }

    private void update(SessionUpdate update) {
        if (update instanceof SessionUpdate.UserMessageChunk u && "report".equals(u.origin())) {
            line("Background subagents reported back; the agent goes on with their reports.");
        } else if (update instanceof SessionUpdate.UserMessageChunk u) {
            startBlock("user", "\n> ");
            text.append(u.text());
        } else if (update instanceof SessionUpdate.AgentMessageChunk a) {
            startBlock("agent", "\n");
            text.append(a.text());
        } else if (update instanceof SessionUpdate.AgentThoughtChunk t) {
            startBlock("thought", "\n(thinking) ");
            text.append(t.text());
        } else if (update instanceof SessionUpdate.ToolCall call) {
            line((call.parentToolCallId() == null ? "▸ " : "  ▸ ") + call.title());
        } else if (update instanceof SessionUpdate.ToolCallUpdate u && !"in_progress".equals(u.status())) {
            line("  " + switch (u.status()) {
                case "completed" -> "✓ done";
                case "denied" -> "✗ denied";
                default -> "✗ " + u.status() + (u.error() == null ? "" : ": " + u.error());
            });
        } else if (update instanceof SessionUpdate.Plan plan) {
            line("Plan:");
            for (Wire.PlanEntry entry : plan.entries()) {
                line("  [" + ("completed".equals(entry.status()) ? "x" : " ") + "] " + entry.content());
            }
        } else if (update instanceof SessionUpdate.ModeChanged m) {
            line("Now in " + m.mode() + " mode (" + m.reason() + ")");
            status = m.mode() + " mode";
        } else if (update instanceof SessionUpdate.TurnEnd end) {
            line("— " + end.terminal() + (end.error() == null ? "" : ": " + end.error()));
        }
    }

    private void startBlock(String kind, String prefix) {
        if (!block.equals(kind)) {
            text.append(text.length() == 0 ? prefix.stripLeading() : prefix);
            block = kind;
        }
    }

    private void line(String line) {
        if (text.length() > 0) text.append('\n');
        text.append(line);
        block = "line";
    }
}
