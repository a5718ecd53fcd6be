package dev.agentls.core.rpc;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;

/** Writes LSP-framed messages; one write and one flush per frame, safe from any thread. */
public final class FrameWriter {
    private final OutputStream out;

    public FrameWriter(OutputStream out) {
        this.out = out;
    }

    public synchronized void write(String json) throws IOException {
        byte[] body = json.getBytes(StandardCharsets.UTF_8);
        byte[] header = ("Content-Length: " + body.length + "\r\n\r\n").getBytes(StandardCharsets.US_ASCII);
        byte[] frame = new byte[header.length + body.length];
        System.arraycopy(header, 0, frame, 0, header.length);
        System.arraycopy(body, 0, frame, header.length, body.length);
        out.write(frame);
        out.flush();
    }

    public synchronized void close() throws IOException {
        out.close();
    }
}
