// A search page's cursor: where the next page starts in the ranking, opaque to clients (base64url of JSON).
import { z } from "zod";
import { SEARCH_DEPTH_MAX } from "./message-search";

const Cursor = z.object({ o: z.number().int().min(1).max(SEARCH_DEPTH_MAX) });

export function encodeSearchCursor(offset: number): string {
  return btoa(JSON.stringify({ o: offset }))
    .replace(/=+$/, "")
    .replaceAll("+", "-")
    .replaceAll("/", "_");
}

/** The offset a cursor holds, or null when it is not one of ours. */
export function decodeSearchCursor(cursor: string): number | null {
  try {
    const parsed = Cursor.safeParse(JSON.parse(atob(cursor.replaceAll("-", "+").replaceAll("_", "/"))));
    return parsed.success ? parsed.data.o : null;
  } catch {
    return null;
  }
}

/** The cursor of the page after one that ended at `end`; null when none follows or the depth is reached. */
export function nextSearchCursor(end: number, more: boolean): string | null {
  return more && end < SEARCH_DEPTH_MAX ? encodeSearchCursor(end) : null;
}
