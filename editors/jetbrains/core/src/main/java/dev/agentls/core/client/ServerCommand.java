package dev.agentls.core.client;

import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.function.Predicate;

/**
 * Which command starts the server: the user's setting, else {@code agentls} found on PATH.
 * A setting naming only a program gets {@code serve} appended.
 */
public record ServerCommand(List<String> argv, String source) {
    public static final String NOT_FOUND = "Cannot find the agentls server: install it so that `agentls` is on "
            + "PATH (for example `pip install -e .` in a checkout), or set the server command in "
            + "Settings | Tools | agentls (e.g. /path/to/.venv/bin/agentls serve).";

    public ServerCommand {
        argv = List.copyOf(argv);
    }

    public static Optional<ServerCommand> resolve(String setting, Map<String, String> env, boolean windows) {
        return resolve(setting, env, windows, p -> Files.isRegularFile(p) && (windows || Files.isExecutable(p)));
    }

    static Optional<ServerCommand> resolve(String setting, Map<String, String> env, boolean windows,
                                           Predicate<Path> runnable) {
        List<String> parts = split(setting == null ? "" : setting.strip(), windows);
        if (!parts.isEmpty()) {
            List<String> argv = new ArrayList<>(parts);
            if (argv.size() == 1) argv.add("serve");
            return Optional.of(new ServerCommand(argv, "setting"));
        }
        return findOnPath("agentls", env, windows, runnable)
                .map(path -> new ServerCommand(List.of(path.toString(), "serve"), "PATH"));
    }

    static Optional<Path> findOnPath(String name, Map<String, String> env, boolean windows, Predicate<Path> runnable) {
        String path = env.getOrDefault("PATH", env.getOrDefault("Path", ""));
        List<String> extensions = windows
                ? List.of(env.getOrDefault("PATHEXT", ".EXE;.CMD;.BAT").toLowerCase(Locale.ROOT).split(";"))
                : List.of("");
        String separator = windows ? ";" : File.pathSeparator;
        for (String dir : path.split(separator)) {
            if (dir.isEmpty()) continue;
            for (String ext : extensions) {
                Path candidate = Path.of(dir, name + ext);
                if (runnable.test(candidate)) return Optional.of(candidate);
            }
        }
        return Optional.empty();
    }

    /** Splits a command line as a POSIX shell does for simple cases: blanks, quotes, backslashes. */
    public static List<String> split(String line, boolean windows) {
        List<String> args = new ArrayList<>();
        StringBuilder current = new StringBuilder();
        boolean started = false;
        char quote = 0;
        for (int i = 0; i < line.length(); i++) {
            char c = line.charAt(i);
            if (quote != 0) {
                if (c == quote) {
                    quote = 0;
                } else if (c == '\\' && quote == '"' && i + 1 < line.length() && "\"\\".indexOf(line.charAt(i + 1)) >= 0) {
                    current.append(line.charAt(++i));
                } else {
                    current.append(c);
                }
            } else if (c == '"' || c == '\'') {
                quote = c;
                started = true;
            } else if (Character.isWhitespace(c)) {
                if (started) args.add(current.toString());
                current.setLength(0);
                started = false;
            } else if (c == '\\' && !windows && i + 1 < line.length()) {
                current.append(line.charAt(++i));
                started = true;
            } else {
                current.append(c);
                started = true;
            }
        }
        if (started) args.add(current.toString());
        return args;
    }
}
