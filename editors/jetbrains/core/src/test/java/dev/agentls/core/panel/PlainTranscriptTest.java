package dev.agentls.core.panel;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.google.gson.JsonObject;
import dev.agentls.core.Repo;
import dev.agentls.core.panel.PanelMessages.HostToPanel;
import dev.agentls.core.protocol.Json;
import dev.agentls.core.protocol.Wire;
import java.util.Comparator;
import org.junit.jupiter.api.Test;

class PlainTranscriptTest {
    @Test
    void theGoldenUpdatesAsPlainText() {
        PlainTranscript transcript = new PlainTranscript();
        transcript.accept("{\"type\":\"server\",\"state\":\"restarting\",\"message\":\"it crashed\"}");
        assertEquals("Restarting agentls… — it crashed", transcript.status());
        Repo.fixtures().stream()
                .filter(p -> p.getFileName().toString().startsWith("update_"))
                .map(p -> Repo.json("protocol/fixtures/" + p.getFileName()).getAsJsonObject("params"))
                .sorted(Comparator.comparingLong((JsonObject params) -> params.get("seq").getAsLong())
                        .thenComparing(params -> params.getAsJsonObject("update").get("kind").getAsString()))
                .forEach(params -> transcript.accept(new HostToPanel.Update(Json.fromTree(params, Wire.SessionUpdateParams.class))));
        transcript.accept(new HostToPanel.PromptError("network down"));
        assertEquals(String.join("\n",
                "> use pytest",
                "(thinking) Let me read it first.",
                "▸ Read notes.txt",
                "  ✓ done",
                "  ✗ denied",
                "Plan:",
                "  [x] Read the failing test",
                "  [ ] Fix the parser",
                "The file says ",
                "  ▸ Read src/parse.py",
                "Now in acceptEdits mode (plan approved)",
                "— aborted",
                "[error] network down"), transcript.text());
    }

    @Test
    void aReportTurnIsNotShownAsTheUsersWords() {
        PlainTranscript transcript = new PlainTranscript();
        String report = "{\"sessionId\":\"sess_1\",\"turnId\":\"turn_r\",\"seq\":1,\"update\":"
                + "{\"kind\":\"user_message_chunk\",\"text\":\"Background subagents finished: …\",\"origin\":\"report\"}}";
        String answer = "{\"sessionId\":\"sess_1\",\"turnId\":\"turn_r\",\"seq\":2,\"update\":"
                + "{\"kind\":\"agent_message_chunk\",\"text\":\"3 files.\"}}";
        for (String params : new String[] {report, answer}) {
            transcript.accept(new HostToPanel.Update(Json.fromTree(
                    com.google.gson.JsonParser.parseString(params), Wire.SessionUpdateParams.class)));
        }
        assertEquals("Background subagents reported back; the agent goes on with their reports.\n3 files.",
                transcript.text());
    }
}
