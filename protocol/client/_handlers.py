"""Answers to the server's questions and permission requests.

A handler is a function (plain or async) of the request's params model returning the result
model. The defaults never let anything through: `reject` and `decline`.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from protocol.methods import (
    AskQuestionParams,
    AskQuestionResult,
    PermissionOutcome,
    RequestPermissionParams,
    RequestPermissionResult,
)

PermissionHandler = Callable[
    [RequestPermissionParams], RequestPermissionResult | Awaitable[RequestPermissionResult]
]
QuestionHandler = Callable[[AskQuestionParams], AskQuestionResult | Awaitable[AskQuestionResult]]


def selected(option_id: str, *, message: str | None = None) -> RequestPermissionResult:
    """The answer that picks one of the request's options."""
    outcome = PermissionOutcome(outcome="selected", option_id=option_id)
    return RequestPermissionResult(outcome=outcome, message=message)


def cancelled() -> RequestPermissionResult:
    """No choice made; the server treats it as a rejection."""
    return RequestPermissionResult(outcome=PermissionOutcome(outcome="cancelled"))


def pick(request: RequestPermissionParams, *kinds: str) -> RequestPermissionResult:
    """Select the first offered option of the first of `kinds` offered; cancelled if none is."""
    for kind in kinds:
        for option in request.options:
            if option.kind == kind:
                return selected(option.option_id)
    return cancelled()


def reject(request: RequestPermissionParams) -> RequestPermissionResult:
    """The default permission handler: reject this once."""
    return pick(request, "reject_once", "reject_always")


def allow_once(request: RequestPermissionParams) -> RequestPermissionResult:
    """Allow this call, and ask again next time."""
    return pick(request, "allow_once", "allow_always")


def decline(request: AskQuestionParams) -> AskQuestionResult:
    """The default question handler: the model is told the user declined to answer."""
    return AskQuestionResult(declined=True)
