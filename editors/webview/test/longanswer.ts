// A long answer for the streaming tests: about 50 KB of the Markdown an agent writes.

/** Headings, paragraphs, lists, code and tables, ending with `end`. */
export function longAnswer(end: string, size = 50_000): string {
  const parts: string[] = [];
  let length = 0;
  for (let i = 1; length < size; i++) {
    const part = [
      `## Step ${i}: the parser's ${i % 2 ? "tokens" : "blocks"}`,
      `The function \`parse_${i}\` reads the input line by line and keeps **what it has seen** so far; when a line starts a new block it closes the open one, as step ${i - 1} did, and hands the block to the renderer.`,
      `- it checks the indentation of line ${i}\n- it looks for a fence or a heading\n- it keeps the *inline* text for later`,
      "```python\n" + `def parse_${i}(lines):\n    blocks = []\n    for n, line in enumerate(lines):\n        if line.startswith("#"):\n            blocks.append(("heading", n))\n    return blocks\n` + "```",
      `| step | lines | blocks |\n|---|---|---|\n| ${i} | ${i * 12} | ${i * 3} |`,
    ].join("\n\n");
    parts.push(part);
    length += part.length + 2;
  }
  return `${parts.join("\n\n")}\n\nThat is all: ${end}`;
}
