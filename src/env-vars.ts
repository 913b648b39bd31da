// Reading the Worker's vars: wrangler.toml gives strings, and a missing or malformed one falls back to its default.
import { z } from "zod";

/** A positive whole number var, such as a limit in ms; anything else reads as `fallback`. */
export const positiveIntVar = (fallback: number) => z.coerce.number().int().positive().catch(fallback);
