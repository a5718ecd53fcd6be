package dev.agentls.core.protocol;

import java.util.List;

/** The answer to one question: one label or typed text, or a list for a multi-select question. */
public record Answer(List<String> values, boolean multiple) {
    public Answer {
        values = List.copyOf(values);
    }

    public static Answer one(String value) {
        return new Answer(List.of(value), false);
    }

    public static Answer many(List<String> values) {
        return new Answer(values, true);
    }
}
