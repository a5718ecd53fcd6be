// DOM building without HTML strings: everything the agent or user wrote becomes text nodes.

type Attrs = Record<string, string | boolean | number | undefined | null>;
export type Child = Node | string | null | undefined | false;

export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs: Attrs = {},
  ...children: (Child | Child[])[]
): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  setAttrs(el, attrs);
  append(el, children);
  return el;
}

export function setAttrs(el: Element, attrs: Attrs): void {
  for (const [key, value] of Object.entries(attrs)) {
    if (value === undefined || value === null || value === false) continue;
    if (key === "class") el.setAttribute("class", String(value));
    else el.setAttribute(key, value === true ? "" : String(value));
  }
}

export function append(el: Node, children: (Child | Child[])[]): void {
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    el.appendChild(typeof child === "string" ? document.createTextNode(child) : child);
  }
}

const SVG = "http://www.w3.org/2000/svg";

/** A 16×16 stroke icon from one or more path strings. */
export function icon(paths: string[], label?: string): SVGSVGElement {
  const svg = document.createElementNS(SVG, "svg");
  svg.setAttribute("viewBox", "0 0 16 16");
  svg.setAttribute("class", "icon");
  if (label) {
    svg.setAttribute("role", "img");
    svg.setAttribute("aria-label", label);
  } else svg.setAttribute("aria-hidden", "true");
  for (const d of paths) {
    const path = document.createElementNS(SVG, "path");
    path.setAttribute("d", d);
    svg.appendChild(path);
  }
  return svg;
}

export const ICONS: Record<string, string[]> = {
  read: ["M4 1.5h5l3 3v10H4z", "M9 1.5v3h3", "M6 8h4M6 10.5h4"],
  edit: ["M10.5 2.5l3 3L6 13H3v-3z", "M9 4l3 3"],
  delete: ["M3 4h10", "M6 4V2.5h4V4", "M4.5 4l.7 9.5h5.6l.7-9.5"],
  move: ["M2 8h11", "M9.5 4.5L13 8l-3.5 3.5"],
  search: ["M7 2.5a4.5 4.5 0 1 1 0 9 4.5 4.5 0 0 1 0-9z", "M10.3 10.3L14 14"],
  execute: ["M2 3h12v10H2z", "M4.5 6l2 2-2 2", "M8 10.5h3.5"],
  fetch: ["M8 2a6 6 0 1 1 0 12A6 6 0 0 1 8 2z", "M2 8h12", "M8 2c2 2 2 10 0 12M8 2c-2 2-2 10 0 12"],
  think: ["M8 1.8a4.2 4.2 0 0 0-2.5 7.6V11h5V9.4A4.2 4.2 0 0 0 8 1.8z", "M6 13h4M6.8 14.7h2.4"],
  other: ["M8 5.5a2.5 2.5 0 1 1 0 5 2.5 2.5 0 0 1 0-5z", "M8 1v2M8 13v2M1 8h2M13 8h2M3 3l1.4 1.4M11.6 11.6L13 13M3 13l1.4-1.4M11.6 4.4L13 3"],
  agent: ["M5 4h6v8H5z", "M8 1.5V4", "M3 7h2M11 7h2", "M6.5 7h.01M9.5 7h.01"],
  send: ["M2 8l12-5.5L10 14l-2-4.5z", "M8 9.5l6-7"],
  stop: ["M4 4h8v8H4z"],
  plus: ["M8 3v10M3 8h10"],
  history: ["M2.5 8a5.5 5.5 0 1 0 1.6-3.9", "M2.5 2.5v2.3h2.3", "M8 5v3.2l2 1.3"],
  attach: ["M11 4.5l-5 5a1.4 1.4 0 0 0 2 2l5.5-5.5a2.8 2.8 0 0 0-4-4L4 7.5a4.2 4.2 0 0 0 6 6l4-4"],
  copy: ["M5 5h8v9H5z", "M3 11V2h8"],
  close: ["M4 4l8 8M12 4l-8 8"],
  image: ["M2 3h12v10H2z", "M2 11l3.5-3.5 3 3 2-2L14 12", "M10.5 5.5h.01"],
};
