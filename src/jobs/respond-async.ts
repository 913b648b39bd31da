// `Prefer: respond-async` (RFC 7240) on the /context routes that start or resume a turn: the turn is admitted and
// stored, and the answer is 202 with the turn's id and where to poll it, while the turn runs on in its session.
import type { Context } from "hono";
import type { TurnAccepted } from "../wire/turn";

/**
 * Whether the request prefers an asynchronous answer: a `respond-async` preference in any Prefer header (RFC 7240
 * §2: comma-separated preferences, names case-insensitive, each perhaps with `=value` and `;` parameters).
 */
export function prefersRespondAsync(header: string | null | undefined): boolean {
  if (!header) return false;
  return header.split(",").some((preference) => {
    const name = preference.split(";")[0]?.split("=")[0]?.trim().toLowerCase();
    return name === "respond-async";
  });
}

/** Where a background turn's status is read. */
export function turnLocation(accepted: TurnAccepted): string {
  return `/context/sessions/${accepted.sessionId}/turns/${accepted.turnId}`;
}

/** The 202 of a turn started in the background: its ids, Location, and that the preference was applied. */
export function acceptedTurn(c: Context, accepted: TurnAccepted) {
  c.header("location", turnLocation(accepted));
  c.header("preference-applied", "respond-async");
  return c.json(accepted, 202);
}
