"""The embedded model's prompt cache: when it restores, when it saves, and that a reader never
sees half a state file. The real runtime round trip is in test_local_model.py (slow)."""

from __future__ import annotations

from pathlib import Path

from server.providers.local_cache import PromptCache, state_name


class Slots:
    """llama.cpp's slot save/restore as it behaves: a save writes the named file in the folder."""

    def __init__(self, folder: Path, tokens: int = 900, fail: bool = False) -> None:
        self.folder = folder
        self.tokens = tokens
        self.fail = fail
        self.calls: list[tuple[str, str]] = []

    def __call__(self, action: str, filename: str) -> dict | None:
        self.calls.append((action, filename))
        if self.fail:
            return None
        if action == "save":
            (self.folder / filename).write_bytes(b"state" * self.tokens)
            return {"n_saved": self.tokens}
        return {"n_restored": self.tokens}


def cache_with(folder: Path, slots: Slots) -> PromptCache:
    cache = PromptCache(folder, "m.state", "http://127.0.0.1:1", "key")
    cache._slot_action = slots  # type: ignore[method-assign]
    return cache


def test_a_first_process_saves_once_after_its_first_completion(tmp_path: Path) -> None:
    slots = Slots(tmp_path)
    cache = cache_with(tmp_path, slots)
    assert cache.restore() == 0
    cache.after_completion({"cache_n": 0, "prompt_n": 950})
    cache.after_completion({"cache_n": 940, "prompt_n": 30})
    assert [a for a, _ in slots.calls] == ["save"]
    assert [p.name for p in tmp_path.iterdir()] == ["m.state"]


def test_a_restored_state_that_served_the_prompt_is_kept(tmp_path: Path) -> None:
    (tmp_path / "m.state").write_bytes(b"old")
    slots = Slots(tmp_path)
    cache = cache_with(tmp_path, slots)
    assert cache.restore() == 900
    cache.after_completion({"cache_n": 900, "prompt_n": 60})
    assert [a for a, _ in slots.calls] == ["restore"]
    assert (tmp_path / "m.state").read_bytes() == b"old"


def test_a_restored_state_that_no_longer_matches_is_replaced(tmp_path: Path) -> None:
    (tmp_path / "m.state").write_bytes(b"old")
    slots = Slots(tmp_path)
    cache = cache_with(tmp_path, slots)
    cache.restore()
    cache.after_completion({"cache_n": 100, "prompt_n": 850})
    assert [a for a, _ in slots.calls] == ["restore", "save"]
    assert (tmp_path / "m.state").read_bytes().startswith(b"state")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.state"]


def test_a_state_that_does_not_load_is_removed(tmp_path: Path) -> None:
    (tmp_path / "m.state").write_bytes(b"from another build")
    cache = cache_with(tmp_path, Slots(tmp_path, fail=True))
    assert cache.restore() == 0
    assert not (tmp_path / "m.state").exists()


def test_a_failed_save_leaves_no_file(tmp_path: Path) -> None:
    cache = cache_with(tmp_path, Slots(tmp_path, tokens=0))
    assert cache.save() is False
    assert list(tmp_path.iterdir()) == []


def test_completions_without_timings_save_nothing(tmp_path: Path) -> None:
    slots = Slots(tmp_path)
    cache = cache_with(tmp_path, slots)
    cache.after_completion(None)
    assert slots.calls == []


def test_the_state_name_follows_the_model_file_and_the_window(tmp_path: Path) -> None:
    model = tmp_path / "tiny model.gguf"
    model.write_bytes(b"x" * 10)
    name = state_name(model, 8192)
    assert name.endswith(".state") and "/" not in name and " " not in name
    assert "-10-c8192-" in name
    assert state_name(model, 4096) != name
    model.write_bytes(b"x" * 11)
    assert state_name(model, 8192) != name
