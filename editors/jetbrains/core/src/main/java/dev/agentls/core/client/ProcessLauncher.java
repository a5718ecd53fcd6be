package dev.agentls.core.client;

import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

/**
 * Launches a command line in a directory with an explicit environment (the whole of it: pass
 * the IDE's environment plus changes). stdin/stdout carry the protocol, stderr is read by the
 * client.
 */
public record ProcessLauncher(List<String> command, Path cwd, Map<String, String> environment)
        implements ServerLauncher {
    public ProcessLauncher {
        command = List.copyOf(command);
        environment = Map.copyOf(environment);
    }

    @Override
    public Process launch() throws IOException {
        ProcessBuilder builder = new ProcessBuilder(command).directory(cwd.toFile());
        builder.environment().clear();
        builder.environment().putAll(environment);
        return builder.start();
    }
}
