"""What agentls knows about models, per model id: context window, max output, vision, thinking
family and list prices (USD per million tokens). Unknown ids get safe defaults (see `describe`).
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Literal

from server.providers.messages import Usage

if TYPE_CHECKING:
    from protocol.methods import ModelInfo

log = logging.getLogger(__name__)

Family = Literal["adaptive", "legacy", "none"]

# claude-opus-4-6, claude-sonnet-4-5-20250929, claude-opus-4-20250514 (a date is not a minor)
_NEW_STYLE = re.compile(r"claude-(opus|sonnet|haiku)-(\d+)(?:-(\d{1,2}))?(?![0-9])")
# claude-3-5-sonnet-20241022, claude-3-opus-20240229
_OLD_STYLE = re.compile(r"claude-(\d+)(?:-(\d{1,2}))?-(opus|sonnet|haiku)")


@dataclass(frozen=True)
class Price:
    input: float
    output: float
    cache_read: float
    cache_write: float


def _claude(input_price: float, output_price: float) -> Price:
    return Price(input_price, output_price, input_price * 0.1, input_price * 1.25)


def _price(input_price: float, output_price: float, cached: float | None = None) -> Price:
    return Price(input_price, output_price, cached if cached is not None else input_price, 0.0)


@dataclass(frozen=True)
class ModelEntry:
    id: str
    provider: str
    context_window: int
    max_output: int = 8192
    vision: bool = True
    price: Price | None = None
    known: bool = True
    temperature: float | None = None
    """The only temperature the model takes (None: any)."""
    efforts: tuple[str, ...] = ()
    """The `output_config.effort` levels an adaptive-thinking model takes."""
    reasons: bool = False
    """Thinks on its own, with no switch to turn on (o-series, gpt-5, DeepSeek reasoner, Kimi
    thinking models)."""

    @property
    def thinking(self) -> str:
        """`adaptive`, `legacy` or `none` (see `server.providers.thinking`)."""
        return family(self.id)


_OPUS_NEW, _OPUS_OLD = _claude(5, 25), _claude(15, 75)
_SONNET, _HAIKU = _claude(3, 15), _claude(1, 5)
_MAX = ("low", "medium", "high", "max")
_XHIGH = ("low", "medium", "high", "xhigh", "max")

CATALOG: tuple[ModelEntry, ...] = (
    ModelEntry("claude-opus-4-8", "anthropic", 200_000, 64_000, price=_OPUS_NEW, efforts=_XHIGH),
    ModelEntry("claude-opus-4-7", "anthropic", 200_000, 64_000, price=_OPUS_NEW, efforts=_XHIGH),
    ModelEntry("claude-opus-4-6", "anthropic", 200_000, 64_000, price=_OPUS_NEW, efforts=_MAX),
    ModelEntry("claude-opus-4-5", "anthropic", 200_000, 64_000, price=_OPUS_NEW),
    ModelEntry("claude-opus-4-1", "anthropic", 200_000, 32_000, price=_OPUS_OLD),
    ModelEntry("claude-opus-4-0", "anthropic", 200_000, 32_000, price=_OPUS_OLD),
    ModelEntry("claude-sonnet-4-6", "anthropic", 200_000, 64_000, price=_SONNET, efforts=_MAX),
    ModelEntry("claude-sonnet-4-5", "anthropic", 200_000, 64_000, price=_SONNET),
    ModelEntry("claude-sonnet-4-0", "anthropic", 200_000, 64_000, price=_SONNET),
    ModelEntry("claude-haiku-4-5", "anthropic", 200_000, 64_000, price=_HAIKU),
    ModelEntry("claude-3-7-sonnet", "anthropic", 200_000, 64_000, price=_SONNET),
    ModelEntry("claude-3-5-haiku", "anthropic", 200_000, 8_192, price=_claude(0.8, 4)),
    ModelEntry("gpt-5.5", "openai", 400_000, 128_000, reasons=True),
    ModelEntry("gpt-5.4-mini", "openai", 400_000, 128_000, reasons=True),
    ModelEntry("gpt-5", "openai", 400_000, 128_000, price=_price(1.25, 10, 0.125), reasons=True),
    ModelEntry(
        "gpt-5-mini", "openai", 400_000, 128_000, price=_price(0.25, 2, 0.025), reasons=True
    ),
    ModelEntry("gpt-4.1", "openai", 1_047_576, 32_768, price=_price(2, 8, 0.5)),
    ModelEntry("gpt-4o", "openai", 128_000, 16_384, price=_price(2.5, 10, 1.25)),
    ModelEntry("o3", "openai", 200_000, 100_000, price=_price(2, 8, 0.5), reasons=True),
    ModelEntry(
        "o3-mini", "openai", 200_000, 100_000, vision=False, price=_price(1.1, 4.4), reasons=True
    ),
    ModelEntry("o4-mini", "openai", 200_000, 100_000, price=_price(1.1, 4.4, 0.275), reasons=True),
    ModelEntry("deepseek-chat", "deepseek", 128_000, 8_192, False, _price(0.28, 0.42, 0.028)),
    ModelEntry(
        "deepseek-reasoner",
        "deepseek",
        128_000,
        64_000,
        False,
        _price(0.28, 0.42, 0.028),
        reasons=True,
    ),
    ModelEntry("doubao-seed-1-6-250615", "volcengine", 256_000, 32_768),
    ModelEntry("doubao-1-5-pro-32k-250115", "volcengine", 32_768, 12_288, vision=False),
    ModelEntry("doubao-seed-1-6-vision-250815", "volcengine", 256_000, 32_768),
    ModelEntry("qwen-plus", "qwen", 131_072, 8_192, vision=False),
    ModelEntry("qwen-max", "qwen", 32_768, 8_192, vision=False),
    ModelEntry("qwen3-coder-plus", "qwen", 1_000_000, 65_536, vision=False),
    ModelEntry("qwen-vl-max", "qwen", 131_072, 8_192),
    ModelEntry("kimi-k2-0905-preview", "moonshot", 262_144, 16_384, vision=False),
    ModelEntry("kimi-k3", "moonshot", 262_144, 32_768, vision=False, temperature=1.0, reasons=True),
    ModelEntry(
        "kimi-k2.6", "moonshot", 262_144, 32_768, vision=False, temperature=1.0, reasons=True
    ),
    ModelEntry("kimi-k2.5", "moonshot", 262_144, 32_768, temperature=1.0, reasons=True),
    ModelEntry(
        "kimi-k2-thinking", "moonshot", 262_144, 32_768, vision=False, temperature=1.0, reasons=True
    ),
    ModelEntry(
        "kimi-k2-thinking-turbo", "moonshot", 262_144, 32_768, vision=False, temperature=1.0
    ),
    ModelEntry("moonshot-v1-32k", "moonshot", 32_768, 8_192, vision=False),
    ModelEntry("moonshot-v1-32k-vision-preview", "moonshot", 32_768, 8_192),
    ModelEntry(
        "anthropic/claude-sonnet-4.6", "openrouter", 200_000, 64_000, price=_SONNET, efforts=_MAX
    ),
    ModelEntry("openai/gpt-5.5", "openrouter", 400_000, 128_000, reasons=True),
    ModelEntry("deepseek/deepseek-chat", "openrouter", 128_000, 8_192, vision=False),
    ModelEntry("llama3.2", "ollama", 131_072, 4_096, vision=False),
    ModelEntry("qwen2.5-coder", "ollama", 32_768, 4_096, vision=False),
    ModelEntry("llava", "ollama", 32_768, 4_096),
    # The trained window: the provider fits each call into the smaller window it runs with
    # (`contextWindow`, 8192), so compaction must not count against that one.
    ModelEntry("qwen2.5-coder-1.5b", "local", 32_768, 1_024, vision=False),
    ModelEntry("scripted", "scripted", 100_000, vision=False),
)

_DATED = re.compile(r"-(?:\d{6,8}|\d{4}-\d{2}-\d{2}|latest)$")

VISION_DEFAULTS = {
    "anthropic": "claude-sonnet-4-6",
    "openai": "gpt-5.5",
    "volcengine": "doubao-seed-1-6-vision-250815",
    "qwen": "qwen-vl-max",
    "moonshot": "moonshot-v1-32k-vision-preview",
    "openrouter": "anthropic/claude-sonnet-4.6",
    "ollama": "llava",
}
"""The model an image turn moves to when the session's model cannot read images."""

