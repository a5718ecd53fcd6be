import assert from "node:assert/strict";
import { test } from "node:test";
import { hunks, lineDiff } from "../../src/diff";
import { highlight } from "../../src/highlight";
import { parseInline, parseMarkdown, parseSettled } from "../../src/markdown";

test("blocks: heading, paragraph, list, code, quote, table, rule", () => {
  const md = "# Title\n\nSome *text* and `code`.\n\n- one\n- two\n\n```py\ndef f():\n    return 1\n```\n\n> quoted\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n---";
  assert.deepEqual(parseMarkdown(md), [
    { t: "h", level: 1, c: [{ t: "text", v: "Title" }] },
    { t: "p", c: [{ t: "text", v: "Some " }, { t: "em", c: [{ t: "text", v: "text" }] }, { t: "text", v: " and " }, { t: "code", v: "code" }, { t: "text", v: "." }] },
    { t: "list", ordered: false, start: 1, items: [[{ t: "p", c: [{ t: "text", v: "one" }] }], [{ t: "p", c: [{ t: "text", v: "two" }] }]] },
    { t: "code", lang: "py", text: "def f():\n    return 1" },
    { t: "quote", c: [{ t: "p", c: [{ t: "text", v: "quoted" }] }] },
    { t: "table", head: [[{ t: "text", v: "a" }], [{ t: "text", v: "b" }]], rows: [[[{ t: "text", v: "1" }], [{ t: "text", v: "2" }]]] },
    { t: "hr" },
  ]);
});

test("an unclosed fence (mid-stream) is already a code block", () => {
  assert.deepEqual(parseMarkdown("Look:\n```ts\nconst a = 1;"), [
    { t: "p", c: [{ t: "text", v: "Look:" }] },
    { t: "code", lang: "ts", text: "const a = 1;" },
  ]);
});

test("ordered lists keep their start; nested content stays in the item", () => {
  const [list] = parseMarkdown("3. first\n   more\n4. second");
  assert.deepEqual(list, {
    t: "list", ordered: true, start: 3,
    items: [[{ t: "p", c: [{ t: "text", v: "first more" }] }], [{ t: "p", c: [{ t: "text", v: "second" }] }]],
  });
});

test("inline: strong, links, autolinks; unsafe links become text; snake_case stays", () => {
  assert.deepEqual(parseInline("**bold** [docs](https://x.dev) see https://a.b/c. [x](javascript:alert(1)) my_var_name"), [
    { t: "strong", c: [{ t: "text", v: "bold" }] },
    { t: "text", v: " " },
    { t: "link", href: "https://x.dev", c: [{ t: "text", v: "docs" }] },
    { t: "text", v: " see " },
    { t: "link", href: "https://a.b/c", c: [{ t: "text", v: "https://a.b/c" }] },
    { t: "text", v: ". x) my_var_name" },
  ]);
});

test("raw HTML is text, never markup", () => {
  assert.deepEqual(parseMarkdown("<img src=x onerror=alert(1)>"), [{ t: "p", c: [{ t: "text", v: "<img src=x onerror=alert(1)>" }] }]);
});

test("highlight: keywords, strings, comments, numbers", () => {
  assert.deepEqual(highlight('def f(x):  # hi\n    return "s" + 42', "python"), [
    { text: "def", cls: "kw" },
    { text: " f(x):  " },
    { text: "# hi", cls: "com" },
    { text: "\n    " },
    { text: "return", cls: "kw" },
    { text: " " },
    { text: '"s"', cls: "str" },
    { text: " + " },
    { text: "42", cls: "num" },
  ]);
  assert.deepEqual(highlight("plain words", "unknownlang"), [{ text: "plain words" }]);
});

test("line diff and hunks", () => {
  const lines = lineDiff("a\nb\nc\nd\ne\nf\ng\nh\n", "a\nb\nc\nd\nE\nf\ng\nh\n");
  assert.deepEqual(hunks(lines, 1), [
    { op: "gap", skipped: 3 },
    { op: " ", text: "d" },
    { op: "-", text: "e" },
    { op: "+", text: "E" },
    { op: " ", text: "f" },
    { op: "gap", skipped: 2 },
  ]);
  assert.deepEqual(lineDiff(null, "new\n"), [{ op: "+", text: "new" }]);
});

test("a streamed text's settled blocks are the whole text's, and parsing on from them gives the rest", () => {
  const doc = [
    "# Title\n\npara one\n***\n\n***x not a rule\n\n- a\n\n  b continues a\n- c\n\nd",
    "a|b\n---\n|1|2|\n\n```\n\n# not a heading\n```\n\n- x\n  ```\n\ny\n```\n\n> q\n\n  indented\r\n\r\nend",
  ].join("\n\n");
  const whole = parseMarkdown(doc);
  for (let n = 0; n <= doc.length; n++) {
    const prefix = doc.slice(0, n);
    const { blocks, settled, offset } = parseSettled(prefix);
    assert.deepEqual(blocks, parseMarkdown(prefix), `the same parse at ${n}`);
    assert.deepEqual(blocks.slice(0, settled), whole.slice(0, settled), `settled blocks at ${n}`);
    assert.deepEqual(parseMarkdown(doc.slice(offset)), whole.slice(settled), `the rest from ${offset} at ${n}`);
  }
  assert.equal(parseSettled("one\n\ntwo").settled, 1, "a paragraph after a blank line settles the one before");
  assert.equal(parseSettled("- one\n\n  two").settled, 0, "an indented line may continue the list");
});
