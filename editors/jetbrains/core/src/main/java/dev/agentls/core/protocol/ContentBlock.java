package dev.agentls.core.protocol;

/** A piece of a prompt (ACP-shaped), tagged on {@code type}. */
public sealed interface ContentBlock {
    /** Plain text typed by the user. */
    record TextContent(String text) implements ContentBlock {}

    /** An attached image: base64 data without the {@code data:} prefix, and its MIME type. */
    record ImageContent(String data, String mimeType) implements ContentBlock {}

    /** A reference to a file the user attached by path or URI. */
    record ResourceLink(String uri, String name) implements ContentBlock {}

    static ContentBlock text(String text) {
        return new TextContent(text);
    }
}
