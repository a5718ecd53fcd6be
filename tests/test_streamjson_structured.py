"""Structured output (`output_format` of the Python claude-agent-sdk, `outputFormat` of the
TypeScript one): the final answer is checked against the schema, asked for again when it does
not satisfy it, and handed back as `structured_output`."""

from __future__ import annotations

from claude_agent_sdk import ResultMessage

from server.testing.fake_llm import Reply
from tests.node_clients import require_clients
from tests.test_streamjson_flags import run, user
from tests.test_streamjson_sdk import collect, options
from tests.test_ts_claude_sdk import messages, run_query

SCHEMA = {
    "type": "object",
    "properties": {"answer": {"type": "integer"}},
    "required": ["answer"],
}
FORMAT = {"type": "json_schema", "schema": SCHEMA}


async def test_a_valid_answer_is_the_structured_output(tmp_path, workspace, fake_llm):
    fake_llm.script(Reply(text='{"answer": 42}'))
    result = (
        await collect(
            "six times seven", options(tmp_path, workspace, fake_llm, output_format=FORMAT)
        )
    )[-1]
    assert isinstance(result, ResultMessage) and result.subtype == "success"
    assert result.structured_output == {"answer": 42}
    system = fake_llm.requests[0].body["messages"][0]["content"]
    assert '"required": ["answer"]' in system


async def test_an_invalid_answer_is_asked_for_again(tmp_path, workspace, fake_llm):
    fake_llm.script(Reply(text="It is 42."), Reply(text='```json\n{"answer": 42}\n```'))
    result = (
        await collect(
            "six times seven", options(tmp_path, workspace, fake_llm, output_format=FORMAT)
        )
    )[-1]
    assert result.structured_output == {"answer": 42} and not result.is_error
    retry = [m["content"] for m in fake_llm.requests[1].body["messages"] if m["role"] == "user"]
    assert any("not a JSON value" in t for t in retry)


async def test_retries_run_out(tmp_path, workspace, fake_llm):
    fake_llm.script(*[Reply(text='{"answer": "many"}') for _ in range(4)])
    result = (await collect("count", options(tmp_path, workspace, fake_llm, output_format=FORMAT)))[
        -1
    ]
    assert (result.subtype, result.is_error) == ("error_max_structured_output_retries", True)
    assert result.structured_output is None and len(fake_llm.requests) == 4


def test_the_typescript_sdks_output_format(tmp_path, workspace, fake_llm):
    require_clients()
    fake_llm.script(Reply(text='{"answer": 7}'))
    events = run_query(
        tmp_path, workspace, fake_llm, prompt="seven", options={"outputFormat": FORMAT}
    )
    [result] = messages(events, "result")
    assert result["structured_output"] == {"answer": 7}


def test_json_schema_sent_in_initialize(tmp_path, workspace, fake_llm):
    fake_llm.script(Reply(text='{"answer": 3}'))
    initialize = {"subtype": "initialize", "jsonSchema": SCHEMA}
    lines = [
        {"type": "control_request", "request_id": "i1", "request": initialize},
        user("three"),
    ]
    frames, _ = run(tmp_path, workspace, fake_llm, lines=lines)
    assert not [f for f in frames if f.get("subtype") == "informational"]
    assert frames[-1]["structured_output"] == {"answer": 3}
