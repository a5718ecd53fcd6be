// The prompt box: text, image attachments (paste, drop, file picker), context chips (what the
// host attaches, `@` mentions, the active editor), Enter to send, Shift+Enter for a new line.
// It hands finished prompts to `onSend`.
import type { ContentBlock } from "../../protocol/protocol";
import { chipLabel, chipView, sameChip } from "./chips";
import { h, icon, ICONS } from "./dom";
import { mentionAt, MentionMenu } from "./mentionmenu";
import type { ContextBlock, MentionItem } from "./messages";

export const IMAGE_TYPES = ["image/png", "image/jpeg", "image/gif", "image/webp"];
const MAX_IMAGE_BYTES = 10 * 1024 * 1024;

export interface Attachment {
  name: string;
  mimeType: string;
  data: string;
}

export interface ComposerEvents {
  /** `context`: the attached chips' labels, in the prompt's order. */
  onSend(prompt: ContentBlock[], text: string, images: number, context: string[]): void;
  onCancel(): void;
  onError(message: string): void;
  onMentionQuery(query: string): void;
  onMention(item: MentionItem): void;
}

export class Composer {
  readonly root: HTMLElement;
  readonly input: HTMLTextAreaElement;
  private readonly attachments: Attachment[] = [];
  private readonly strip: HTMLElement;
  private readonly chipStrip: HTMLElement;
  private readonly chips: ContextBlock[] = [];
  /** The active editor's chip, unless the user removed it (until the editor's file or selection changes). */
  private active?: { block: ContextBlock; removed: boolean };
  private readonly mentions: MentionMenu;
  private mentionTimer: ReturnType<typeof setTimeout> | undefined;
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
    this.chipStrip = h("div", { class: "chips", id: "context-chips", "aria-label": "Attached context", role: "list", hidden: true });
    this.mentions = new MentionMenu((item) => {
      this.dropMentionText();
      this.events.onMention(item);
    });
    this.file = h("input", { type: "file", accept: IMAGE_TYPES.join(","), multiple: true, hidden: true, "aria-hidden": "true", tabindex: -1 });
    const attach = h("button", { type: "button", class: "icon-button", id: "attach", "aria-label": "Attach image", title: "Attach image" }, icon(ICONS.attach));
    this.sendButton = h("button", { type: "button", class: "primary", id: "send", "aria-label": "Send" }, icon(ICONS.send), "Send");
    this.cancelButton = h("button", { type: "button", class: "danger", id: "cancel", "aria-label": "Stop the running turn", hidden: true }, icon(ICONS.stop), "Stop");
    this.root = h(
      "footer",
      { class: "composer" },
      this.strip,
      this.chipStrip,
      this.mentions.root,
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
      if (!event.isComposing && this.mentions.key(event)) {
        event.preventDefault();
        event.stopPropagation();
        return;
      }
      if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
        event.preventDefault();
        this.send();
      }
    });
    this.input.addEventListener("input", () => {
      this.autosize();
      this.findMention();
    });
    this.input.addEventListener("blur", () => this.mentions.close());
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
    // The active editor alone is no prompt: something the user wrote or attached is.
    if (!text && !this.attachments.length && !this.chips.length) return;
    const context = [...(this.active && !this.active.removed ? [this.active.block] : []), ...this.chips];
    const prompt: ContentBlock[] = [];
    if (text) prompt.push({ type: "text", text });
    prompt.push(...context);
    for (const a of this.attachments) prompt.push({ type: "image", data: a.data, mimeType: a.mimeType });
    const images = this.attachments.length;
    this.events.onSend(prompt, text, images, context.map(chipLabel));
    this.input.value = "";
    this.attachments.length = 0;
    this.chips.length = 0;
    this.mentions.close();
    this.renderAttachments();
    this.renderChips();
    this.autosize();
  }

  /** Chips the host attached; `text` goes into the input; `send` sends now (if it can). */
  attach(blocks: ContextBlock[], text?: string, send?: boolean): void {
    for (const block of blocks ?? []) {
      const same = this.chips.findIndex((c) => sameChip(c, block));
      if (same >= 0) this.chips[same] = block;
      else this.chips.push(block);
    }
    if (text) this.input.value = this.input.value.trim() ? `${this.input.value.trimEnd()}\n${text}` : text;
    this.renderChips();
    this.autosize();
    if (send) this.send();
    this.focus();
  }

  /** The active editor's chip (or none); a chip the user removed stays away while it is the same. */
  setActiveEditor(block: ContextBlock | undefined): void {
    const removed = !!block && !!this.active?.removed && sameChip(this.active.block, block);
    this.active = block ? { block, removed } : undefined;
    this.renderChips();
  }

  /** The host's answer to an `@` query. */
  showMentions(query: string, items: MentionItem[]): void {
    this.mentions.answer(query, items ?? []);
  }

  /** The `@word` at the caret is replaced by the pick's chip (the host sends it). */
  private findMention(): void {
    clearTimeout(this.mentionTimer);
    const found = mentionAt(this.input.value, this.input.selectionStart ?? this.input.value.length);
    if (!found) return this.mentions.close();
    this.mentions.expect(found.query);
    this.mentionTimer = setTimeout(() => this.events.onMentionQuery(found.query), 80);
  }

  /** Removes the `@word` before the caret: the chip takes its place. */
  private dropMentionText(): void {
    const caret = this.input.selectionStart ?? this.input.value.length;
    const found = mentionAt(this.input.value, caret);
    if (!found) return;
    this.input.value = this.input.value.slice(0, found.start) + this.input.value.slice(caret);
    this.input.setSelectionRange(found.start, found.start);
  }

  private renderChips(): void {
    const views = this.chips.map((block, index) =>
      chipView(block, () => {
        this.chips.splice(index, 1);
        this.renderChips();
        this.focus();
      }),
    );
    if (this.active && !this.active.removed) {
      const active = this.active;
      views.unshift(
        chipView(
          active.block,
          () => {
            active.removed = true;
            this.renderChips();
            this.focus();
          },
          true,
        ),
      );
    }
    this.chipStrip.replaceChildren(...views);
    this.chipStrip.hidden = !views.length;
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
