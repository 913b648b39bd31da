// Parses a tool's argumentsJson into its zod-typed Args, returning the first problem as a message.
import type { z } from "zod";

export type ParsedArguments<T> = { ok: true; args: T } | { ok: false; message: string };

/**
 * `argumentsJson` must be a JSON object. Issues are reported in the schema's key order, so a tool
 * whose schema lists its fields in its specification's order reports them in that order too.
 */
export function parseToolArguments<S extends z.ZodType>(
  argumentsJson: string,
  schema: S,
  toolLabel: string,
): ParsedArguments<z.output<S>> {
  let raw: unknown;
  try {
    raw = JSON.parse(argumentsJson);
  } catch {
    return {
      ok: false,
      message: `${toolLabel} requires its arguments as a JSON object; the arguments are not valid JSON.`,
    };
  }
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) {
    return { ok: false, message: `${toolLabel} requires its arguments as a JSON object.` };
  }
  const parsed = schema.safeParse(raw);
  if (parsed.success) return { ok: true, args: parsed.data };
  const first = parsed.error.issues[0];
  return { ok: false, message: first?.message ?? `${toolLabel} received invalid arguments.` };
}

export function isBlank(value: string | null | undefined): boolean {
  return value === null || value === undefined || value.trim().length === 0;
}

/** Refinement for "non-empty string" rules that must keep the caller's exact message. */
export function nonBlank(value: string): boolean {
  return value.trim().length > 0;
}
