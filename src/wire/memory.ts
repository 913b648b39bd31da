// Memories as clients, tools and the prompt see them: a memory, the bodies that add and change one, a page of them,
// and the org's memory policy. One zod schema each; the types are inferred from them (docs/memory.md).
import { z } from "zod";
import { typedProse } from "../typed-name";

/** The most characters a memory's text may have: a short fact, not a document. */
export const MEMORY_TEXT_MAX_CHARS = 500;

export const MEMORY_SCOPES = ["user", "org"] as const;
export type MemoryScope = (typeof MEMORY_SCOPES)[number];

/** A memory's text as it is stored: trimmed, 1 to MEMORY_TEXT_MAX_CHARS characters, prose (no control characters). */
export const MemoryText = z
  .string({ error: "must be a string" })
  .trim()
  .min(1, "must not be empty")
  .max(MEMORY_TEXT_MAX_CHARS, `must be at most ${MEMORY_TEXT_MAX_CHARS} characters`)
  .superRefine(typedProse);

/** Where a memory came from: the session and turn whose memory_save call wrote it. */
export const MemorySource = z.object({ sessionId: z.string(), turnId: z.string() });
export type MemorySource = z.infer<typeof MemorySource>;

export const Memory = z
  .object({
    id: z.string().describe("`mem_…`"),
    text: z.string(),
    scope: z.enum(MEMORY_SCOPES).describe("`user`: about you; `org`: about your organization, written by an admin."),
    source: MemorySource.nullable().describe("The session and turn that saved it; null for one added by hand."),
    createdAt: z.string(),
    updatedAt: z.string(),
    pinned: z.boolean().describe("Pinned memories come first in what the agent is told, whatever the message."),
  })
  .meta({ id: "Memory" });
export type Memory = z.infer<typeof Memory>;

export const MemoryPage = z.object({
  memories: z.array(Memory),
  nextCursor: z.string().nullable().describe("Pass as `cursor` for the next page; null on the last."),
});
export type MemoryPage = z.infer<typeof MemoryPage>;

export const MemoryListQuery = z.object({
  q: z.string().max(200).optional().describe("Words to find (full-text); every memory without it."),
  limit: z.coerce.number().int().min(1).max(100).default(50).describe("Memories a page (1 to 100, 50 by default)."),
  cursor: z.string().min(1).max(500).optional().describe("The nextCursor of the previous page."),
});

export const CreateMemoryBody = z.strictObject({
  text: MemoryText.describe(`The fact, at most ${MEMORY_TEXT_MAX_CHARS} characters.`),
  pinned: z.boolean({ error: "must be true or false" }).optional(),
  scope: z
    .enum(MEMORY_SCOPES, { error: "must be 'user' or 'org'" })
    .optional()
    .describe("`org` (an org admin only): a memory every member of the org gets. `user` by default."),
});
export type CreateMemoryBody = z.infer<typeof CreateMemoryBody>;

export const PatchMemoryBody = z
  .strictObject({
    text: MemoryText.optional(),
    pinned: z.boolean({ error: "must be true or false" }).optional(),
  })
  .refine((body) => body.text !== undefined || body.pinned !== undefined, {
    message: "must change 'text' or 'pinned'",
  });
export type PatchMemoryBody = z.infer<typeof PatchMemoryBody>;

export const MemoriesDeleted = z.object({ deleted: z.number().int().describe("How many of your memories went.") });

/** The org's memory policy (GET and PUT /admin/memory). */
export const MemoryPolicy = z.strictObject({
  enabled: z
    .boolean({ error: "must be true or false" })
    .describe("false: no memory tools, no prompt section, nothing stored."),
});
export type MemoryPolicy = z.infer<typeof MemoryPolicy>;

/** What a save did: added a memory, or updated one it duplicated or contradicted (`previous`: its old text). */
export const MemorySaveResult = z.object({
  outcome: z.enum(["added", "updated"]),
  memory: Memory,
  previous: z.string().nullable(),
});
export type MemorySaveResult = z.infer<typeof MemorySaveResult>;
