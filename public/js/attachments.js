// @ts-check
// Files that go with a message: text and code files (and images, where the mode's model reads them) attached with
// the Attach button, dropped on the message box or pasted into it; checked here against the server's limits
// (src/wire/attachments.ts), shown as removable chips, and sent as the message's `attachments`. The conversation
// shows a message's files under it.
import { h } from "./dom.js";

/** The server's limits (src/wire/attachments.ts): the UI states them, and refuses a file past them at once. */
export const LIMITS = {
  files: 5,
  textBytes: 100_000,
  imageBytes: 500_000,
  /** Characters of text and base64 the files of one message may have together. */
  totalChars: 700_000,
};

export const IMAGE_TYPES = ["image/png", "image/jpeg", "image/gif", "image/webp"];

/** Media types a text file may have besides text/* (the server's TEXT_APPLICATION_TYPES). */
export const TEXT_APPLICATION_TYPES = new Set([
  "application/json",
  "application/ld+json",
  "application/xml",
  "application/javascript",
  "application/typescript",
  "application/x-sh",
  "application/x-yaml",
  "application/yaml",
  "application/toml",
  "application/sql",
  "application/graphql",
  "application/x-httpd-php",
]);

/** Extensions of text and code files, with the media type sent for them (browsers give many none, or a wrong one). */
const TEXT_EXTENSIONS = new Map(
  Object.entries({
    txt: "text/plain",
    md: "text/markdown",
    markdown: "text/markdown",
    json: "application/json",
    yaml: "application/yaml",
    yml: "application/yaml",
    toml: "application/toml",
    xml: "application/xml",
    csv: "text/csv",
    tsv: "text/tab-separated-values",
    html: "text/html",
    css: "text/css",
    js: "text/javascript",
    mjs: "text/javascript",
    cjs: "text/javascript",
    jsx: "text/javascript",
    ts: "text/plain",
    tsx: "text/plain",
    sql: "application/sql",
    sh: "application/x-sh",
    graphql: "application/graphql",
    log: "text/plain",
    ini: "text/plain",
    cfg: "text/plain",
    conf: "text/plain",
    env: "text/plain",
    py: "text/plain",
    rb: "text/plain",
    go: "text/plain",
    rs: "text/plain",
    java: "text/plain",
    kt: "text/plain",
    swift: "text/plain",
    c: "text/plain",
    h: "text/plain",
    cpp: "text/plain",
    hpp: "text/plain",
    cs: "text/plain",
    php: "text/plain",
    lua: "text/plain",
    pl: "text/plain",
    r: "text/plain",
    scala: "text/plain",
    dockerfile: "text/plain",
    diff: "text/plain",
    patch: "text/plain",
  }),
);

/** What the console says of the limits, beside the Attach button. */
export const LIMITS_TEXT =
  `Text or code files up to ${LIMITS.textBytes / 1000} KB each, ${LIMITS.files} at most; images (PNG, JPEG, GIF, ` +
  `WebP) up to ${LIMITS.imageBytes / 1000} KB where the mode's model reads images.`;

/** A size for people: bytes, KB. @param {number} bytes */
export function sizeText(bytes) {
  return bytes < 1000 ? `${bytes} bytes` : `${Math.round(bytes / 100) / 10} KB`;
}

/** @param {number} bytes */
const bytesText = (bytes) => `${bytes.toLocaleString("en")} bytes`;

/** @param {string} type */
const isTextType = (type) => /^text\/[a-z0-9.+-]+$/.test(type) || TEXT_APPLICATION_TYPES.has(type);

/**
 * The media type a file is sent with, and whether it is an image; null for a file that is neither text nor an image.
 * @param {File} file @returns {{ mediaType: string, image: boolean } | null}
 */
function kindOf(file) {
  const type = file.type.toLowerCase();
  if (IMAGE_TYPES.includes(type)) return { mediaType: type, image: true };
  const extension = /\.([^.]+)$/.exec(file.name.toLowerCase())?.[1] ?? file.name.toLowerCase();
  const known = TEXT_EXTENSIONS.get(extension);
  if (isTextType(type)) return { mediaType: type, image: false };
  if (known) return { mediaType: known, image: false };
  return null;
}

/** A file's base64 (without the data: prefix). @param {File} file @returns {Promise<string>} */
function base64Of(file) {
  return new Promise((resolve, reject) => {
    const reader = new FileReader();
    reader.onload = () => resolve(String(reader.result).replace(/^data:[^,]*,/, ""));
    reader.onerror = () => reject(reader.error);
    reader.readAsDataURL(file);
  });
}

/**
 * @typedef {{name: string, mediaType: string, text?: string, data?: string}} Attachment
 * @typedef {{name: string, mediaType: string, bytes: number, text?: string}} ShownAttachment
 */

/**
 * The composer's attachments: the Attach button's file input, drops on the composer, files pasted into the message
 * box; a chip each (removable); a note when a file is refused.
 * @param {{
 *   composer: HTMLFormElement, input: HTMLTextAreaElement, fileInput: HTMLInputElement, chips: HTMLElement,
 *   note: HTMLElement, imagesAccepted: () => boolean | undefined, onChange?: (count: number) => void
 * }} parts
 */
