"""`--image PATH` (repeatable) attaches images to the prompt of `-p` and to the first user
message of stream-json input; a file that cannot be read is a clear error. Checked on what the
loopback fake model received."""

from __future__ import annotations

from server.testing.fake_llm import Reply
from tests.test_e2e_vision_turns import png
from tests.test_streamjson_flags import run, user


def image_urls(body: dict) -> list[str]:
    return [
        part["image_url"]["url"]
        for message in body["messages"]
        if isinstance(message.get("content"), list)
        for part in message["content"]
        if part.get("type") == "image_url"
    ]


def test_image_flags_attach_to_the_prompt(tmp_path, workspace, fake_llm):
    (workspace / "a.png").write_bytes(png(4, 3))
    (workspace / "b.png").write_bytes(png(2, 2))
    fake_llm.script(Reply(text="Two pictures."))
    frames, proc = run(
        tmp_path,
        workspace,
        fake_llm,
        "-p",
        "what are these",
        "--image",
        "a.png",
        "--image",
        "b.png",
    )
    assert proc.returncode == 0, proc.stderr.decode()
    assert frames[-1]["result"] == "Two pictures."
    urls = image_urls(fake_llm.requests[0].body)
    assert len(urls) == 2 and all(u.startswith("data:image/png;base64,") for u in urls)


def test_image_flag_with_stream_json_input(tmp_path, workspace, fake_llm):
    (workspace / "a.png").write_bytes(png(4, 3))
    fake_llm.script(Reply(text="One."), Reply(text="Two."))
    _, proc = run(
        tmp_path, workspace, fake_llm, "-p", "--image", "a.png", lines=[user("look"), user("again")]
    )
    assert proc.returncode == 0, proc.stderr.decode()
    first, second = (r.body for r in fake_llm.requests)
    assert len(image_urls(first)) == 1
    assert len(image_urls(second)) == 1, "the image stays in the history, not attached again"


def test_an_image_that_cannot_be_read_is_a_clear_error(tmp_path, workspace, fake_llm):
    (workspace / "notes.txt").write_text("not a picture")
    for path, said in (
        ("missing.png", "cannot read image"),
        ("notes.txt", "unsupported image type"),
    ):
        _, proc = run(tmp_path, workspace, fake_llm, "-p", "hi", "--image", path)
        assert proc.returncode == 1 and said in proc.stderr.decode(), proc.stderr.decode()
    assert fake_llm.requests == []
