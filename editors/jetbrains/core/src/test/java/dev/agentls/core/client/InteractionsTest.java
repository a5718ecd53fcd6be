package dev.agentls.core.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import com.google.gson.JsonObject;
import dev.agentls.core.Repo;
import dev.agentls.core.protocol.Answer;
import dev.agentls.core.protocol.Json;
import dev.agentls.core.protocol.Wire;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

class InteractionsTest {
    private static final Wire.Question RUNNER = new Wire.Question("Which runner?", "Runner",
            List.of(new Wire.QuestionOption("pytest", "default"), new Wire.QuestionOption("unittest", null)), false);
    private static final Wire.Question FOLDERS = new Wire.Question("Which folders?", null,
            List.of(new Wire.QuestionOption("src", null), new Wire.QuestionOption("tests", null)), true);

    @Test
    void titlesCountSeveralQuestions() {
        assertEquals("Runner: Which runner? (1/2)", Interactions.title(RUNNER, 0, 2));
        assertEquals("Which folders?", Interactions.title(FOLDERS, 0, 1));
    }

    @Test
    void singleSelectTakesOnePickOrTheTypedText() {
        assertEquals(Answer.one("pytest"), Interactions.answer(RUNNER, List.of("pytest"), null));
        assertEquals(Answer.one("nose2"), Interactions.answer(RUNNER, List.of(), "  nose2 "));
        assertNull(Interactions.answer(RUNNER, List.of(), null), "nothing picked");
        assertNull(Interactions.answer(RUNNER, List.of(), "   "), "Other with nothing typed");
    }

    @Test
    void multiSelectCollectsTicksAndTheTypedText() {
        assertEquals(Answer.many(List.of("src", "tests")), Interactions.answer(FOLDERS, List.of("src", "tests"), null));
        assertEquals(Answer.many(List.of("src", "docs")), Interactions.answer(FOLDERS, List.of("src"), "docs"));
        assertEquals(Answer.many(List.of()), Interactions.answer(FOLDERS, List.of(), null));
    }

    @Test
    void theResultMatchesTheGoldenAnswer() {
        JsonObject fixture = Repo.json("protocol/fixtures/session_ask_question.json");
        Wire.AskQuestionParams params = Json.fromTree(fixture.get("params"), Wire.AskQuestionParams.class);
        List<Answer> answers = List.of(
                Interactions.answer(params.questions().get(0), List.of("pytest"), null),
                Interactions.answer(params.questions().get(1), List.of("src", "tests"), null));
        assertEquals(fixture.get("result"), Json.toTree(Interactions.result(params.questions(), answers)));
        assertEquals(Wire.AskQuestionResult.declinedByUser(),
                Interactions.result(params.questions(), Arrays.asList(Answer.one("pytest"), null)));
        assertEquals(Wire.AskQuestionResult.declinedByUser(), Interactions.result(params.questions(), List.of()));
    }

    @Test
    void permissionChoicesPutAllowingFirstAndAnswerTheGoldenWay() {
        JsonObject fixture = Repo.json("protocol/fixtures/session_request_permission.json");
        Wire.RequestPermissionParams params = Json.fromTree(fixture.get("params"), Wire.RequestPermissionParams.class);
        Wire.RequestPermissionParams shuffled = new Wire.RequestPermissionParams(params.sessionId(), params.turnId(),
                params.toolCall(), List.of(
                        new Wire.PermissionOption("never", "Always reject", "reject_always"),
                        new Wire.PermissionOption("odd", "Something new", "ask_later"),
                        new Wire.PermissionOption("reject_once", "Reject", "reject_once"),
                        new Wire.PermissionOption("allow_once", "Allow once", "allow_once")));
        assertEquals(List.of("allow_once", "reject_once", "never", "odd"),
                Interactions.permissionChoices(shuffled).stream().map(Wire.PermissionOption::optionId).toList());
        assertEquals("Allow the agent to run `rm -rf build`?", Interactions.permissionTitle(params));
        assertEquals("Why you are asked: recursive forced delete.\nTool: bash (high risk)\n{\n  \"command\": \"rm -rf build\"\n}",
                Interactions.permissionDetail(params));
        Wire.PermissionOption reject = Interactions.permissionChoices(params).get(1);
        assertEquals(fixture.get("result"), Json.toTree(Interactions.permissionResult(reject)));
        assertEquals(Wire.RequestPermissionResult.cancelled(), Interactions.permissionResult(null));
    }
}
