"""Whether the local model's answer states only what this turn's tool results show.

A small model fills a gap with something plausible: the worked example's text, a file name it
expects, a line it never read. Before an answer that follows tool calls is shown, the facts it
states are looked up in the evidence (the user's request, the calls and their results):
file names and paths, quoted text, numbers. An answer quoting text that appears only in the
worked examples is refused outright. When the model cannot produce a grounded answer, the user
gets what was found and the advice to use a cloud model, not an invention.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable

CLOUD_HINT = (
    "A cloud model does better at this: set ANTHROPIC_API_KEY or OPENAI_API_KEY "
    "(or run agentls --provider <name>)."
)
_PATH = re.compile(r"(?<![\w/.-])(?:[\w.-]+/)*[\w-]*[A-Za-z_][\w-]+\.[A-Za-z]\w{0,5}(?![\w/])")
_QUOTED = re.compile(r'"([^"\n]{3,})"|`([^`\n]{3,})`|(?<!\w)\'([^\'\n]{3,})\'(?!\w)')
_NUMBER = re.compile(r"(?<![\w.])\d+(?![\w.]*\d)")
_LINE_PREFIX = re.compile(r"^\d+: ", re.MULTILINE)
_LINE_REFERENCE = re.compile(
    r"\blines?[ \t]+(\d+(?:[ \t]*(?:,|and|or|to|-|\u2013)[ \t]*\d+)*)", re.I
)
_WORDS = "two three four five six seven eight nine ten eleven twelve".split()
_NUMBER_WORD = re.compile(rf"\b({'|'.join(_WORDS)})\b", re.IGNORECASE)
_SPACE = re.compile(r"\s+")


def normalize(text: str) -> str:
    return _SPACE.sub(" ", text).strip().lower()


class Evidence:
    """What this turn showed: the request, the calls made and their results, as plain text.

    Numbers are taken from `stated` (the request and the results as the model read them;
    `texts` when not given) with the line numbers of a file's lines set apart: a count must be
    one the results state, or one of `counts` (what can be counted in them); a line number one
    they show."""

    def __init__(
        self,
        texts: Iterable[str],
        *,
        stated: Iterable[str] | None = None,
        counts: Iterable[int] = (),
    ) -> None:
        texts = list(texts)
        said = "\n".join(texts if stated is None else stated)
        self.text = normalize("\n".join(texts))
        self.lines = {int(n.rstrip(": ")) for n in _LINE_PREFIX.findall(said)}
        self.numbers = {int(n) for n in _NUMBER.findall(_LINE_PREFIX.sub("", said))}
        self.numbers |= set(counts)
        self.totals = {int(n) for n in re.findall(r"\b(\d+) lines\b", said)}
        for reference in _LINE_REFERENCE.findall(said):
            self.lines |= {int(n) for n in re.findall(r"\d+", reference)}

    def has(self, fact: str) -> bool:
        return normalize(fact) in self.text

    def has_count(self, number: int) -> bool:
        """A number stated or counted, or a file's lines but one (a header, a closing line)."""
        return number in self.numbers or number + 1 in self.totals

    def has_line(self, number: int) -> bool:
        return number in self.lines or number in self.numbers


def example_phrases(shots: list[dict[str, str]]) -> set[str]:
    """The distinctive text of the worked examples: their file names, the lines of their
    results and what their answers quote."""
    phrases: set[str] = set()
    for turn in shots:
        if turn["role"] == "assistant":
            phrases.update(_step_values(turn["content"]))
        content = re.sub(r"^\d+: ", "", turn["content"], flags=re.MULTILINE)
        phrases.update(_PATH.findall(content))
        phrases.update(q for groups in _QUOTED.findall(content) for q in groups if q)
        if turn["role"] == "user" and content.startswith("<tool_response>"):
            phrases.update(line.strip() for line in content.splitlines()[1:-1])
    return {p for p in phrases if len(p) >= 6 and not p.startswith(("<", "{"))}


def _step_values(content: str) -> list[str]:
    """What a step of the examples fills in (names, texts, paths), its answer aside."""
    try:
        step = json.loads(content)
    except ValueError:
        return []
    if not isinstance(step, dict):
        return []
    return [v for k, v in step.items() if k not in ("task", "answer") and isinstance(v, str)]


def copied_example(answer: str, evidence: Evidence, phrases: set[str]) -> str | None:
    """Text of the worked examples that the answer repeats and the evidence does not hold."""
    lowered = normalize(answer)
    for phrase in sorted(phrases):
        if normalize(phrase) in lowered and not evidence.has(phrase):
            return phrase
    return None


def unfounded(answer: str, evidence: Evidence) -> list[str]:
    """The facts the answer states that the evidence does not show."""
    facts = _PATH.findall(answer)
    facts += [q for groups in _QUOTED.findall(answer) for q in groups if q]
    missing = [f.strip("./") for f in facts if f.strip("./") and not evidence.has(f.strip("./"))]
    lines: list[int] = []
    for reference in _LINE_REFERENCE.findall(answer):
        lines += [int(n) for n in re.findall(r"\d+", reference)]
    missing += [str(n) for n in lines if n > 1 and not evidence.has_line(n)]
    rest = _NUMBER.findall(_LINE_REFERENCE.sub(" ", answer))
    rest += [str(_WORDS.index(w.lower()) + 2) for w in _NUMBER_WORD.findall(answer)]
    missing += [n for n in rest if int(n) > 1 and not evidence.has_count(int(n))]
    return list(dict.fromkeys(missing))


def fallback(found: list[str]) -> str:
    """The answer given instead of an unfounded one."""
    if not found:
        return f"I could not find this out with the tools I have. {CLOUD_HINT}"
    return f"I am not sure of the answer. What I found: {'; '.join(found)}. {CLOUD_HINT}"
