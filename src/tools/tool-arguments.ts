// Reads a tool's argumentsJson: a JSON object first, then its zod-typed Args, the first problem as a message.
import { z } from "zod";

export type ParsedArguments<T> = { ok: true; args: T } | { ok: false; message: string };

/** A JSON object: not null, not an array. */
export function isJsonObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** The arguments as a JSON object, or why they are not one, in the words of the tool's label. */
export function readJsonObject(argumentsJson: string, toolLabel: string): ParsedArguments<Record<string, unknown>> {
  let raw: unknown;
  try {
    raw = JSON.parse(argumentsJson);
  } catch {
    return {
      ok: false,
      message: `${toolLabel} requires its arguments as a JSON object; the arguments are not valid JSON.`,
    };
  }
  if (!isJsonObject(raw)) return { ok: false, message: `${toolLabel} requires its arguments as a JSON object.` };
  return { ok: true, args: raw };
}

/**
 * `argumentsJson` must be a JSON object. Issues are reported in the schema's key order, so a tool
 * whose schema lists its fields in its specification's order reports them in that order too.
 */
export function parseToolArguments<S extends z.ZodType>(
  argumentsJson: string,
  schema: S,
  toolLabel: string,
): ParsedArguments<z.output<S>> {
  const raw = readJsonObject(argumentsJson, toolLabel);
  if (!raw.ok) return raw;
  const parsed = schema.safeParse(raw.args);
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

/** A required string that is not blank; missing, not a string or blank, it is refused with `message`. */
export function nonBlankString(message: string) {
  return z.string({ error: message }).refine(nonBlank, { error: message });
}
