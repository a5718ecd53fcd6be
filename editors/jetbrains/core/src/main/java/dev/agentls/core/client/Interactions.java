package dev.agentls.core.client;

import com.google.gson.GsonBuilder;
import dev.agentls.core.protocol.Answer;
import dev.agentls.core.protocol.Wire.AskQuestionResult;
import dev.agentls.core.protocol.Wire.PermissionOption;
import dev.agentls.core.protocol.Wire.Question;
import dev.agentls.core.protocol.Wire.RequestPermissionParams;
import dev.agentls.core.protocol.Wire.RequestPermissionResult;
import dev.agentls.core.protocol.Wire.ToolCallRef;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * The UI-free half of asking the user: titles, choices and how picks become answers. The IDE's
 * popups and dialogs only show these and report what was picked.
 */
public final class Interactions {
    private Interactions() {}

    /** The free-text entry offered with every question. */
    public static final String OTHER = "Other…";

    private static final List<String> KIND_ORDER = List.of("allow_once", "allow_always", "reject_once", "reject_always");
    private static final int DETAIL_LIMIT = 600;

    // -- questions --------------------------------------------------------------------------

    public static String title(Question q, int index, int total) {
        String head = q.header() != null && !q.header().isBlank() ? q.header() + ": " + q.question() : q.question();
        return total > 1 ? head + " (" + (index + 1) + "/" + total + ")" : head;
    }

    public static String hint(Question q) {
        return q.multiSelect()
                ? "Tick any that apply, or tick Other… and type your own; Esc declines"
                : "Pick one, or pick Other… to type your own; Esc declines";
    }

    /**
     * The answer from what was picked: option labels, and the text typed for Other (null when
     * Other was not picked). Null when there is no answer: Other picked with nothing typed, or
     * nothing picked in a single-select question.
     */
    public static Answer answer(Question q, List<String> labels, String otherText) {
        String typed = otherText == null ? null : otherText.strip();
        if (typed != null && typed.isEmpty()) return null;
        if (q.multiSelect()) {
            List<String> values = new ArrayList<>(labels);
            if (typed != null) values.add(typed);
            return Answer.many(values);
        }
        if (typed != null) return Answer.one(typed);
        return labels.isEmpty() ? null : Answer.one(labels.get(0));
    }

    /** All questions answered: the answers keyed by question text; any unanswered: declined. */
    public static AskQuestionResult result(List<Question> questions, List<Answer> answers) {
        if (answers.size() < questions.size() || answers.stream().anyMatch(Objects::isNull)) return AskQuestionResult.declinedByUser();
        Map<String, Answer> byQuestion = new LinkedHashMap<>();
        for (int i = 0; i < questions.size(); i++) byQuestion.put(questions.get(i).question(), answers.get(i));
        return AskQuestionResult.answered(byQuestion);
    }

    // -- permissions ------------------------------------------------------------------------

    /** The offered options, allowing ones first. */
    public static List<PermissionOption> permissionChoices(RequestPermissionParams params) {
        List<PermissionOption> options = new ArrayList<>(params.options());
        options.sort(Comparator.comparingInt(o -> {
            int rank = KIND_ORDER.indexOf(o.kind());
            return rank < 0 ? KIND_ORDER.size() : rank;
        }));
        return options;
    }

    public static String permissionTitle(RequestPermissionParams params) {
        String title = params.toolCall().title();
        boolean plainWord = title.length() > 1 && Character.isUpperCase(title.charAt(0))
                && Character.isLowerCase(title.charAt(1));
        return "Allow the agent to " + (plainWord ? Character.toLowerCase(title.charAt(0)) + title.substring(1) : title) + "?";
    }

    public static String permissionDetail(RequestPermissionParams params) {
        ToolCallRef call = params.toolCall();
        StringBuilder detail = new StringBuilder();
        if (call.reason() != null && !call.reason().isBlank()) detail.append("Why you are asked: ").append(call.reason()).append(".\n");
        detail.append("Tool: ").append(call.name());
        if (call.risk() != null) detail.append(" (").append(call.risk()).append(" risk)");
        detail.append('\n');
        String input = new GsonBuilder().setPrettyPrinting().disableHtmlEscaping().create().toJson(call.input());
        detail.append(input.length() > DETAIL_LIMIT ? input.substring(0, DETAIL_LIMIT) + "…" : input);
        return detail.toString();
    }

    /** The chosen option, or cancelled when the dialog was closed without a choice (null). */
    public static RequestPermissionResult permissionResult(PermissionOption choice) {
        return choice == null ? RequestPermissionResult.cancelled() : RequestPermissionResult.selected(choice.optionId());
    }
}
