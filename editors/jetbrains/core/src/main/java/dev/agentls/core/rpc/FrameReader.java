package dev.agentls.core.rpc;

import com.google.gson.JsonParser;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.function.Consumer;
import java.util.regex.MatchResult;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Reads LSP-framed message bodies ({@code Content-Length: N\r\n\r\n} + N bytes) from a stream.
 *
 * <p>Tolerant of what a child process may put on stdout besides frames: bytes before a header
 * are skipped (and reported), other headers such as {@code Content-Type} are ignored, the header
 * name is case-insensitive, and a body whose declared length runs into the next frame is
 * dropped so that reading resumes at that frame. Bodies are returned as raw bytes: the length
 * counts bytes, never characters.
 */
public final class FrameReader {
    public static final int MAX_FRAME = 64 * 1024 * 1024;
    static final int MAX_HEADER = 64 * 1024;

    private static final Pattern CONTENT_LENGTH =
            Pattern.compile("content-length[ \\t]*:[ \\t]*(\\d{1,10})", Pattern.CASE_INSENSITIVE);
    /** Well-formed header lines that may precede Content-Length (e.g. Content-Type). */
    private static final Pattern OTHER_HEADERS = Pattern.compile("(?:[!-9;-~]+:[^\\r\\n]*\\r\\n)*");
    private static final byte[] HEADER_END = {'\r', '\n', '\r', '\n'};
    private static final byte[] HEADER_NAME = "Content-Length".getBytes(StandardCharsets.US_ASCII);

    private final InputStream in;
    private final Consumer<String> onSkipped;
    private byte[] buf = new byte[16 * 1024];
    private int pos;
    private int lim;

    /** {@code onSkipped} hears about every stretch of input that was not a frame. */
    public FrameReader(InputStream in, Consumer<String> onSkipped) {
        this.in = in;
        this.onSkipped = onSkipped;
    }

    /** The next frame's body, or null at the end of the stream. */
    public byte[] next() throws IOException {
        while (true) {
            int headerEnd = indexOf(buf, HEADER_END, pos, lim);
            if (headerEnd < 0) {
                if (lim - pos > MAX_HEADER) {
                    skip(lim - pos - (HEADER_END.length - 1), "bytes without a frame header");
                }
                if (!fill()) {
                    if (lim > pos) skip(lim - pos, "bytes at the end of the stream");
                    return null;
                }
                continue;
            }
            String header = new String(buf, pos, headerEnd - pos, StandardCharsets.ISO_8859_1);
            int bodyOffset = headerEnd + HEADER_END.length - pos;
            MatchResult match = lastMatch(header);
            if (match == null) {
                skip(bodyOffset, "bytes without a Content-Length header");
                continue;
            }
            if (!OTHER_HEADERS.matcher(header.substring(0, match.start())).matches()) {
                skip(match.start(), "bytes before a frame header");
                bodyOffset -= match.start();
            }
            long length = Long.parseLong(match.group(1));
            if (length > MAX_FRAME) {
                skip(bodyOffset, "a frame header announcing " + length + " bytes (too large)");
                continue;
            }
            while (lim - pos < bodyOffset + length) {
                if (!fill()) {
                    skip(lim - pos, "bytes of a frame cut short by the end of the stream");
                    return null;
                }
            }
            int bodyStart = pos + bodyOffset;
            byte[] body = Arrays.copyOfRange(buf, bodyStart, bodyStart + (int) length);
            int nested = indexOf(body, HEADER_NAME, 0, body.length);
            if (nested >= 0 && !isJson(body)) {
                // The declared length overran into the next frame: resume at that frame's header.
                skip(bodyOffset + nested, "a frame whose Content-Length runs into the next frame");
                continue;
            }
            pos = bodyStart + (int) length;
            return body;
        }
    }

    private static MatchResult lastMatch(String header) {
        Matcher m = CONTENT_LENGTH.matcher(header);
        MatchResult last = null;
        while (m.find()) last = m.toMatchResult();
        return last;
    }

    private static boolean isJson(byte[] body) {
        try {
            JsonParser.parseString(new String(body, StandardCharsets.UTF_8));
            return true;
        } catch (RuntimeException e) {
            return false;
        }
    }

    private void skip(int count, String what) {
        if (count <= 0) return;
        String sample = new String(buf, pos, Math.min(count, 80), StandardCharsets.UTF_8);
        pos += count;
        onSkipped.accept("skipped " + count + " " + what + ": " + sample.strip());
    }

    /** Reads more input after compacting (and if needed growing) the buffer; false at EOF. */
    private boolean fill() throws IOException {
        if (pos > 0) {
            System.arraycopy(buf, pos, buf, 0, lim - pos);
            lim -= pos;
            pos = 0;
        }
        if (lim == buf.length) buf = Arrays.copyOf(buf, buf.length * 2);
        int n = in.read(buf, lim, buf.length - lim);
        if (n < 0) return false;
        lim += n;
        return true;
    }

    static int indexOf(byte[] data, byte[] needle, int from, int to) {
        outer:
        for (int i = from; i <= to - needle.length; i++) {
            for (int j = 0; j < needle.length; j++) {
                if (data[i + j] != needle[j]) continue outer;
            }
            return i;
        }
        return -1;
    }
}
