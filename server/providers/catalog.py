"""What agentls knows about models: context window and vision, per model id."""

from __future__ import annotations

from dataclasses import dataclass

from protocol.methods import ModelInfo


@dataclass(frozen=True)
class ModelEntry:
    id: str
    provider: str
    context_window: int
    vision: bool = True


CATALOG: tuple[ModelEntry, ...] = (
    ModelEntry("claude-opus-4-8", "anthropic", 200_000),
    ModelEntry("claude-sonnet-4-6", "anthropic", 200_000),
    ModelEntry("claude-haiku-4-5", "anthropic", 200_000),
    ModelEntry("gpt-5.5", "openai", 400_000),
    ModelEntry("gpt-5.4-mini", "openai", 400_000),
    ModelEntry("gpt-4.1", "openai", 1_047_576),
    ModelEntry("scripted", "scripted", 100_000, vision=False),
)


def normalize(model_id: str) -> str:
    """`anthropic/claude-opus-4.6` and `claude-opus-4-6` name the same model."""
    return model_id.lower().split("/")[-1].replace(".", "-") if model_id else model_id


def lookup(model_id: str) -> ModelEntry | None:
    key = normalize(model_id)
    return next((m for m in CATALOG if normalize(m.id) == key), None)


def info(entry: ModelEntry) -> ModelInfo:
    return ModelInfo(
        model_id=entry.id,
        name=entry.id,
        provider=entry.provider,
        context_window=entry.context_window,
        vision=entry.vision,
    )


def models_for(provider: str | None, *, current: str | None = None) -> list[ModelInfo]:
    models = [info(m) for m in CATALOG if provider is None or m.provider == provider]
    if current and not any(m.model_id == current for m in models):
        models.insert(0, ModelInfo(model_id=current, name=current, provider=provider or ""))
    return models
