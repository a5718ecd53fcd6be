package dev.agentls.core.protocol;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import com.google.gson.annotations.SerializedName;
import dev.agentls.core.Repo;
import dev.agentls.core.protocol.Methods.Method;
import java.lang.reflect.RecordComponent;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;

/**
 * The Java models agree with the contract: every golden fixture parses and re-serializes to the
 * same JSON tree, and the method table, records and unions match the generated JSON Schema.
 */
class ProtocolTest {
    private static final JsonObject SCHEMA = Repo.json("protocol/schema/agentls.schema.json");

    static JsonElement roundTrip(JsonElement wire, Class<?> type) {
        Object parsed = Json.fromTree(wire, type);
        assertNotNull(parsed);
        return JsonParser.parseString(Json.write(parsed));
    }

    @TestFactory
    Stream<DynamicTest> everyFixtureRoundTrips() {
        return Repo.fixtures().stream().map(path -> DynamicTest.dynamicTest(path.getFileName().toString(), () -> {
            JsonObject fixture = Repo.json("protocol/fixtures/" + path.getFileName());
            Method<?, ?> method = Methods.byName(fixture.get("method").getAsString())
                    .orElseThrow(() -> new AssertionError("not in the method table: " + fixture.get("method")));
            assertEquals(fixture.get("params"), roundTrip(fixture.get("params"), method.params()), "params");
            if (method.isNotification()) {
                assertFalse(fixture.has("result"), "a notification has no result");
            } else {
                assertEquals(fixture.get("result"), roundTrip(fixture.get("result"), method.result()), "result");
            }
        }));
    }

    @Test
    void everyMethodAndUpdateKindHasAFixture() {
        Set<String> methods = new TreeSet<>();
        Set<String> kinds = new TreeSet<>();
        for (Path path : Repo.fixtures()) {
            JsonObject fixture = Repo.json("protocol/fixtures/" + path.getFileName());
            methods.add(fixture.get("method").getAsString());
            if (fixture.get("method").getAsString().equals("session/update")) {
                kinds.add(fixture.getAsJsonObject("params").getAsJsonObject("update").get("kind").getAsString());
            }
        }
        assertEquals(new TreeSet<>(Methods.ALL.stream().map(Method::name).toList()), methods);
        assertEquals(new TreeSet<>(Json.updateKinds().keySet()), kinds);
    }

    @Test
    void methodTableMatchesTheSchema() {
        JsonObject schemaMethods = SCHEMA.getAsJsonObject("methods");
        Set<String> lifecycle = schemaMethods.keySet().stream()
                .filter(name -> schemaMethods.getAsJsonObject(name).has("lifecycle")).collect(Collectors.toCollection(TreeSet::new));
        assertEquals(Set.of("initialize", "initialized", "shutdown", "exit"), lifecycle);
        Set<String> agentls = new TreeSet<>(schemaMethods.keySet());
        agentls.removeAll(lifecycle);
        assertEquals(agentls, new TreeSet<>(Methods.ALL.stream().map(Method::name).toList()));
        for (Method<?, ?> method : Methods.ALL) {
            JsonObject spec = schemaMethods.getAsJsonObject(method.name());
            String direction = method.direction() == Methods.Direction.CLIENT_TO_SERVER ? "client_to_server" : "server_to_client";
            assertEquals(spec.get("direction").getAsString(), direction, method.name());
            assertEquals(spec.has("notification") && spec.get("notification").getAsBoolean(), method.isNotification(), method.name());
            assertEquals(ref(spec.get("params")), method.params().getSimpleName(), method.name());
            if (!method.isNotification()) assertEquals(ref(spec.get("result")), method.result().getSimpleName(), method.name());
        }
        assertEquals(SCHEMA.get("protocolVersion").getAsInt(), Methods.PROTOCOL_VERSION);
    }

