// A small Markdown parser for streamed assistant text: blocks and inlines as plain data, turned
// into DOM nodes (never HTML strings) by render.ts. An unclosed code fence runs to the end, so a
// half-streamed code block already shows as code.

export type Inline =
  | { t: "text"; v: string }
  | { t: "code"; v: string }
  | { t: "strong" | "em" | "del"; c: Inline[] }
  | { t: "link"; href: string; c: Inline[] }
  | { t: "br" };

export type Block =
  | { t: "p"; c: Inline[] }
  | { t: "h"; level: number; c: Inline[] }
  | { t: "code"; lang: string; text: string }
  | { t: "quote"; c: Block[] }
  | { t: "list"; ordered: boolean; start: number; items: Block[][] }
  | { t: "table"; head: Inline[][]; rows: Inline[][][] }
  | { t: "hr" };

const FENCE = /^ {0,3}(`{3,}|~{3,})\s*([^`\s]*)/;
const HEADING = /^ {0,3}(#{1,6})\s+(.*?)\s*#*\s*$/;
const HR = /^ {0,3}([-*_])(\s*\1){2,}\s*$/;
const LIST_ITEM = /^( {0,3})([-*+]|\d{1,9}[.)])\s+(.*)$/;
const QUOTE = /^ {0,3}>\s?(.*)$/;
const TABLE_SEP = /^\s*\|?\s*:?-{2,}:?\s*(\|\s*:?-{2,}:?\s*)*\|?\s*$/;

export function parseMarkdown(source: string): Block[] {
  return parseBlocks(source.replace(/\r\n?/g, "\n").split("\n"));
}

/**
 * A streamed text's blocks, of which the first `settled` cannot change whatever is appended.
 * A block is settled once the block after it starts on a complete line, or on a line that
 * follows a blank line and starts with a non-space character (a blank line ends any block but a
 * fence, and only an indented line could continue a list after it). `offset` is where the rest
 * starts in `source`; parsing from there gives the same blocks as parsing the whole.
 */
export function parseSettled(source: string): { blocks: Block[]; settled: number; offset: number } {
  const breaks = /\r\n?|\n/g;
  const lineStart = [0];
  while (breaks.exec(source)) lineStart.push(breaks.lastIndex);
  const lines = source.replace(/\r\n?/g, "\n").split("\n");
  const starts: number[] = [];
  const blocks = parseBlocks(lines, starts);
  const last = lines.length - 1;
  const settles = (line: number) => line < last || (!lines[line - 1].trim() && /^\S/.test(lines[line]));
  let settled = starts.length - 1;
  while (settled > 0 && !settles(starts[settled])) settled--;
  return { blocks, settled: Math.max(settled, 0), offset: settled > 0 ? lineStart[starts[settled]] : 0 };
}

/** `starts`, when given, gets the line each top-level block starts on. */
function parseBlocks(lines: string[], starts?: number[]): Block[] {
  const blocks: Block[] = [];
  let i = 0;
  while (i < lines.length) {
    const line = lines[i];
    if (!line.trim()) {
      i++;
      continue;
    }
    starts?.push(i);
    const fence = FENCE.exec(line);
    if (fence) {
      const end = lines.findIndex(
        (l, j) => j > i && l.trim().startsWith(fence[1]) && !l.trim().slice(fence[1].length).trim(),
      );
      const stop = end < 0 ? lines.length : end;
      blocks.push({ t: "code", lang: fence[2].toLowerCase(), text: lines.slice(i + 1, stop).join("\n") });
      i = stop + 1;
      continue;
    }
    const heading = HEADING.exec(line);
    if (heading) {
      blocks.push({ t: "h", level: heading[1].length, c: parseInline(heading[2]) });
      i++;
      continue;
    }
    if (HR.test(line)) {
      blocks.push({ t: "hr" });
      i++;
      continue;
    }
    if (QUOTE.test(line)) {
      const inner: string[] = [];
      while (i < lines.length && QUOTE.test(lines[i])) inner.push(QUOTE.exec(lines[i++])![1]);
      blocks.push({ t: "quote", c: parseBlocks(inner) });
      continue;
    }
    if (LIST_ITEM.test(line)) {
      i = parseList(lines, i, blocks);
      continue;
    }
    if (line.includes("|") && i + 1 < lines.length && TABLE_SEP.test(lines[i + 1])) {
      i = parseTable(lines, i, blocks);
      continue;
    }
    const para: string[] = [];
    while (i < lines.length && lines[i].trim() && !startsBlock(lines[i])) para.push(lines[i++]);
    if (!para.length) para.push(lines[i++]);
    blocks.push({ t: "p", c: parseInline(para.join("\n")) });
  }
  return blocks;
}

function startsBlock(line: string): boolean {
  return FENCE.test(line) || HEADING.test(line) || HR.test(line) || QUOTE.test(line) || LIST_ITEM.test(line);
}

