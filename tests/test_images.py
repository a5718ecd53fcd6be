"""Images: path detection in prompt text, loading, wire shapes, vision routing."""

from __future__ import annotations

import base64
from pathlib import Path

import pytest

from protocol.methods import NewSessionParams, PromptParams
from server.engines.native import NativeEngine
from server.providers import images
from server.providers.images import (
    IMAGE_ONLY_TEXT,
    ImageError,
    candidates,
    collect,
    vision_target,
)
from server.providers.messages import ImagePart, Message, TextPart, ToolResultPart
from server.providers.scripted import ScriptedProvider, ScriptedReply
from server.sessions.model import ClientCapabilities
from server.sessions.service import SessionService

PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 16
JPEG = b"\xff\xd8\xff\xe0" + b"\x00" * 16
GIF = b"GIF89a" + b"\x00" * 16
WEBP = b"RIFF\x10\x00\x00\x00WEBPVP8 " + b"\x00" * 8
BMP = b"BM" + b"\x00" * 30


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    (tmp_path / "ws").mkdir()
    (tmp_path / "home").mkdir()
    return tmp_path / "ws"


def home(ws: Path) -> Path:
    return ws.parent / "home"


def put(path: Path, data: bytes = PNG) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return path


def url(data: bytes, mime: str = "image/png") -> str:
    return f"data:{mime};base64,{base64.b64encode(data).decode()}"


def run(ws: Path, text: str, attachments=(), **kw) -> tuple[str, list[ImagePart]]:
    return collect(text, list(attachments), cwd=ws, home=home(ws), **kw)


@pytest.mark.parametrize(
    ("text", "left"),
    [
        ("look at shot.png", "look at"),
        ("shot.png is broken", "is broken"),
        ('see "shot.png" now', "see now"),
        ("see 'shot.png' now", "see now"),
        ("compare (shot.png) please", "compare () please"),
        ("[shot.png] what", "[] what"),
        ("shot.png, and more", ", and more"),
        ("x shot.png\nnext line", "x \nnext line"),
        ("look at SHOT.PNG", "look at"),
    ],
)
def test_bare_and_quoted_paths(ws: Path, text: str, left: str) -> None:
    put(ws / "shot.png")
    put(ws / "SHOT.PNG")
    out, parts = run(ws, text)

    assert out == left
    assert [p.data_url for p in parts] == [url(PNG)]


@pytest.mark.parametrize(
    "text",
    [
        "what is in shot.png?",
        "see shot.png.",
        "see shot.png;",
        "see shot.pngx",
        "see a_shot.png_b",
        "see xshot.png",
    ],
)
def test_other_followers_are_not_paths(ws: Path, text: str) -> None:
    put(ws / "shot.png")
    assert run(ws, text) == (text, [])


def test_every_extension_any_case(ws: Path) -> None:
    files = [
        put(ws / "a.PNG"),
        put(ws / "b.Jpg", JPEG),
        put(ws / "c.jpeg", JPEG),
        put(ws / "d.GIF", GIF),
        put(ws / "e.WebP", WEBP),
    ]
    out, parts = run(ws, " ".join(f.name for f in files) + " compare")

    assert out == "compare"
    assert [p.mime_type for p in parts] == [
        "image/png",
        "image/jpeg",
        "image/jpeg",
        "image/gif",
        "image/webp",
    ]


def test_quoted_paths_with_spaces_and_absolute_paths(ws: Path) -> None:
    spaced = put(ws / "my shots" / "screen one.png")
    absolute = put(ws.parent / "elsewhere.jpg", JPEG)
    out, parts = run(ws, f"diff \"my shots/screen one.png\" and '{absolute}'")

    assert out == "diff and"
    assert [p.data_url for p in parts] == [url(PNG), url(JPEG, "image/jpeg")]
    assert spaced.exists()


def test_home_forms(ws: Path) -> None:
    put(home(ws) / "pics" / "h.png")
    out, parts = run(ws, "a ~/pics/h.png b ~\\pics/h.png c")

    assert out == "a b c" and len(parts) == 1


def test_file_uris_are_decoded(ws: Path) -> None:
    target = put(ws / "with space.png")
    out, parts = run(ws, f"open file://{ws.as_posix()}/with%20space.png please")

    assert out == "open please" and len(parts) == 1
    assert target.exists()


