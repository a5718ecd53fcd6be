"""ask_user_question: put one to four multiple-choice questions to the user through the editor."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from protocol.methods import Question, QuestionOption
from server.config import positive
from server.tools.base import Tool, ToolContext, ToolInput, ToolResult
from server.turn import UserNotReachable

NOT_REACHABLE = {
    "error": "user_not_reachable",
    "hint": "Non-interactive context. Proceed autonomously using best judgement.",
}
REJECTED = {
    "error": "user_rejected",
    "hint": "The user declined to answer. Do not assume consent.",
}


class OptionItem(BaseModel):
    model_config = ConfigDict(extra="forbid")
    label: str = Field(min_length=1)
    description: str | None = None


class QuestionItem(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)
    question: str = Field(min_length=1)
    header: str = Field(max_length=12, description="A short tag for the question (≤ 12 chars).")
    options: list[OptionItem] = Field(min_length=2, max_length=4)
    multi_select: bool = Field(False, alias="multiSelect")


DEFAULT_TIMEOUT = 60.0


class AskInput(ToolInput):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)
    question: str | None = Field(None, description="A single question (simple form).")
    options: list[str] | None = Field(None, description="Choices for the simple form.")
    multi_select: bool = Field(False, alias="multiSelect")
    questions: list[QuestionItem] | None = Field(None, min_length=1, max_length=4)
    timeout_ms: int | None = Field(
        None,
        alias="timeoutMs",
        ge=1000,
        le=3_600_000,
        description="How long to wait for the answer (default: the questions.timeout setting).",
    )
    default_value: str | list[str] | None = Field(None, alias="defaultValue")
    on_timeout: Literal["error", "useDefault", "skip"] = Field("error", alias="onTimeout")

    @model_validator(mode="after")
    def one_shape(self) -> AskInput:
        if (self.question is None) == (self.questions is None):
            raise ValueError("give either `question` (simple form) or `questions`, not both")
        return self

    def as_questions(self) -> list[Question]:
        if self.questions is None:
            options = [QuestionOption(label=o) for o in self.options or []]
            return [
                Question(
                    question=self.question or "", options=options, multi_select=self.multi_select
                )
            ]
        return [
            Question(
                question=q.question,
                header=q.header,
                options=[
                    QuestionOption(label=o.label, description=o.description) for o in q.options
                ],
                multi_select=q.multi_select,
            )
            for q in self.questions
        ]


class AskUserQuestion(Tool):
    name = "ask_user_question"
    description = (
        "Ask the user one to four multiple-choice questions when a decision is genuinely theirs "
        "(requirements, preferences, trade-offs) and you cannot infer it from the code. Use "
        "either {question, options?, multiSelect?} or {questions: [{question, header (≤ 12 "
        "chars), options: 2-4 of {label, description?}, multiSelect?}]}. The user can always "
        "type their own answer instead of picking an option. If no user can be reached you get "
        "`user_not_reachable`: then proceed on your own best judgement. `user_rejected` means "
        "the user declined: do not assume consent."
    )
    Input = AskInput
    read_only = True
    kind = "other"  # a question to the user, not the model's own reasoning

    def title(self, args: AskInput) -> str:
        first = args.question or (args.questions[0].question if args.questions else "")
        return f"Ask: {first}"

    async def run(self, ctx: ToolContext, args: AskInput) -> ToolResult:
        timeout = args.timeout_ms / 1000 if args.timeout_ms else configured_timeout(ctx.config)
        if ctx.sink is None:
            return ToolResult(NOT_REACHABLE)
        try:
            reply = await ctx.sink.ask_question(args.as_questions(), timeout=timeout)
        except UserNotReachable as exc:
            return ToolResult({**NOT_REACHABLE, "hint": exc.hint} if exc.hint else NOT_REACHABLE)
        except TimeoutError:
            return ToolResult(on_timeout(args, timeout))
        if reply.declined or not reply.answers:
            return ToolResult(REJECTED)
        return ToolResult({"answers": reply.answers, "summary": in_words(reply.answers)})


def configured_timeout(config: dict[str, Any]) -> float:
    """`questions.timeout` in seconds (default 60)."""
    return float(positive((config.get("questions") or {}).get("timeout"), DEFAULT_TIMEOUT))


def on_timeout(args: AskInput, timeout: float) -> dict[str, Any]:
    if args.on_timeout == "useDefault" and args.default_value is not None:
        answers = {q.question: args.default_value for q in args.as_questions()}
        return {
            "answers": answers,
            "summary": f"No answer within {timeout:g} s; using the default. " + in_words(answers),
        }
    if args.on_timeout == "skip":
        return {"skipped": True, "summary": f"No answer within {timeout:g} s; question skipped."}
    return {
        "error": "user_timeout",
        "hint": f"The user did not answer within {timeout:g} s. Proceed with best judgement.",
    }


def in_words(answers: dict[str, str | list[str]]) -> str:
    lines = ["The user answered:"]
    for question, answer in answers.items():
        text = ", ".join(answer) if isinstance(answer, list) else answer
        lines.append(f"- {question} → {text}")
    return "\n".join(lines)