function parseList(lines: string[], start: number, out: Block[]): number {
  const first = LIST_ITEM.exec(lines[start])!;
  const ordered = /\d/.test(first[2]);
  const indent = first[1].length;
  const items: string[][] = [];
  let i = start;
  while (i < lines.length) {
    const m = LIST_ITEM.exec(lines[i]);
    if (m && m[1].length <= indent + 1 && /\d/.test(m[2]) === ordered) {
      items.push([m[3]]);
      i++;
      continue;
    }
    const line = lines[i];
    const continues = line.trim() && (/^\s{2,}/.test(line) || !startsBlock(line));
    const blankThenIndented = !line.trim() && i + 1 < lines.length && /^\s{2,}\S/.test(lines[i + 1]);
    if (!items.length || !(continues || blankThenIndented)) break;
    items[items.length - 1].push(line.replace(/^\s{2,4}/, ""));
    i++;
  }
  out.push({
    t: "list",
    ordered,
    start: ordered ? parseInt(first[2], 10) : 1,
    items: items.map((item) => parseBlocks(item)),
  });
  return i;
}

function splitRow(line: string): string[] {
  const trimmed = line.trim().replace(/^\|/, "").replace(/\|$/, "");
  return trimmed.split(/(?<!\\)\|/).map((cell) => cell.trim().replace(/\\\|/g, "|"));
}

function parseTable(lines: string[], start: number, out: Block[]): number {
  const head = splitRow(lines[start]).map(parseInline);
  let i = start + 2;
  const rows: Inline[][][] = [];
  while (i < lines.length && lines[i].includes("|") && lines[i].trim()) {
    rows.push(splitRow(lines[i++]).map(parseInline));
  }
  out.push({ t: "table", head, rows });
  return i;
}

const SAFE_LINK = /^(https?:|mailto:|file:|#)/i;

export function parseInline(text: string): Inline[] {
  const out: Inline[] = [];
  let buf = "";
  const flush = () => {
    if (buf) out.push({ t: "text", v: buf });
    buf = "";
  };
  let i = 0;
  while (i < text.length) {
    const ch = text[i];
    const rest = text.slice(i);
    if (ch === "\\" && i + 1 < text.length && /[\\`*_{}[\]()#+\-.!|~>]/.test(text[i + 1])) {
      buf += text[i + 1];
      i += 2;
      continue;
    }
    if (ch === "`") {
      const ticks = /^`+/.exec(rest)![0];
      const close = text.indexOf(ticks, i + ticks.length);
      if (close > 0) {
        flush();
        out.push({ t: "code", v: text.slice(i + ticks.length, close).trim() || text.slice(i + ticks.length, close) });
        i = close + ticks.length;
        continue;
      }
    }
    if (ch === "\n") {
      if (/ {2,}$/.test(text.slice(0, i))) {
        buf = buf.trimEnd();
        flush();
        out.push({ t: "br" });
      } else buf += " ";
      i++;
      continue;
    }
    const emph = emphasis(text, i);
    if (emph) {
      flush();
      out.push(emph.node);
      i = emph.end;
      continue;
    }
    if (ch === "[") {
      const link = /^\[([^\]]*)\]\(\s*<?([^\s)>]+)>?(?:\s+"[^"]*")?\s*\)/.exec(rest);
      if (link) {
        flush();
        const label = parseInline(link[1]);
        if (SAFE_LINK.test(link[2])) out.push({ t: "link", href: link[2], c: label });
        else out.push(...label);
        i += link[0].length;
        continue;
      }
    }
    const auto = /^https?:\/\/[^\s<>()]+[^\s<>().,;:!?'"]/.exec(rest);
    if (auto && (i === 0 || /[\s(]/.test(text[i - 1]))) {
      flush();
      out.push({ t: "link", href: auto[0], c: [{ t: "text", v: auto[0] }] });
      i += auto[0].length;
      continue;
    }
    buf += ch;
    i++;
  }
  flush();
  return mergeText(out);
}

function mergeText(list: Inline[]): Inline[] {
  const merged: Inline[] = [];
  for (const node of list) {
    const last = merged[merged.length - 1];
    if (node.t === "text" && last?.t === "text") last.v += node.v;
    else merged.push(node);
  }
  return merged;
}

function emphasis(text: string, i: number): { node: Inline; end: number } | null {
  for (const [mark, t] of [
    ["**", "strong"],
    ["__", "strong"],
    ["~~", "del"],
    ["*", "em"],
    ["_", "em"],
  ] as const) {
    if (!text.startsWith(mark, i)) continue;
    const after = text[i + mark.length];
    if (!after || /\s/.test(after)) continue;
    if (mark[0] === "_" && i > 0 && /\w/.test(text[i - 1])) continue; // snake_case stays text
    let close = text.indexOf(mark, i + mark.length + 1);
    while (close > 0 && (/\s/.test(text[close - 1]) || (mark === "*" && text[close + 1] === "*"))) {
      close = text.indexOf(mark, close + 1);
    }
    if (close < 0) continue;
    if (mark[0] === "_" && /\w/.test(text[close + mark.length] ?? "")) continue;
    return { node: { t, c: parseInline(text.slice(i + mark.length, close)) }, end: close + mark.length };
  }
  return null;
}
