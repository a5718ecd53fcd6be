package dev.agentls.core;

import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;

/** Where the repository is (system property {@code agentls.root}, else found upwards from here). */
public final class Repo {
    private Repo() {}

    public static Path root() {
        String configured = System.getProperty("agentls.root");
        if (configured != null) return Path.of(configured);
        for (Path dir = Path.of("").toAbsolutePath(); dir != null; dir = dir.getParent()) {
            if (Files.isDirectory(dir.resolve("protocol/fixtures"))) return dir;
        }
        throw new IllegalStateException("cannot find the repository root; pass -Dagentls.root=...");
    }

    public static Path path(String relative) {
        return root().resolve(relative);
    }

    public static String read(String relative) {
        try {
            return Files.readString(path(relative));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    public static JsonObject json(String relative) {
        return JsonParser.parseString(read(relative)).getAsJsonObject();
    }

    /** The golden wire examples, {@code protocol/fixtures/*.json}. */
    public static List<Path> fixtures() {
        try (Stream<Path> files = Files.list(path("protocol/fixtures"))) {
            return files.filter(p -> p.toString().endsWith(".json")).sorted().toList();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
