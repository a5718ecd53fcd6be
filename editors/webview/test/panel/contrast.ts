// WCAG contrast of what the panel shows, measured in the page from computed colours: each
// visible text's colour against the background it is painted on (translucent backgrounds
// composited over the ones below). Shared by the panel tests and the code-server e2e tests.

/**
 * Texts in #app below `minimum`, as "class "text" ratio". Runs in the page as
 * `locator("body").evaluate(lowContrast, 4.5)` (self-contained: Playwright sends its source).
 */
export function lowContrast(_body: unknown, minimum: number): string[] {
  type RGBA = [number, number, number, number];
  const probe = document.createElement("span");
  document.body.appendChild(probe);
  const parse = (css: string): RGBA => {
    probe.style.color = "";
    probe.style.color = css;
    const computed = getComputedStyle(probe).color;
    const m = computed.match(/[\d.]+(?:e-?\d+)?/g)?.map(Number) ?? [0, 0, 0, 0];
    // A color-mix() computes to `color(srgb r g b / a)`, its channels from 0 to 1.
    const scale = computed.startsWith("color(") ? 255 : 1;
    return [m[0] * scale, m[1] * scale, m[2] * scale, m[3] ?? 1];
  };
  const over = (top: RGBA, under: RGBA): RGBA => {
    const a = top[3] + under[3] * (1 - top[3]);
    if (!a) return [0, 0, 0, 0];
    const mix = (i: number) => (top[i] * top[3] + under[i] * under[3] * (1 - top[3])) / a;
    return [mix(0), mix(1), mix(2), a];
  };
  const background = (el: Element | null): RGBA => {
    const layers: RGBA[] = [];
    for (let e = el; e; e = e.parentElement) {
      const c = parse(getComputedStyle(e).backgroundColor);
      if (c[3] > 0) layers.push(c);
      if (c[3] >= 1) break;
    }
    return layers.reduceRight<RGBA>((under, top) => over(top, under), [255, 255, 255, 1]);
  };
  const luminance = ([r, g, b]: RGBA) => {
    const lin = (v: number) => ((v /= 255) <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4);
    return 0.2126 * lin(r) + 0.7152 * lin(g) + 0.0722 * lin(b);
  };
  const ratio = (a: RGBA, b: RGBA) => {
    const [hi, lo] = [luminance(a), luminance(b)].sort((x, y) => y - x);
    return (hi + 0.05) / (lo + 0.05);
  };
  const found: string[] = [];
  const walker = document.createTreeWalker(document.getElementById("app")!, NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    const el = node.parentElement!;
    const text = node.textContent!.trim();
    if (!text || !el.checkVisibility?.() || el.closest("[disabled], [aria-hidden=true], option")) continue;
    const box = el.getBoundingClientRect();
    if (!box.width || !box.height) continue;
    const bg = background(el);
    const fg = over(parse(getComputedStyle(el).color), bg);
    const r = ratio(fg, bg);
    if (r < minimum) found.push(`${el.className || el.tagName.toLowerCase()} "${text.slice(0, 30)}" ${r.toFixed(2)}`);
  }
  probe.remove();
  return [...new Set(found)];
}
