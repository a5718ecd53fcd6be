// The first-run card: no API key and no local model, so no session. Says so in words and offers
// what the host can set up; the server's own text (command-line advice) stays under "Details".
import { h } from "./dom";
import type { SetupWay } from "./messages";

const WAYS: Record<SetupWay, { label: string; hint: string }> = {
  key: { label: "Enter an API key…", hint: "Anthropic, OpenAI, OpenRouter and others; the key is kept in the editor's secret storage." },
  local: { label: "Use the embedded local model", hint: "Runs on this computer, no account needed: about 1.1 GB to download once, 2 GB of memory, slower and weaker than a cloud model." },
};

export function setupCard(setup: { detail: string; offers: SetupWay[] }, choose: (how: SetupWay) => void): HTMLElement {
  const offers = setup.offers.map((how) => {
    const button = h("button", { type: "button", class: how === "key" ? "primary" : "secondary", "data-setup": how }, WAYS[how].label);
    button.addEventListener("click", () => choose(how));
    return h("div", { class: "setup-way" }, button, h("p", { class: "hint" }, WAYS[how].hint));
  });
  return h(
    "section",
    { class: "setup", role: "region", "aria-label": "Set up a model" },
    h("h3", {}, "Choose how agentls talks to a model"),
    h(
      "p",
      { class: "setup-text" },
      "agentls needs a model to talk to, and none is set up here yet: no API key was found and the embedded local model is not installed.",
    ),
    offers.length ? offers : h("p", { class: "hint" }, "Set an API key (for example ANTHROPIC_API_KEY) in the environment the editor starts agentls in, then restart agentls."),
    h("details", { class: "setup-detail" }, h("summary", {}, "Details"), h("p", {}, setup.detail)),
  );
}