@pytest.mark.parametrize(
    ("token", "expected"),
    [
        ("shot.png", ["shot.png"]),
        ("/c/Users/me/shot.png", ["/c/Users/me/shot.png", "C:/Users/me/shot.png"]),
        ("C:\\Users\\me\\shot.png", ["C:\\Users\\me\\shot.png"]),
        ("~/pics/a.png", ["~/pics/a.png", "/home/u/pics/a.png"]),
        ("~\\pics\\a.png", ["~\\pics\\a.png", "/home/u/pics\\a.png"]),
        ("file:///C:/Users/me/my%20shot.png", ["C:/Users/me/my shot.png"]),
        ("file:///home/u/a%20b.png", ["/home/u/a b.png"]),
        ("FILE://localhost/home/u/a.png", ["/home/u/a.png"]),
        ("https://example.com/a.png", []),
        ("s3://bucket/a.png", []),
        ("data:image/png;base64,AAAA.png", []),
    ],
)
def test_candidates(token: str, expected: list[str]) -> None:
    assert candidates(token, home=Path("/home/u")) == expected


@pytest.mark.parametrize(
    "text",
    [
        "see https://example.com/a.png now",
        "see data:image/png;base64,iVBORw0KGgo=.png now",
        "see missing.png now",
        "see C:\\Users\\me\\shot.png now",
        'see "C:\\Program Files\\shot.png" now',
        "see /c/Users/me/shot.png now",
        "see file:///C:/Users/me/my%20shot.png now",
    ],
)
def test_urls_and_missing_files_stay_in_the_text(ws: Path, text: str) -> None:
    assert run(ws, text) == (text, [])


def test_dedupe_by_resolved_path(ws: Path) -> None:
    shot = put(ws / "shot.png")
    out, parts = run(ws, f"shot.png and ./shot.png and {shot} again shot.png")

    assert out == "and and again" and len(parts) == 1


def test_twelve_images_keep_eight_and_leave_the_rest_in_the_text(ws: Path) -> None:
    names = [f"img{i:02}.png" for i in range(12)]
    for i, name in enumerate(names):
        put(ws / name, PNG + bytes([i]))
    out, parts = run(ws, " ".join(names))

    assert len(parts) == images.MAX_IMAGES == 8
    assert [p.data_url for p in parts] == [url(PNG + bytes([i])) for i in range(8)]
    assert out == " ".join(names[8:])


def test_attachments_come_first_and_count_towards_the_cap(ws: Path) -> None:
    for i in range(8):
        put(ws / f"p{i}.png", PNG + bytes([i]))
    attached = [ImagePart(url(JPEG, "image/jpeg")), ImagePart(url(GIF, "image/gif"))]
    out, parts = run(ws, " ".join(f"p{i}.png" for i in range(8)), attached + attached[:1])

    assert [p.mime_type for p in parts[:2]] == ["image/jpeg", "image/gif"]
    assert len(parts) == 8
    assert out == "p6.png p7.png"


def test_image_only_messages_get_a_prompt(ws: Path) -> None:
    put(ws / "shot.png")
    assert run(ws, '  "shot.png"  ')[0] == IMAGE_ONLY_TEXT
    assert run(ws, "", [ImagePart(url(PNG))])[0] == IMAGE_ONLY_TEXT
    assert run(ws, "", []) == ("", [])


def test_spaces_collapse_only_when_something_was_removed(ws: Path) -> None:
    put(ws / "shot.png")
    assert run(ws, "  a   b  ")[0] == "  a   b  "
    assert run(ws, "  a   shot.png   b  ")[0] == "a b"


def test_detection_can_be_turned_off(ws: Path) -> None:
    put(ws / "shot.png")
    assert run(ws, "see shot.png", detect=False) == ("see shot.png", [])


@pytest.mark.parametrize(
    ("environ", "enabled"),
    [
        ({}, True),
        ({"AGENTLS_AUTO_IMAGE": "0"}, False),
        ({"CC_AUTO_IMAGE": "0"}, False),
        ({"AGENTLS_AUTO_IMAGE": "1", "CC_AUTO_IMAGE": "0"}, True),
        ({"AGENTLS_AUTO_IMAGE": "false"}, False),
        ({"CC_AUTO_IMAGE": "1"}, True),
    ],
)
def test_auto_detect_switch(environ: dict, enabled: bool) -> None:
    assert images.auto_detect_enabled(environ) is enabled


def test_unsupported_file_content_fails(ws: Path) -> None:
    put(ws / "really-a-bitmap.png", BMP)
    with pytest.raises(ImageError, match=r"really-a-bitmap\.png: unsupported image type"):
        run(ws, "see really-a-bitmap.png")


def test_unsupported_attachment_type_fails(ws: Path) -> None:
    with pytest.raises(ImageError, match="unsupported image type image/tiff"):
        run(ws, "x", [ImagePart("data:image/tiff;base64,AAAA")])
    with pytest.raises(ImageError, match="base64 data URL"):
        run(ws, "x", [ImagePart("https://example.com/a.png")])


