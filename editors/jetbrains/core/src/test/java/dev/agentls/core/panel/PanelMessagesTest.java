package dev.agentls.core.panel;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import dev.agentls.core.Repo;
import dev.agentls.core.panel.PanelMessages.HostToPanel;
import dev.agentls.core.panel.PanelMessages.PanelToHost;
import dev.agentls.core.protocol.Json;
import dev.agentls.core.protocol.Wire;
import java.lang.reflect.RecordComponent;
import java.nio.file.Files;
import java.util.Arrays;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

/** The bridge messages agree with the panel's own definition, editors/webview/src/messages.ts. */
class PanelMessagesTest {
    private static final Pattern VARIANT = Pattern.compile("\\{\\s*type:\\s*\"(\\w+)\"([^}]*)}");
    private static final Pattern FIELD = Pattern.compile("^\\s*(\\w+)\\??\\s*:");

    /** {type → field names} of one exported union in messages.ts. */
    static Map<String, Set<String>> tsUnion(String source, String name) {
        int start = source.indexOf("export type " + name + " =");
        assertTrue(start >= 0, "messages.ts defines " + name);
        int end = source.indexOf("export ", start + 1);
        String union = source.substring(start, end < 0 ? source.length() : end).replaceAll("/\\*\\*.*?\\*/", "");
        Map<String, Set<String>> variants = new TreeMap<>();
        Matcher m = VARIANT.matcher(union);
        while (m.find()) {
            Set<String> fields = new TreeSet<>();
            fields.add("type");
            for (String part : m.group(2).split(";")) {
                Matcher field = FIELD.matcher(part);
                if (field.find()) fields.add(field.group(1));
            }
            variants.put(m.group(1), fields);
        }
        return variants;
    }

    static <T> Map<String, Set<String>> javaUnion(Map<String, Class<? extends T>> variants) {
        Map<String, Set<String>> fields = new TreeMap<>();
        variants.forEach((type, record) -> {
            Set<String> names = Arrays.stream(record.getRecordComponents()).map(RecordComponent::getName)
                    .collect(Collectors.toCollection(TreeSet::new));
            names.add("type");
            fields.put(type, names);
        });
        return fields;
    }

    @Test
    void sameMessageTypesAndFieldsAsThePanel() throws Exception {
        var path = Repo.path("editors/webview/src/messages.ts");
        Assumptions.assumeTrue(Files.exists(path), "the panel sources are not in this checkout");
        String source = Files.readString(path);
        assertEquals(tsUnion(source, "HostToPanel"), javaUnion(PanelMessages.hostToPanelTypes()));
        assertEquals(tsUnion(source, "PanelToHost"), javaUnion(PanelMessages.panelToHostTypes()));
    }

    @Test
    void updatesTravelWithTheServersParamsUnchanged() {
        JsonObject fixture = Repo.json("protocol/fixtures/update_tool_call_update.json");
        Wire.SessionUpdateParams params = Json.fromTree(fixture.get("params"), Wire.SessionUpdateParams.class);
        JsonObject expected = new JsonObject();
        expected.addProperty("type", "update");
        expected.add("params", fixture.get("params"));
        String json = PanelMessages.write(new HostToPanel.Update(params));
        assertEquals(expected, JsonParser.parseString(json));
        assertEquals(new HostToPanel.Update(params), PanelMessages.readHostToPanel(json));
        assertEquals("{\"type\":\"server\",\"state\":\"ready\"}", PanelMessages.write(new HostToPanel.Server("ready", null)));
        assertEquals("{\"type\":\"focusInput\"}", PanelMessages.write(new HostToPanel.FocusInput()));
    }

    @Test
    void panelMessagesParse() {
        PanelToHost prompt = PanelMessages.readPanelToHost("{\"type\":\"prompt\",\"prompt\":[{\"type\":\"text\",\"text\":\"hi\"},"
                + "{\"type\":\"image\",\"data\":\"iVBO\",\"mimeType\":\"image/png\"}]}");
        assertEquals(2, assertInstanceOf(PanelToHost.Prompt.class, prompt).prompt().size());
        assertEquals(new PanelToHost.OpenFile("src/a.py", 12),
                PanelMessages.readPanelToHost("{\"type\":\"openFile\",\"path\":\"src/a.py\",\"line\":12}"));
        assertEquals(new PanelToHost.Ready(), PanelMessages.readPanelToHost("{\"type\":\"ready\"}"));
        PanelToHost unknown = PanelMessages.readPanelToHost("{\"type\":\"teleport\",\"where\":\"mars\"}");
        assertEquals("teleport", assertInstanceOf(PanelToHost.Unknown.class, unknown).type());
    }
}
