"""Provider options on one prompt (`session/prompt` `options.providerOptions`), through
`agentls serve` against the strict fake model: they reach that turn's model calls over the
configured ones, the next turn is back on the configured ones, and a key the session's provider
takes none of is named in a warning."""

from __future__ import annotations

from server.testing.fake_llm import Reply
from tests.agent_client import new_session, prompt
from tests.test_e2e_seed_options import log_text, serve


async def test_a_prompts_provider_options_apply_to_its_turn_only(tmp_path, workspace, fake_llm):
    fake_llm.script(Reply(text="one"), Reply(text="two"))
    client = await serve(
        tmp_path, workspace, fake_llm, providerOptions={"maxTokens": 2000, "seed": 1}
    )
    try:
        session_id = await new_session(client, workspace)
        options = {
            "providerOptions": {
                "max_tokens": 1234,  # the API's own spelling is taken too
                "stop": ["END"],
                "stopp": ["typo"],
                "anthropic": {"max_tokens": 99},  # another provider's section
            }
        }
        first = await client.call(
            "session/prompt", {**prompt(session_id, "short answer"), "options": options}
        )
        second = await client.call("session/prompt", prompt(session_id, "again"))
    finally:
        await client.close()
    assert first["terminal"] == second["terminal"] == "completed"
    given, later = (r.body for r in fake_llm.requests)
    assert (given.get("max_completion_tokens"), given.get("stop"), given.get("seed")) == (
        1234,
        ["END"],
        1,
    )
    assert (later.get("max_completion_tokens"), later.get("stop"), later.get("seed")) == (
        2000,
        None,
        1,
    )
    warning = "options.providerOptions: 'stopp' reaches no openai model and is ignored"
    assert warning in client.stderr.decode()
    assert warning in log_text(tmp_path)
    assert "'anthropic'" not in client.stderr.decode()
