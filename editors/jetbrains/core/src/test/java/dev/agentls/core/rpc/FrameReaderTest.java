package dev.agentls.core.rpc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class FrameReaderTest {
    private final List<String> skipped = new ArrayList<>();

    static byte[] frame(String body) {
        byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
        return concat(("Content-Length: " + bytes.length + "\r\n\r\n").getBytes(StandardCharsets.US_ASCII), bytes);
    }

    static byte[] concat(byte[]... parts) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        for (byte[] part : parts) out.writeBytes(part);
        return out.toByteArray();
    }

    static byte[] ascii(String text) {
        return text.getBytes(StandardCharsets.UTF_8);
    }

    /** Hands out the input in the given chunk sizes, the way a pipe may. */
    static InputStream chunked(byte[] data, int... cuts) {
        return new InputStream() {
            int pos;
            int next;

            @Override
            public int read() {
                return pos < data.length ? data[pos++] & 0xff : -1;
            }

            @Override
            public int read(byte[] b, int off, int len) {
                if (pos >= data.length) return -1;
                int end = next < cuts.length ? Math.min(cuts[next++], data.length) : data.length;
                int n = Math.max(1, Math.min(len, end - pos));
                System.arraycopy(data, pos, b, off, n);
                pos += n;
                return n;
            }
        };
    }

    private List<String> readAll(InputStream in) throws IOException {
        FrameReader reader = new FrameReader(in, skipped::add);
        List<String> bodies = new ArrayList<>();
        byte[] body;
        while ((body = reader.next()) != null) bodies.add(new String(body, StandardCharsets.UTF_8));
        return bodies;
    }

    @Test
    void readsConsecutiveFrames() throws IOException {
        byte[] input = concat(frame("{\"a\":1}"), frame("{\"b\":2}"));
        assertEquals(List.of("{\"a\":1}", "{\"b\":2}"), readAll(new ByteArrayInputStream(input)));
        assertEquals(List.of(), skipped);
    }

    @Test
    void headersSplitAtEveryPossiblePoint() throws IOException {
        byte[] input = concat(frame("{\"id\":1}"), frame("{\"id\":2}"));
        for (int cut = 1; cut < input.length; cut++) {
            List<String> bodies = readAll(chunked(input, cut, input.length));
            assertEquals(List.of("{\"id\":1}", "{\"id\":2}"), bodies, "cut at " + cut);
        }
        assertEquals(List.of(), skipped);
    }

    @Test
    void oneByteAtATime() throws IOException {
        byte[] input = concat(frame("{\"x\":\"y\"}"), frame("{}"));
        int[] ones = new int[input.length];
        for (int i = 0; i < ones.length; i++) ones[i] = i + 1;
        assertEquals(List.of("{\"x\":\"y\"}", "{}"), readAll(chunked(input, ones)));
    }

    @Test
    void lengthCountsBytesOfMultibyteBodies() throws IOException {
        String body = "{\"text\":\"héllo — 日本語 🎉\"}";
        byte[] input = concat(frame(body), frame("{\"after\":true}"));
        assertTrue(body.getBytes(StandardCharsets.UTF_8).length > body.length());
        assertEquals(List.of(body, "{\"after\":true}"), readAll(new ByteArrayInputStream(input)));
    }

    @Test
    void multibyteCharactersSplitAcrossReads() throws IOException {
        String body = "{\"text\":\"🎉🎉 日本\"}";
        byte[] input = frame(body);
        int headerLength = input.length - body.getBytes(StandardCharsets.UTF_8).length;
        for (int cut = headerLength + 10; cut < input.length; cut++) {
            assertEquals(List.of(body), readAll(chunked(input, cut, input.length)), "cut at " + cut);
        }
    }

    @Test
    void garbageBetweenFramesIsSkippedAndReported() throws IOException {
        byte[] input = concat(frame("{\"n\":1}"), ascii("a stray print on stdout\n"), frame("{\"n\":2}"),
                ascii("junk\r\n\r\n"), frame("{\"n\":3}"));
        assertEquals(List.of("{\"n\":1}", "{\"n\":2}", "{\"n\":3}"), readAll(new ByteArrayInputStream(input)));
        assertEquals(2, skipped.size(), skipped.toString());
        assertTrue(skipped.get(0).contains("a stray print"), skipped.get(0));
        assertTrue(skipped.get(1).contains("junk"), skipped.get(1));
    }

    @Test
    void garbageGluedToTheHeader() throws IOException {
        byte[] input = concat(ascii("xyz"), frame("{\"ok\":1}"));
        assertEquals(List.of("{\"ok\":1}"), readAll(new ByteArrayInputStream(input)));
        assertEquals(1, skipped.size());
    }

    @Test
    void otherHeadersAndAnyCaseAreAccepted() throws IOException {
        byte[] input = concat(
                ascii("Content-Type: application/vscode-jsonrpc; charset=utf-8\r\nContent-Length: 2\r\n\r\n{}"),
                ascii("content-length:7\r\nContent-Type: application/json\r\n\r\n{\"a\":1}"));
        assertEquals(List.of("{}", "{\"a\":1}"), readAll(new ByteArrayInputStream(input)));
        assertEquals(List.of(), skipped);
    }

    @Test
    void aLengthThatRunsIntoTheNextFrameResyncsThere() throws IOException {
        byte[] input = concat(ascii("Content-Length: 40\r\n\r\n{\"short\":1}"), frame("{\"next\":2}"),
                frame("{\"last\":3}"));
        assertEquals(List.of("{\"next\":2}", "{\"last\":3}"), readAll(new ByteArrayInputStream(input)));
        assertEquals(1, skipped.size());
    }

    @Test
    void aBodyMentioningContentLengthIsNotMistakenForTwoFrames() throws IOException {
        String body = "{\"text\":\"send Content-Length: 5\\r\\n\\r\\n first\"}";
        assertEquals(List.of(body), readAll(new ByteArrayInputStream(frame(body))));
        assertEquals(List.of(), skipped);
    }

    @Test
    void oversizedFramesAndEndlessGarbageAreDropped() throws IOException {
        byte[] huge = ascii("Content-Length: 999999999\r\n\r\n");
        byte[] noise = ascii("x".repeat(FrameReader.MAX_HEADER + 100));
        byte[] input = concat(huge, noise, frame("{\"fine\":1}"));
        assertEquals(List.of("{\"fine\":1}"), readAll(new ByteArrayInputStream(input)));
        assertTrue(skipped.size() >= 2, skipped.toString());
    }

    @Test
    void endOfStreamInsideABody() throws IOException {
        FrameReader reader = new FrameReader(new ByteArrayInputStream(ascii("Content-Length: 10\r\n\r\n{\"a\"")), skipped::add);
        assertNull(reader.next());
        assertEquals(1, skipped.size());
        assertTrue(skipped.get(0).contains("cut short"), skipped.get(0));
    }
}
