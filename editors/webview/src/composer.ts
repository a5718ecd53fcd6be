// The prompt box: text, image attachments (paste, drop, file picker), Enter to send,
// Shift+Enter for a new line. It hands finished prompts to `onSend`.
import type { ContentBlock } from "../../protocol/protocol";
import { h, icon, ICONS } from "./dom";

export const IMAGE_TYPES = ["image/png", "image/jpeg", "image/gif", "image/webp"];
const MAX_IMAGE_BYTES = 10 * 1024 * 1024;

export interface Attachment {
  name: string;
  mimeType: string;
  data: string;
}

export interface ComposerEvents {
  onSend(prompt: ContentBlock[], text: string, images: number): void;
  onCancel(): void;
  onError(message: string): void;
}

export class Composer {
  readonly root: HTMLElement;
  readonly input: HTMLTextAreaElement;
  private readonly attachments: Attachment[] = [];
  private readonly strip: HTMLElement;
  private readonly sendButton: HTMLButtonElement;
  private readonly cancelButton: HTMLButtonElement;
  private readonly file: HTMLInputElement;
  private busy = false;
  private enabled = true;

  constructor(private readonly events: ComposerEvents) {
    this.input = h("textarea", {
      id: "prompt",
      rows: 2,
      "aria-label": "Message to the agent",
      placeholder: "Ask the agent… (Enter to send, Shift+Enter for a new line, Esc to stop)",
    });
    this.strip = h("div", { class: "attachments", "aria-label": "Attached images", role: "list" });
    this.file = h("input", { type: "file", accept: IMAGE_TYPES.join(","), multiple: true, hidden: true, "aria-hidden": "true", tabindex: -1 });
    const attach = h("button", { type: "button", class: "icon-button", id: "attach", "aria-label": "Attach image", title: "Attach image" }, icon(ICONS.attach));
    this.sendButton = h("button", { type: "button", class: "primary", id: "send", "aria-label": "Send" }, icon(ICONS.send), "Send");
    this.cancelButton = h("button", { type: "button", class: "danger", id: "cancel", "aria-label": "Stop the running turn", hidden: true }, icon(ICONS.stop), "Stop");
    this.root = h(
      "footer",
      { class: "composer" },
      this.strip,
      this.input,
      h("div", { class: "composer-actions" }, attach, this.file, h("span", { class: "spacer" }), this.cancelButton, this.sendButton),
    );

    attach.addEventListener("click", () => this.file.click());
    this.file.addEventListener("change", () => {
      void this.addFiles(Array.from(this.file.files ?? []));
      this.file.value = "";
    });
    this.sendButton.addEventListener("click", () => this.send());
    this.cancelButton.addEventListener("click", () => this.events.onCancel());
    this.input.addEventListener("keydown", (event) => {
      if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
        event.preventDefault();
        this.send();
      }
    });
    this.input.addEventListener("input", () => this.autosize());
    this.input.addEventListener("paste", (event) => {
      const files = Array.from(event.clipboardData?.files ?? []).filter((f) => f.type.startsWith("image/"));
      if (!files.length) return;
      event.preventDefault();
      void this.addFiles(files);
    });
    this.root.addEventListener("dragover", (event) => {
      if (!event.dataTransfer?.types.includes("Files")) return;
      event.preventDefault();
      this.root.classList.add("dragging");
    });
    this.root.addEventListener("dragleave", () => this.root.classList.remove("dragging"));
    this.root.addEventListener("drop", (event) => {
      this.root.classList.remove("dragging");
      const files = Array.from(event.dataTransfer?.files ?? []);
      if (!files.length) return;
      event.preventDefault();
      void this.addFiles(files);
    });
  }

  setBusy(busy: boolean): void {
    this.busy = busy;
    this.sendButton.hidden = busy;
    this.cancelButton.hidden = !busy;
    this.root.classList.toggle("busy", busy);
  }

  setEnabled(enabled: boolean): void {
    this.enabled = enabled;
    this.sendButton.disabled = !enabled;
  }

  focus(): void {
    this.input.focus();
  }

  send(): void {
    if (this.busy || !this.enabled) return;
    const text = this.input.value.trim();
    if (!text && !this.attachments.length) return;
    const prompt: ContentBlock[] = [];
    if (text) prompt.push({ type: "text", text });
    for (const a of this.attachments) prompt.push({ type: "image", data: a.data, mimeType: a.mimeType });
    const images = this.attachments.length;
    this.events.onSend(prompt, text, images);
    this.input.value = "";
    this.attachments.length = 0;
    this.renderAttachments();
    this.autosize();
  }

  async addFiles(files: File[]): Promise<void> {
    for (const file of files) {
      if (!IMAGE_TYPES.includes(file.type)) {
        this.events.onError(`${file.name || "That file"} is not an image agentls can send (PNG, JPEG, GIF or WebP).`);
        continue;
      }
      if (file.size > MAX_IMAGE_BYTES) {
        this.events.onError(`${file.name} is larger than 10 MB.`);
        continue;
      }
      this.attachments.push({ name: file.name || "pasted image", mimeType: file.type, data: await base64(file) });
    }
    this.renderAttachments();
  }

  private renderAttachments(): void {
    this.strip.replaceChildren(
      ...this.attachments.map((a, index) => {
        const remove = h("button", { type: "button", class: "icon-button remove", "aria-label": `Remove ${a.name}` }, icon(ICONS.close));
        remove.addEventListener("click", () => {
          this.attachments.splice(index, 1);
          this.renderAttachments();
        });
        return h(
          "div",
          { class: "attachment", role: "listitem" },
          h("img", { src: `data:${a.mimeType};base64,${a.data}`, alt: a.name }),
          remove,
        );
      }),
    );
    this.strip.hidden = !this.attachments.length;
  }

  private autosize(): void {
    this.input.style.height = "auto";
    this.input.style.height = `${Math.min(this.input.scrollHeight, 240)}px`;
  }
}

function base64(file: File): Promise<string> {
  return new Promise((resolve, reject) => {
    const reader = new FileReader();
    reader.onload = () => resolve(String(reader.result).replace(/^data:[^,]*,/, ""));
    reader.onerror = () => reject(reader.error);
    reader.readAsDataURL(file);
  });
}
