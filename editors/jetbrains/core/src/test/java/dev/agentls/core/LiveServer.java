package dev.agentls.core;

import dev.agentls.core.client.ServerLauncher;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * Launches the real {@code agentls serve} on the scripted model, in a private home, data and
 * config directory, with a workspace to work in. Keeps every process it started so that a test
 * can kill one and count restarts.
 */
public final class LiveServer implements ServerLauncher, AutoCloseable {
    public final Path home;
    public final Path workspace;
    public final Path script;
    private final Map<String, String> extraEnv = new HashMap<>();
    public final List<Process> processes = new CopyOnWriteArrayList<>();

    /** {@code replies}: the scripted model's JSON list, played in order within each session. */
    public LiveServer(String replies) {
        try {
            home = Files.createTempDirectory("agentls-jb-");
            workspace = Files.createDirectories(home.resolve("workspace"));
            script = home.resolve("replies.json");
            Files.writeString(script, replies);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    public LiveServer env(String name, String value) {
        extraEnv.put(name, value);
        return this;
    }

    public static String command() {
        String configured = System.getProperty("agentls.bin");
        return configured != null ? configured : Repo.path(".venv/bin/agentls").toString();
    }

    @Override
    public Process launch() throws IOException {
        ProcessBuilder builder = new ProcessBuilder(command(), "serve").directory(workspace.toFile());
        Map<String, String> env = builder.environment();
        env.keySet().removeIf(k -> k.endsWith("_API_KEY") || k.startsWith("AGENTLS_"));
        env.put("AGENTLS_PROVIDER", "scripted");
        env.put("AGENTLS_SCRIPT", script.toString());
        // The permission flow is judged without the command sandbox, which lets sandboxed commands run unasked.
        env.put("AGENTLS_SANDBOX", "off");
        env.put("AGENTLS_HOME", home.resolve("data").toString());
        env.put("XDG_CONFIG_HOME", home.resolve("config").toString());
        env.put("HOME", home.toString());
        env.putAll(extraEnv);
        Process process = builder.start();
        processes.add(process);
        return process;
    }

    public Process last() {
        return processes.get(processes.size() - 1);
    }

    @Override
    public void close() {
        for (Process p : processes) p.destroyForcibly();
        try (var files = Files.walk(home)) {
            files.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        } catch (IOException ignored) {
            // temp files; not worth failing a test over
        }
    }
}