    @Test
    void recordsHaveTheSchemasFields() {
        Map<String, Class<?>> records = new HashMap<>();
        for (Class<?> holder : List.of(Wire.class, ContentBlock.class, SessionUpdate.class)) {
            for (Class<?> type : holder.getDeclaredClasses()) if (type.isRecord()) records.put(type.getSimpleName(), type);
        }
        JsonObject defs = SCHEMA.getAsJsonObject("$defs");
        Map<String, Set<String>> expected = new TreeMap<>();
        Map<String, Set<String>> actual = new TreeMap<>();
        for (String name : defs.keySet()) {
            JsonObject properties = defs.getAsJsonObject(name).getAsJsonObject("properties");
            expected.put(name, properties == null ? Set.of() : new TreeSet<>(properties.keySet()));
            Class<?> type = records.get(name);
            if (type == null) continue;
            Set<String> fields = Arrays.stream(type.getRecordComponents()).map(ProtocolTest::wireName)
                    .collect(Collectors.toCollection(TreeSet::new));
            if (SessionUpdate.class.isAssignableFrom(type)) fields.add("kind");
            if (ContentBlock.class.isAssignableFrom(type)) fields.add("type");
            actual.put(name, fields);
        }
        for (String name : expected.keySet()) actual.putIfAbsent(name, Set.of("(no Java record)"));
        assertEquals(expected, actual);
    }

    /** A record component's wire name: its own, or the {@code @SerializedName} its field carries. */
    private static String wireName(RecordComponent component) {
        try {
            SerializedName named = component.getDeclaringRecord().getDeclaredField(component.getName())
                    .getAnnotation(SerializedName.class);
            return named == null ? component.getName() : named.value();
        } catch (NoSuchFieldException e) {
            throw new AssertionError(e);
        }
    }

    @Test
    void unionsHaveTheSchemasVariants() {
        JsonObject defs = SCHEMA.getAsJsonObject("$defs");
        JsonObject updates = defs.getAsJsonObject("SessionUpdateParams").getAsJsonObject("properties")
                .getAsJsonObject("update").getAsJsonObject("discriminator");
        assertEquals("kind", updates.get("propertyName").getAsString());
        assertEquals(mapping(updates), simpleNames(Json.updateKinds()));
        JsonObject content = defs.getAsJsonObject("PromptParams").getAsJsonObject("properties")
                .getAsJsonObject("prompt").getAsJsonObject("items").getAsJsonObject("discriminator");
        assertEquals("type", content.get("propertyName").getAsString());
        assertEquals(mapping(content), simpleNames(Json.contentTypes()));
    }

    @Test
    void unknownUpdateKindsPassThroughWhole() {
        JsonElement wire = JsonParser.parseString(
                "{\"sessionId\":\"s\",\"turnId\":\"t\",\"seq\":3,\"update\":{\"kind\":\"hologram\",\"depth\":{\"z\":1}}}");
        Wire.SessionUpdateParams params = Json.fromTree(wire, Wire.SessionUpdateParams.class);
        SessionUpdate.Unknown unknown = assertInstanceOf(SessionUpdate.Unknown.class, params.update());
        assertEquals("hologram", Json.kindOf(unknown));
        assertEquals(wire, roundTrip(wire, Wire.SessionUpdateParams.class));
    }

    @Test
    void answersAreAStringOrAList() {
        Wire.AskQuestionResult result = Json.read("{\"answers\":{\"a\":\"x\",\"b\":[\"y\",\"z\"],\"c\":[]}}",
                Wire.AskQuestionResult.class);
        assertEquals(Answer.one("x"), result.answers().get("a"));
        assertEquals(Answer.many(List.of("y", "z")), result.answers().get("b"));
        assertEquals(Answer.many(List.of()), result.answers().get("c"));
        assertNull(result.declined());
        assertEquals("{\"declined\":true}", Json.write(Wire.AskQuestionResult.declinedByUser()));
        assertTrue(Json.write(Wire.RequestPermissionResult.cancelled()).equals("{\"outcome\":{\"outcome\":\"cancelled\"}}"));
    }

    private static String ref(JsonElement spec) {
        String ref = spec.getAsJsonObject().get("$ref").getAsString();
        return ref.substring(ref.lastIndexOf('/') + 1);
    }

    private static Map<String, String> mapping(JsonObject discriminator) {
        Map<String, String> names = new TreeMap<>();
        discriminator.getAsJsonObject("mapping").entrySet().forEach(e -> names.put(e.getKey(), ref(wrap(e.getValue()))));
        return names;
    }

    private static JsonElement wrap(JsonElement ref) {
        JsonObject object = new JsonObject();
        object.add("$ref", ref);
        return object;
    }

    private static <T> Map<String, String> simpleNames(Map<String, Class<? extends T>> variants) {
        Map<String, String> names = new TreeMap<>();
        variants.forEach((tag, type) -> names.put(tag, type.getSimpleName()));
        return names;
    }
}
