// A message's attachments (a text or code file, an image), as a client sends them with a message (REST and the
// socket) and as the session keeps and shows them; their limits are sized to fit one request body or frame.
import { z } from "zod";
import { typedName } from "../typed-name";
import { IMAGE_MEDIA_TYPES } from "./anthropic";

/** Attachments a message may carry. */
export const MAX_ATTACHMENTS = 5;
/** A text file's longest text, in characters (about 100 KB). */
export const MAX_ATTACHMENT_TEXT_CHARS = 100_000;
/** An image's largest size, in bytes (decoded): 500 KB, about 667,000 characters of base64. */
export const MAX_IMAGE_BYTES = 500_000;
/**
 * The characters (text and base64) all of a message's attachments may have together: with the message, they must
 * fit the socket's frame (MAX_CLIENT_FRAME_BYTES, 1,000,000) and the REST body (MAX_BODY_BYTES, 1 MiB).
 */
export const MAX_ATTACHMENTS_TOTAL_CHARS = 700_000;

export { IMAGE_MEDIA_TYPES };

/**
 * Media types a text attachment may have besides `text/*`: the application types browsers and editors give code
 * and data files.
 */
export const TEXT_APPLICATION_TYPES = [
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
] as const;

/** A media type a text attachment may have: `text/*` or one of TEXT_APPLICATION_TYPES. */
export function isTextMediaType(type: string): boolean {
  return /^text\/[a-z0-9.+-]+$/.test(type) || (TEXT_APPLICATION_TYPES as readonly string[]).includes(type);
}

export const isImageAttachment = (a: { mediaType: string }): boolean =>
  (IMAGE_MEDIA_TYPES as readonly string[]).includes(a.mediaType);

const AttachmentName = z
  .string()
  .trim()
  .min(1, "must not be empty")
  .max(255)
  .regex(/^[^/\\]+$/, "must be a file name, without a path")
  .superRefine(typedName);

/** The bytes base64 text stands for. */
export function base64Bytes(data: string): number {
  const padding = data.endsWith("==") ? 2 : data.endsWith("=") ? 1 : 0;
  return Math.floor((data.length * 3) / 4) - padding;
}

const IMAGE_TYPES_TEXT = IMAGE_MEDIA_TYPES.join(", ");

/**
 * One attachment as a client sends it: a text or code file (`text`: UTF-8, no NUL, so a binary file is refused) or an
 * image (`data`: its bytes in base64, no `data:` prefix), with its name and media type.
 */
export const MessageAttachment = z
  .strictObject({
    name: AttachmentName,
    mediaType: z.string().trim().toLowerCase().min(1, "must not be empty").max(200),
    text: z
      .string()
      .max(MAX_ATTACHMENT_TEXT_CHARS, `must be at most ${MAX_ATTACHMENT_TEXT_CHARS} characters (about 100 KB)`)
      .refine((text) => !text.includes("\u0000"), "is not text (it holds NUL characters: a binary file)")
      .optional(),
    data: z
      .string()
      .min(1, "must not be empty")
      .regex(/^[A-Za-z0-9+/]+={0,2}$/, "must be base64 (without a data: prefix)")
      .refine((data) => base64Bytes(data) <= MAX_IMAGE_BYTES, `must be at most ${MAX_IMAGE_BYTES} bytes (500 KB)`)
      .optional(),
  })
  .superRefine((a, ctx) => {
    if ((a.text === undefined) === (a.data === undefined)) {
      ctx.addIssue({
        code: "custom",
        path: [],
        message: "needs exactly one of text (a text file) and data (an image)",
      });
    } else if (a.text !== undefined && !isTextMediaType(a.mediaType)) {
      ctx.addIssue({
        code: "custom",
        path: ["mediaType"],
        message: "must be a text type for a text file (text/*, or JSON, XML, YAML, JavaScript and the like)",
      });
    } else if (a.data !== undefined && !isImageAttachment(a)) {
      ctx.addIssue({ code: "custom", path: ["mediaType"], message: `must be one of ${IMAGE_TYPES_TEXT} for an image` });
    }
  });
export type MessageAttachment = z.infer<typeof MessageAttachment>;

const attachmentChars = (a: MessageAttachment) => (a.text ?? a.data ?? "").length;

/** A message's attachments: at most MAX_ATTACHMENTS, MAX_ATTACHMENTS_TOTAL_CHARS together. */
export const MessageAttachments = z
  .array(MessageAttachment)
  .max(MAX_ATTACHMENTS, `must be at most ${MAX_ATTACHMENTS} files`)
  .refine(
    (list) => list.reduce((sum, a) => sum + attachmentChars(a), 0) <= MAX_ATTACHMENTS_TOTAL_CHARS,
    `must hold at most ${MAX_ATTACHMENTS_TOTAL_CHARS} characters together (text and base64)`,
  );

/**
 * An attachment as the session keeps it with its message: as sent, with its size in bytes. Views, pages and
 * exports show an image without its `data` (the model is sent it; a view stays small); a text file with its text.
 */
export const StoredAttachment = z.object({
  name: z.string(),
  mediaType: z.string(),
  /** The file's size in bytes (a text file's UTF-8 bytes, an image's decoded bytes). */
  bytes: z.number().int().min(0),
  text: z.string().optional(),
  /** An image's base64; absent from views, pages and exports. */
  data: z.string().optional(),
});
export type StoredAttachment = z.infer<typeof StoredAttachment>;

/** The attachment as the session keeps it. */
export function storedAttachment(a: MessageAttachment): StoredAttachment {
  if (a.text !== undefined) {
    return { name: a.name, mediaType: a.mediaType, bytes: new TextEncoder().encode(a.text).byteLength, text: a.text };
  }
  const data = a.data ?? "";
  return { name: a.name, mediaType: a.mediaType, bytes: base64Bytes(data), data };
}

/** The attachment as a view shows it: an image without its data. */
export function shownAttachment(a: StoredAttachment): StoredAttachment {
  const { data: _data, ...shown } = a;
  return shown;
}

/** The refusal of an image on a mode whose model route does not accept images. */
export const IMAGES_NOT_ACCEPTED = "The mode's model does not accept images.";
