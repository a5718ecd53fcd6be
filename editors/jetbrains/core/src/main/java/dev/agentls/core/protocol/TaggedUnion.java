package dev.agentls.core.protocol;

import com.google.gson.Gson;
import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonParseException;
import com.google.gson.TypeAdapter;
import com.google.gson.TypeAdapterFactory;
import com.google.gson.internal.Streams;
import com.google.gson.reflect.TypeToken;
import com.google.gson.stream.JsonReader;
import com.google.gson.stream.JsonWriter;
import java.io.IOException;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.BiFunction;
import java.util.function.Function;

/**
 * A union of records tagged by one string member ({@code kind}, {@code type}): the tag picks the
 * record on read and is written first on write. The records themselves do not carry the tag.
 * Without an {@code unknown} factory an unknown tag is a parse error; with one, the object is kept
 * whole so that it can be ignored, or passed on unchanged.
 */
public final class TaggedUnion<T> implements TypeAdapterFactory {
    private final Class<T> base;
    private final String tag;
    private final Map<String, Class<? extends T>> byTag = new LinkedHashMap<>();
    private final Map<Class<?>, String> tagOf = new HashMap<>();
    private final BiFunction<String, JsonObject, T> unknown;
    private final Function<T, JsonObject> raw;

    public TaggedUnion(Class<T> base, String tag, BiFunction<String, JsonObject, T> unknown, Function<T, JsonObject> raw) {
        this.base = base;
        this.tag = tag;
        this.unknown = unknown;
        this.raw = raw;
    }

    public TaggedUnion<T> variant(String tagValue, Class<? extends T> type) {
        byTag.put(tagValue, type);
        tagOf.put(type, tagValue);
        return this;
    }

    public Map<String, Class<? extends T>> variants() {
        return byTag;
    }

    public String tagOf(Class<?> type) {
        return tagOf.get(type);
    }

    @Override
    @SuppressWarnings("unchecked")
    public <R> TypeAdapter<R> create(Gson gson, TypeToken<R> type) {
        if (type.getRawType() != base) return null;
        return (TypeAdapter<R>) new TypeAdapter<T>() {
            @Override
            public void write(JsonWriter out, T value) throws IOException {
                if (value == null) {
                    out.nullValue();
                    return;
                }
                String tagValue = tagOf.get(value.getClass());
                if (tagValue == null) {
                    Streams.write(raw.apply(value), out);
                    return;
                }
                JsonObject body = TaggedUnion.<T>adapter(gson, value.getClass()).toJsonTree(value).getAsJsonObject();
                JsonObject tagged = new JsonObject();
                tagged.addProperty(tag, tagValue);
                body.entrySet().forEach(e -> tagged.add(e.getKey(), e.getValue()));
                Streams.write(tagged, out);
            }

            @Override
            public T read(JsonReader in) throws IOException {
                JsonElement tree = Streams.parse(in);
                if (tree.isJsonNull()) return null;
                if (!tree.isJsonObject()) throw new JsonParseException(base.getSimpleName() + ": expected an object");
                JsonObject object = tree.getAsJsonObject();
                JsonElement tagElement = object.get(tag);
                String tagValue = tagElement != null && tagElement.isJsonPrimitive() ? tagElement.getAsString() : null;
                Class<? extends T> variant = tagValue == null ? null : byTag.get(tagValue);
                if (variant != null) return TaggedUnion.<T>adapter(gson, variant).fromJsonTree(object);
                if (unknown != null) return unknown.apply(tagValue, object);
                throw new JsonParseException(base.getSimpleName() + ": unknown " + tag + " " + tagElement);
            }
        };
    }

    @SuppressWarnings("unchecked")
    private static <V> TypeAdapter<V> adapter(Gson gson, Class<?> type) {
        return (TypeAdapter<V>) gson.getAdapter(type);
    }
}
