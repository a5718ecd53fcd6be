"""Secrets masked in what agentls writes (`server.redact`)."""

from __future__ import annotations

import pytest

from server import redact

SECRET = "sk-live-0123456789"


def test_headers_and_url_credentials() -> None:
    text = 'curl -H "Authorization: Bearer abcdefgh" -H "X-Api-Key: k1" https://u:p@host/x'

    assert redact.redact(text) == (
        'curl -H "Authorization: Bearer ***" -H "X-Api-Key: ***" https://***@host/x'
    )
    assert redact.redact("plain text, nothing to hide") == "plain text, nothing to hide"


def test_a_key_set_or_changed_after_a_redaction_is_masked(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SOME_API_KEY", raising=False)
    assert redact.redact(f"key {SECRET}") == f"key {SECRET}"

    monkeypatch.setenv("SOME_API_KEY", SECRET)
    assert redact.redact(f"key {SECRET}") == "key ***"

    monkeypatch.setenv("SOME_API_KEY", SECRET + "-rotated")
    assert redact.redact_data({"a": [f"{SECRET}-rotated"]}) == {"a": ["***"]}

    monkeypatch.delenv("SOME_API_KEY")
    assert redact.redact(f"key {SECRET}") == f"key {SECRET}"


def test_held_values_are_masked_until_released() -> None:
    held = redact.hold({"OTHER_TOKEN": SECRET})
    assert redact.redact(SECRET) == "***"

    redact.release(held)
    assert redact.redact(SECRET) == SECRET


def test_data_is_masked_wherever_a_secret_sits(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SOME_API_KEY", SECRET)
    monkeypatch.setenv("ODD_TOKEN", 'has"quote\\and\u00e9')
    data = {
        "request": {
            "messages": [{"content": [f"the key is {SECRET}", ("x", 'has"quote\\and\u00e9')]}]
        },
        "url": "see https://user:pw@example.com/x and mail a@b.c",
        "headers": "x-api-key: abc123",
        "n": 3,
        "keep": "nothing here",
    }

    assert redact.redact_data(data) == {
        "request": {"messages": [{"content": ["the key is ***", ["x", "***"]]}]},
        "url": "see https://***@example.com/x and mail a@b.c",
        "headers": "x-api-key: ***",
        "n": 3,
        "keep": "nothing here",
    }
    clean = {"a": ["decorators @like this", {"b": "http://host/path"}]}
    assert redact.redact_data(clean) == clean