def test_wire_shapes() -> None:
    part = ImagePart("data:image/webp;base64,UklGRg==")

    assert images.openai_block(part) == {
        "type": "image_url",
        "image_url": {"url": "data:image/webp;base64,UklGRg=="},
    }
    assert images.anthropic_block(part) == {
        "type": "image",
        "source": {"type": "base64", "media_type": "image/webp", "data": "UklGRg=="},
    }
    assert images.ollama_images([TextPart("x"), part, part]) == ["UklGRg==", "UklGRg=="]


def test_text_only_models_never_get_image_blocks() -> None:
    history = [
        Message("user", [TextPart("look"), ImagePart(url(PNG))]),
        Message("tool", [ToolResultPart("c", "read", "ok")]),
    ]
    stripped = images.without_images(history)

    assert stripped == [
        Message("user", [TextPart("look"), TextPart(images.OMITTED)]),
        Message("tool", [ToolResultPart("c", "read", "ok")]),
    ]
    assert images.has_images(history) and not images.has_images(stripped)
    assert images.without_images(stripped) is stripped


@pytest.mark.parametrize(
    ("model", "provider", "configured", "new", "history", "expected"),
    [
        ("deepseek-chat", "deepseek", None, False, False, None),
        ("o3-mini", "openai", None, True, False, "gpt-5.5"),
        ("o3-mini", "openai", "gpt-4.1", True, False, "gpt-4.1"),
        ("claude-haiku-4-5", "anthropic", None, True, False, None),
        ("claude-haiku-4-5", "anthropic", "claude-sonnet-4-6", True, False, "claude-sonnet-4-6"),
        ("claude-opus-4-6", "anthropic", "claude-sonnet-4-6", False, True, None),
        ("llama3.2", "ollama", None, False, True, "llava"),
        ("deepseek-chat", "deepseek", "deepseek-vl2", True, False, "deepseek-vl2"),
        ("deepseek-vl2", "deepseek", "deepseek-vl2", False, True, None),
        ("deepseek-chat", "deepseek", None, False, True, None),
        ("my-text-model", "openai", None, True, True, "gpt-5.5"),
    ],
)
def test_vision_routing(model, provider, configured, new, history, expected) -> None:
    target = vision_target(
        model, provider, configured=configured, new_images=new, history_images=history
    )
    assert target == expected


def test_no_vision_model_for_a_new_image_is_a_clear_error() -> None:
    with pytest.raises(ImageError, match=r"deepseek-chat cannot read images.*--vision-model"):
        vision_target(
            "deepseek-chat", "deepseek", configured=None, new_images=True, history_images=False
        )


# -- through the engine ----------------------------------------------------------------------------


class Recorder:
    capabilities = ClientCapabilities()

    def __init__(self) -> None:
        self.updates: list[dict] = []

    def send_update(self, params) -> None:
        self.updates.append(params.to_wire()["update"])


async def one_turn(ws: Path, environ: dict, llm: dict, text: str):
    provider = ScriptedProvider(lambda request: ScriptedReply(text="seen"))
    engine = NativeEngine(provider_factory=lambda s: provider, tools=lambda: [], environ=environ)
    channel = Recorder()
    service = SessionService({"native": engine}, channel, flags={"llm": llm})
    session = await service.new_session(NewSessionParams(cwd=str(ws)))
    ask = {"sessionId": session.session_id, "prompt": [{"type": "text", "text": text}]}
    result = await service.prompt(PromptParams.model_validate(ask))
    return result, provider.requests, channel.updates


async def test_engine_detects_images_and_routes(ws: Path) -> None:
    put(ws / "shot.png")
    llm = {"provider": "scripted", "visionModel": "scripted-vision"}
    result, requests, updates = await one_turn(ws, {"HOME": str(home(ws))}, llm, "see shot.png")

    assert result.terminal == "completed"
    assert updates[0] == {"kind": "model_switched", "model": "scripted-vision", "reason": "vision"}
    assert requests[0].model == "scripted-vision"
    assert requests[0].messages[0] == Message("user", [TextPart("see"), ImagePart(url(PNG))])


async def test_engine_honours_auto_image_off(ws: Path) -> None:
    put(ws / "shot.png")
    llm = {"provider": "scripted", "visionModel": "scripted-vision"}
    _, requests, updates = await one_turn(ws, {"CC_AUTO_IMAGE": "0"}, llm, "see shot.png")

    assert "model_switched" not in [u["kind"] for u in updates]
    assert requests[0].model == "scripted"
    assert requests[0].messages[0] == Message("user", [TextPart("see shot.png")])