export function composerAttachments(parts) {
  /** @type {{ attachment: Attachment, bytes: number }[]} */
  let files = [];

  const changed = () => {
    parts.chips.replaceChildren(
      ...files.map(({ attachment, bytes }, index) =>
        h(
          "li",
          { class: "attachment-chip", "data-attachment-name": attachment.name },
          // An image shows itself, small (its name and size say the rest).
          attachment.data
            ? h("img", { class: "chip-thumb", alt: "", src: `data:${attachment.mediaType};base64,${attachment.data}` })
            : null,
          h("span", { text: `${attachment.data ? "Image" : "File"}: ${attachment.name} (${sizeText(bytes)})` }),
          h("button", {
            type: "button",
            class: "quiet chip-remove",
            text: "×",
            "aria-label": `Remove ${attachment.name}`,
            onclick: () => {
              files.splice(index, 1);
              changed();
              parts.input.focus();
            },
          }),
        ),
      ),
    );
    parts.chips.hidden = files.length === 0;
    parts.onChange?.(files.length);
  };

  /** @param {string} text */
  const refuse = (text) => {
    parts.note.textContent = text;
    parts.note.hidden = false;
  };

  /** Checks and reads one file; a refusal is said in the note. @param {File} file */
  async function addOne(file) {
    if (files.length >= LIMITS.files)
      return refuse(`${file.name} was not attached: a message takes ${LIMITS.files} files at most.`);
    const kind = kindOf(file);
    if (!kind) {
      return refuse(
        `${file.name} was not attached: it is not a text or code file (or an image). Attach text, code, JSON or Markdown files.`,
      );
    }
    const limit = kind.image ? LIMITS.imageBytes : LIMITS.textBytes;
    if (file.size > limit) {
      const what = kind.image ? "images" : "text files";
      return refuse(
        `${file.name} was not attached: it is ${bytesText(file.size)}; ${what} may be up to ${bytesText(limit)} (${sizeText(limit)}).`,
      );
    }
    if (kind.image && parts.imagesAccepted() === false) {
      return refuse(`${file.name} was not attached: the mode's model does not accept images.`);
    }
    /** @type {Attachment} */
    let attachment;
    if (kind.image) attachment = { name: file.name, mediaType: kind.mediaType, data: await base64Of(file) };
    else {
      const text = await file.text();
      // A binary file read as text has NULs or undecodable bytes (U+FFFD): it is not sent as text.
      if (text.includes("\u0000") || text.includes("\uFFFD")) {
        return refuse(`${file.name} was not attached: it is not text (it looks like a binary file).`);
      }
      attachment = { name: file.name, mediaType: kind.mediaType, text };
    }
    const chars = (a) => (a.text ?? a.data ?? "").length;
    const total = files.reduce((sum, f) => sum + chars(f.attachment), 0) + chars(attachment);
    if (total > LIMITS.totalChars) {
      return refuse(
        `${file.name} was not attached: the files of one message may hold about ${LIMITS.totalChars / 1000} KB together.`,
      );
    }
    files.push({ attachment, bytes: file.size });
  }

  /** Attaches files (each checked; the refused ones are said). @param {Iterable<File>} list */
  async function add(list) {
    parts.note.hidden = true;
    parts.note.textContent = "";
    for (const file of list) await addOne(file);
    changed();
  }

  parts.fileInput.addEventListener("change", () => {
    const chosen = [...(parts.fileInput.files ?? [])];
    parts.fileInput.value = "";
    void add(chosen);
  });
  // Files dragged over the composer can be dropped on it (anything else is left to the browser).
  parts.composer.addEventListener("dragover", (event) => {
    if (!event.dataTransfer?.types.includes("Files")) return;
    event.preventDefault();
    event.dataTransfer.dropEffect = "copy";
    parts.composer.classList.add("drop-target");
  });
  parts.composer.addEventListener("dragleave", () => parts.composer.classList.remove("drop-target"));
  parts.composer.addEventListener("drop", (event) => {
    parts.composer.classList.remove("drop-target");
    const dropped = [...(event.dataTransfer?.files ?? [])];
    if (dropped.length === 0) return;
    event.preventDefault();
    void add(dropped);
  });
  // A file pasted into the message box (a screenshot, a file copied in the file manager) is attached, not typed.
  parts.input.addEventListener("paste", (event) => {
    const pasted = [...(event.clipboardData?.files ?? [])];
    if (pasted.length === 0) return;
    event.preventDefault();
    void add(pasted);
  });

  return {
    /** The files to send with the message. @returns {Attachment[]} */
    list: () => files.map((f) => f.attachment),
    count: () => files.length,
    /** The files as the conversation shows them (the message just sent). @returns {ShownAttachment[]} */
    shown: () =>
      files.map(({ attachment, bytes }) => ({
        name: attachment.name,
        mediaType: attachment.mediaType,
        bytes,
        ...(attachment.text !== undefined ? { text: attachment.text } : {}),
      })),
    /** Takes the files out of the composer (the message was sent), answering them for a draft. */
    take() {
      const taken = files;
      files = [];
      parts.note.hidden = true;
      changed();
      return taken;
    },
    /** Puts a refused message's files back. @param {{ attachment: Attachment, bytes: number }[]} taken */
    restore(taken) {
      files = [...taken, ...files].slice(0, LIMITS.files);
      changed();
    },
  };
}

/**
 * A message's files as the conversation shows them: a text file opens to its text; an image is named with its size.
 * @param {ShownAttachment[] | undefined} attachments
 */
export function attachmentList(attachments) {
  if (!attachments || attachments.length === 0) return null;
  return h(
    "ul",
    { class: "message-attachments", "aria-label": "Attached files" },
    ...attachments.map((file) => {
      const label = `${file.text === undefined ? "Image" : "File"}: ${file.name} (${sizeText(file.bytes)})`;
      if (file.text === undefined) return h("li", { class: "attachment-chip", text: label });
      return h(
        "li",
        { class: "attachment-file" },
        h("details", {}, h("summary", { text: label }), h("pre", {}, h("code", { text: file.text }))),
      );
    }),
  );
}
