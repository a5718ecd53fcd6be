// The panel's HTML page, with a strict Content Security Policy: scripts only with the page's
// nonce, styles only from the host's resource origin, no inline event handlers, no eval.

export interface PanelPage {
  scriptUri: string;
  styleUri: string;
  /** A fresh random value per page load. */
  nonce: string;
  /** The origin the host serves panel resources from (VS Code: `webview.cspSource`). */
  cspSource: string;
  title?: string;
}

export function contentSecurityPolicy(page: Pick<PanelPage, "nonce" | "cspSource">): string {
  return [
    "default-src 'none'",
    `img-src ${page.cspSource} data: blob:`,
    `style-src ${page.cspSource}`,
    `font-src ${page.cspSource}`,
    `script-src 'nonce-${page.nonce}'`,
  ].join("; ");
}

const ESCAPES: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" };

function attr(value: string): string {
  return value.replace(/[&<>"']/g, (c) => ESCAPES[c]);
}

export function panelHtml(page: PanelPage): string {
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="${attr(contentSecurityPolicy(page))}">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<link rel="stylesheet" href="${attr(page.styleUri)}">
<title>${attr(page.title ?? "agentls")}</title>
</head>
<body>
<div id="app"></div>
<script nonce="${attr(page.nonce)}" src="${attr(page.scriptUri)}"></script>
</body>
</html>
`;
}

/** A nonce from the platform's crypto source (Node or browser). */
export function makeNonce(): string {
  const bytes = new Uint8Array(16);
  globalThis.crypto.getRandomValues(bytes);
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}
