// Markdown to DOM: whole (`markdown`) or as it streams (`LiveMarkdown`, which keeps the blocks
// that can no longer change and rebuilds only the last one).
import { append, h, icon, ICONS, type Child } from "./dom";
import { highlight } from "./highlight";
import { parseMarkdown, parseSettled, type Block, type Inline } from "./markdown";
import type { Actions } from "./parts";

export function markdown(source: string, actions: Actions): HTMLElement {
  const root = h("div", { class: "markdown" });
  append(root, parseMarkdown(source).map((b) => block(b, actions)));
  return root;
}

function block(b: Block, actions: Actions): Node {
  switch (b.t) {
    case "p":
      return h("p", {}, inlines(b.c, actions));
    case "h":
      return h(`h${Math.min(b.level + 2, 6)}` as "h3", {}, inlines(b.c, actions));
    case "code":
      return codeBlock(b.text, b.lang, actions);
    case "quote":
      return h("blockquote", {}, b.c.map((x) => block(x, actions)));
    case "list": {
      const items = b.items.map((item) => h("li", {}, item.map((x) => block(x, actions))));
      return b.ordered ? h("ol", { start: b.start !== 1 ? b.start : undefined }, items) : h("ul", {}, items);
    }
    case "table":
      return h(
        "div",
        { class: "table-wrap" },
        h(
          "table",
          {},
          h("thead", {}, h("tr", {}, b.head.map((c) => h("th", {}, inlines(c, actions))))),
          h("tbody", {}, b.rows.map((r) => h("tr", {}, r.map((c) => h("td", {}, inlines(c, actions)))))),
        ),
      );
    case "hr":
      return h("hr");
  }
}

function inlines(list: Inline[], actions: Actions): Child[] {
  return list.map((x) => inline(x, actions));
}

function inline(x: Inline, actions: Actions): Child {
  switch (x.t) {
    case "text":
      return x.v;
    case "code":
      return h("code", {}, x.v);
    case "strong":
    case "em":
    case "del":
      return h(x.t, {}, inlines(x.c, actions));
    case "br":
      return h("br");
    case "link": {
      const a = h("a", { href: x.href, title: x.href }, inlines(x.c, actions));
      a.addEventListener("click", (event) => {
        event.preventDefault();
        if (x.href.startsWith("file:")) actions.openFile(decodeURI(x.href.replace(/^file:\/\//, "")));
        else actions.openLink(x.href);
      });
      return a;
    }
  }
}

export function codeBlock(text: string, lang: string, actions: Actions): HTMLElement {
  const code = h("code", { class: lang ? `lang-${lang}` : undefined });
  for (const token of highlight(text, lang)) {
    code.appendChild(token.cls ? h("span", { class: `tok-${token.cls}` }, token.text) : document.createTextNode(token.text));
  }
  const copy = h("button", { class: "copy", type: "button", "aria-label": "Copy code", title: "Copy" }, icon(ICONS.copy), "Copy");
  copy.addEventListener("click", () => {
    actions.copy(text);
    copy.classList.add("copied");
    copy.lastChild!.textContent = "Copied";
    setTimeout(() => {
      copy.classList.remove("copied");
      copy.lastChild!.textContent = "Copy";
    }, 1500);
  });
  return h("div", { class: "code-block" }, h("div", { class: "code-head" }, h("span", { class: "lang" }, lang || "text"), copy), h("pre", {}, code));
}

/** Markdown that grows at its end: settled blocks stay the nodes they are (a selection in them too). */
export class LiveMarkdown {
  readonly el: HTMLElement = h("div", { class: "markdown" });
  private source = "";
  /** How much of `source` is on screen. */
  private shown = 0;
  /** Characters of `source` in the settled blocks, which are the first children of `el`. */
  private settledChars = 0;
  private tail: Node[] = [];
  private queued = false;

  constructor(private readonly actions: Actions) {}

  update(source: string): void {
    if (source === this.source) return;
    // A text item only grows; one that does not go on from where this one ended starts over.
    // (Comparing the whole prefix at every chunk costs more than all the rendering.)
    const n = this.source.length;
    if (source.length < n || source.slice(Math.max(0, n - 32), n) !== this.source.slice(-32)) this.reset();
    this.source = source;
    // The last block is built again at each render: a long one (a whole file in one fence)
    // is rendered once a frame, however many chunks came, not once a chunk.
    if (source.length - this.settledChars <= LONG_TAIL) this.render();
    else if (!this.queued) {
      this.queued = true;
      requestAnimationFrame(() => {
        this.queued = false;
        this.render();
      });
    }
  }

  private render(): void {
    if (this.shown === this.source.length) return;
    this.shown = this.source.length;
    const rest = parseSettled(this.source.slice(this.settledChars));
    for (const node of this.tail) node.parentNode?.removeChild(node);
    for (const b of rest.blocks.slice(0, rest.settled)) this.el.appendChild(block(b, this.actions));
    this.tail = rest.blocks.slice(rest.settled).map((b) => block(b, this.actions));
    append(this.el, this.tail);
    this.settledChars += rest.offset;
  }

  private reset(): void {
    this.el.replaceChildren();
    this.settledChars = 0;
    this.shown = 0;
    this.tail = [];
  }
}

/** Characters of unsettled text above which the last block is rendered at most once a frame. */
const LONG_TAIL = 4000;