# Unknown ids: Claude models all read images and have 200k windows; for anything else assume
# a text-only model with a modest window, so images are routed and compaction starts early.
_UNKNOWN_CLAUDE = ModelEntry("", "", 200_000, 8_192, vision=True, known=False)
_UNKNOWN = ModelEntry("", "", 128_000, 4_096, vision=False, known=False)
_noted: set[str] = set()


def normalize(model_id: str) -> str:
    """`anthropic/claude-opus-4.6`, `claude-opus-4-6` and `Claude-Opus-4.6` name the same model;
    an Ollama tag (`llava:13b`) is dropped."""
    if not model_id:
        return model_id
    return model_id.lower().split("/")[-1].split(":")[0].replace(".", "-")


_BY_KEY: dict[str, ModelEntry] = {}
for _entry in CATALOG:
    _BY_KEY.setdefault(normalize(_entry.id), _entry)


def lookup(model_id: str) -> ModelEntry | None:
    """The catalogue entry, matching dated ids to their family: `claude-sonnet-4-5-20250929`,
    `claude-sonnet-4-20250514` (the 4.0 family), `gpt-4o-2024-08-06`, `claude-3-7-sonnet-latest`."""
    key = normalize(model_id)
    if not key:
        return None
    undated = _DATED.sub("", key)
    for candidate in (key, undated, undated + "-0"):
        if candidate in _BY_KEY:
            return _BY_KEY[candidate]
    return None


