package dev.agentls.core.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.junit.jupiter.api.Test;

class ServerCommandTest {
    @Test
    void splitsLikeAShell() {
        assertEquals(List.of("/opt/my venv/bin/agentls", "serve", "--provider", "scripted"),
                ServerCommand.split("'/opt/my venv/bin/agentls'  serve --provider scripted", false));
        assertEquals(List.of("a b", "c\"d", ""), ServerCommand.split("a\\ b \"c\\\"d\" ''", false));
        assertEquals(List.of("C:\\tools\\agentls.exe", "serve"), ServerCommand.split("C:\\tools\\agentls.exe serve", true));
        assertEquals(List.of(), ServerCommand.split("   ", false));
    }

    @Test
    void theSettingWinsAndAProgramAloneGetsServe() {
        Map<String, String> env = Map.of("PATH", "/usr/bin");
        assertEquals(Optional.of(new ServerCommand(List.of("/x/agentls", "serve"), "setting")),
                ServerCommand.resolve("/x/agentls", env, false, p -> true));
        assertEquals(List.of("python3", "-m", "server.cli", "serve"),
                ServerCommand.resolve("python3 -m server.cli serve", env, false, p -> true).orElseThrow().argv());
    }

    @Test
    void otherwiseAgentlsIsFoundOnPath() {
        Set<Path> present = Set.of(Path.of("/home/me/.local/bin/agentls"));
        Map<String, String> env = Map.of("PATH", "/usr/bin::/home/me/.local/bin");
        assertEquals(Optional.of(new ServerCommand(List.of("/home/me/.local/bin/agentls", "serve"), "PATH")),
                ServerCommand.resolve("", env, false, present::contains));
        assertFalse(ServerCommand.resolve(null, Map.of("PATH", "/usr/bin"), false, present::contains).isPresent());
        Map<String, String> windows = Map.of("Path", "C:\\bin", "PATHEXT", ".COM;.EXE");
        Path exe = Path.of("C:\\bin", "agentls.exe");
        assertEquals(List.of(exe.toString(), "serve"),
                ServerCommand.resolve("", windows, true, exe::equals).orElseThrow().argv());
    }

    @Test
    void restartsAreLimitedWithinTheWindow() {
        RestartPolicy policy = new RestartPolicy(2, 1000);
        assertTrue(policy.allow(0));
        assertTrue(policy.allow(10));
        assertFalse(policy.allow(20));
        assertTrue(policy.allow(1500), "the early crashes left the window");
        policy.reset();
        assertTrue(policy.allow(1501));
    }
}
