package dev.agentls.core.client;

import java.io.IOException;

/** Starts one `agentls serve` process; the client calls it again for every restart. */
@FunctionalInterface
public interface ServerLauncher {
    Process launch() throws IOException;
}