def describe(model_id: str, provider: str = "") -> ModelEntry:
    """The entry for `model_id`, or safe defaults for an unknown id (noted once at debug level)."""
    entry = lookup(model_id)
    if entry is not None:
        return entry
    if model_id not in _noted:
        _noted.add(model_id)
        log.debug("model %r is not in the catalogue; using default limits", model_id)
    base = _UNKNOWN_CLAUDE if normalize(model_id).startswith("claude") else _UNKNOWN
    return replace(base, id=model_id, provider=provider)


def reasons(model_id: str) -> bool:
    entry = lookup(model_id)
    return entry is not None and entry.reasons


def fixed_temperature(model_id: str) -> float | None:
    """The one temperature a model accepts (Kimi thinking models refuse any but 1)."""
    entry = lookup(model_id)
    return entry.temperature if entry is not None else None


def efforts(model_id: str) -> tuple[str, ...]:
    """Effort levels the model takes; an adaptive model the catalogue does not list is assumed
    to take low, medium, high and max (xhigh is newer than max)."""
    entry = lookup(model_id)
    return entry.efforts if entry is not None and entry.efforts else _MAX


def vision_default(provider: str) -> str | None:
    return VISION_DEFAULTS.get(provider)


def cost_usd(model_id: str, usage: Usage) -> float:
    """List-price cost of `usage`; 0 when the model's price is unknown."""
    price = describe(model_id).price
    if price is None:
        return 0.0
    total = (
        usage.input_tokens * price.input
        + usage.output_tokens * price.output
        + usage.cache_read_tokens * price.cache_read
        + usage.cache_write_tokens * price.cache_write
    )
    return total / 1_000_000


def info(entry: ModelEntry) -> ModelInfo:
    from protocol.methods import ModelInfo  # wire models stay off the CLI's startup path

    return ModelInfo(
        model_id=entry.id,
        name=entry.id,
        provider=entry.provider,
        context_window=entry.context_window,
        vision=entry.vision,
    )


def models_for(provider: str | None, *, current: str | None = None) -> list[ModelInfo]:
    from protocol.methods import ModelInfo

    models = [info(m) for m in CATALOG if provider is None or m.provider == provider]
    if current and not any(m.model_id == current for m in models):
        models.insert(0, ModelInfo(model_id=current, name=current, provider=provider or ""))
    return models


def family(model_id: str) -> Family:
    """The thinking family of a model id, given with dashes or dots, with or without a prefix."""
    model = normalize(model_id or "")
    if match := _NEW_STYLE.search(model):
        name, major, minor = match[1], int(match[2]), int(match[3] or 0)
    elif match := _OLD_STYLE.search(model):
        major, minor, name = int(match[1]), int(match[2] or 0), match[3]
    else:
        return "none"
    if name == "haiku" and (major, minor) < (4, 5):
        return "none"
    return "adaptive" if (major, minor) >= (4, 6) else "legacy"
