"""Answers to the host's control requests that need no turn: the `initialize` answer, the
refusal of a request agentls does not take, and the frames both are written in."""

from __future__ import annotations

import os
from typing import Any

from protocol import errors
from protocol.methods import RewindParams, SessionInfoResult
from server.agent.profiles import Profile
from server.engines.base import SessionOffer
from server.frontends.streamjson_input import ControlRequestLine
from server.frontends.streamjson_surface import CONTROL
from server.frontends.streamjson_usage import api_key_source
from server.sessions.service import ServiceError


def initialize_answer(offer: SessionOffer, info: SessionInfoResult) -> dict[str, Any]:
    models = [
        {
            "value": m.model_id,
            "displayName": m.name,
            "description": m.provider,
            "supportsAutoMode": False,  # permission mode auto is not available
        }
        for m in info.models.available_models
    ]
    return {
        "commands": [
            {"name": c.name, "description": c.description, "argumentHint": ""}
            for c in offer.commands
        ],
        "models": models,
        "agents": [{"name": p.name, "description": p.description} for p in profiles(offer)],
        "output_style": "default",
        "available_output_styles": ["default"],
        "account": {"apiKeySource": api_key_source(info.provider)},
        "pid": os.getpid(),
    }


async def rewind_answer(
    service: Any, session_id: str, checkpoints: dict[str, str], message: ControlRequestLine
) -> dict[str, Any]:
    """Claude Code's `rewind_files`: the files back as they were before the user message
    `user_message_id` (its uuid, or an agentls turn id), or with `dry_run` what would be."""
    request = message.request
    target = request.user_message_id or ""
    params = RewindParams(
        session_id=session_id, turn_id=checkpoints.get(target, target), dry_run=request.dry_run
    )
    try:
        done = await service.rewind(params)
    except ServiceError as exc:
        error = (
            "No file checkpoint found for this message."
            if exc.code == errors.REWIND_REFUSED and not isinstance(exc.data, dict)
            else str(exc)
        )
        if request.dry_run:
            return control_success(message.request_id, {"canRewind": False, "error": error})
        return control_error(message.request_id, error)
    body: dict[str, Any] = {"canRewind": not done.conflicts}
    body["filesChanged"] = done.restored + done.removed
    if done.conflicts:
        body["error"] = "changed outside agentls since: " + ", ".join(done.conflicts)
    return control_success(message.request_id, body)


def unsupported(request_id: str, subtype: str) -> dict[str, Any]:
    item = CONTROL.get(subtype)
    refused = f" ({item.note})" if item and item.status == "refused" else ""
    error = f"Unsupported control request subtype: {subtype}{refused}"
    return control_error(request_id, error, code="unsupported_request")


def profiles(offer: SessionOffer) -> list[Profile]:
    return offer.profiles.profiles if offer.profiles else []


def mcp_servers(offer: SessionOffer) -> list[dict[str, Any]]:
    if not offer.mcp:
        return []
    from server.sessions.mcp import claude_statuses

    return claude_statuses(offer.mcp)


def control_success(request_id: str, body: dict[str, Any]) -> dict[str, Any]:
    response = {"subtype": "success", "request_id": request_id, "response": body}
    return {"type": "control_response", "response": response}


def control_error(request_id: str, error: str, *, code: str | None = None) -> dict[str, Any]:
    response = {"subtype": "error", "request_id": request_id, "error": error}
    if code:
        response["error_code"] = code
    return {"type": "control_response", "response": response}
