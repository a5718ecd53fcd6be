"""The native front door's client->server methods: one coroutine each, and `bind`, which
validates a method's params, calls its handler and translates errors to JSON-RPC ones."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from pydantic import ValidationError
from pygls.exceptions import JsonRpcException

from protocol import errors
from protocol.base import WireModel
from protocol.methods import (
    Empty,
    EnginesListResult,
    Method,
    ModelsListResult,
    SteerResult,
    StopSubagentResult,
)
from server.engines.registry import engine_infos
from server.sessions.prompt_input import steer_text
from server.sessions.service import ServiceError, SessionService


class Handlers:
    """One coroutine per client->server method, named after it (`session/new` -> session_new)."""

    def __init__(self, service: SessionService):
        self.service = service

    async def connection_attach(self, p):
        raise JsonRpcException(
            "`connection/attach` is only the first message on a connection to a listening "
            "server (`agentls serve --listen`)",
            errors.INVALID_REQUEST,
        )

    async def session_new(self, p):
        info = await self.service.new_session(p)
        await self._attach_mcp(info.session_id, p.mcp_servers)
        return info

    async def _attach_mcp(self, session_id: str, configs: dict[str, Any] | None) -> None:
        if configs:
            from server.sessions.mcp import attach_servers

            servers = {name: c.to_wire() for name, c in configs.items()}
            await attach_servers(self.service, session_id, servers)

    async def session_prompt(self, p):
        return await self.service.prompt(p)

    async def session_cancel(self, p):
        self.service.cancel(p.session_id)

    async def session_steer(self, p):
        cwd = self.service.get(p.session_id).cwd
        self.service.steer(p.session_id, steer_text(p.prompt, cwd))
        return SteerResult(queued=True)

    async def session_set_model(self, p):
        self.service.set_model(p.session_id, p.model_id)
        return Empty()

    async def session_set_mode(self, p):
        self.service.set_mode(p.session_id, p.mode_id)
        return Empty()

    async def session_close(self, p):
        await self.service.close(p.session_id)
        return Empty()

    async def session_load(self, p):
        info = await self.service.load(p.session_id)
        await self._attach_mcp(p.session_id, p.mcp_servers)
        return info

    async def session_rewind(self, p):
        return await self.service.rewind(p)

    async def session_list(self, p):
        return await self.service.list(p.cwd, p.cursor, p.limit or 50)

    async def session_search(self, p):
        return await self.service.search(p.query, p.limit or 20)

    async def models_list(self, p):
        from server.providers.catalog import models_for

        return ModelsListResult(models=models_for(p.provider))

    async def engines_list(self, p):
        return EnginesListResult(engines=engine_infos(self.service.engines))

    async def skills_list(self, p):
        from server.skills import list_skills

        session = self.service.get(p.session_id) if p.session_id else None
        cwd = session.cwd if session else Path(p.cwd)
        return list_skills(cwd, self.service.offer(session.id).skills if session else None)

    async def subagents_list(self, p):
        from server.agent.profiles import list_subagents

        session = self.service.get(p.session_id) if p.session_id else None
        cwd = session.cwd if session else Path(p.cwd)
        found = list_subagents(cwd, self.service.offer(session.id).profiles if session else None)
        if session:
            found.background = self.service.background(session.id)
        return found

    async def subagents_stop(self, p):
        return StopSubagentResult(stopped=self.service.stop_subagent(p.session_id, p.task_id))

    async def mcp_list(self, p):
        from server.sessions.mcp import mcp_list

        return await mcp_list(self.service, p)


def handler_name(method: Method) -> str:
    return method.name.replace("/", "_")


def invalid_params(exc: ValidationError) -> JsonRpcException:
    problems = [
        {"path": ".".join(str(p) for p in e["loc"]), "message": e["msg"], "type": e["type"]}
        for e in exc.errors()
    ]
    summary = "; ".join(f"{p['path'] or '(params)'}: {p['message']}" for p in problems)
    return JsonRpcException(f"invalid params: {summary}", errors.INVALID_PARAMS, problems)


def bind(method: Method, impl: Callable[[Any], Awaitable[Any]]):
    async def handle(params: Any) -> Any:
        try:
            parsed = method.params.model_validate(params if params is not None else {})
        except ValidationError as exc:
            raise invalid_params(exc) from None
        try:
            result = await impl(parsed)
        except ServiceError as exc:
            raise JsonRpcException(str(exc), exc.code, exc.data) from None
        return result.to_wire() if isinstance(result, WireModel) else result

    return handle
