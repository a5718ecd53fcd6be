package dev.agentls.core.protocol;

/** A piece of a prompt (ACP-shaped), tagged on {@code type}. */
public sealed interface ContentBlock {
    /** Plain text typed by the user. */
    record TextContent(String text) implements ContentBlock {}

    /** An attached image: base64 data without the {@code data:} prefix, and its MIME type. */
    record ImageContent(String data, String mimeType) implements ContentBlock {}

    /**
     * A reference to a file the user attached by path or URI; {@code range} (may be null) is the
     * part meant, {@code context} (may be null) one of selection, file, diagnostics, terminal.
     */
    record ResourceLink(String uri, String name, String mimeType, Range range, String context)
            implements ContentBlock {
        public ResourceLink(String uri, String name) {
            this(uri, name, null, null, null);
        }
    }

    /**
     * Text the editor attached (a selection, a file, the problems, terminal output); the model
     * gets it as delimited context with its path and line range.
     */
    record ResourceContent(String uri, String text, String mimeType, String name, Range range, String context)
            implements ContentBlock {}

    /** A place in a text document, 0-based (an LSP position). */
    record Position(int line, int character) {}

    /** A span of a text document, 0-based, end exclusive. */
    record Range(Position start, Position end) {}

    /** The selected lines {@code first..last} (0-based, inclusive) of a file as context. */
    static ContentBlock selection(String uri, String text, int first, int last) {
        return new ResourceContent(uri, text, null, null,
                new Range(new Position(first, 0), new Position(last + 1, 0)), "selection");
    }

    static ContentBlock text(String text) {
        return new TextContent(text);
    }
}
