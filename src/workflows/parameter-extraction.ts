// Workflow parameters from the user's own words: `key=value` pairs (quotes allowed) and a first positional word.

import { z } from "zod";
import { quoted } from "../quote";

/** Splits on spaces outside quotes; quotes are removed. */
function tokens(input: string): string[] {
  const out: string[] = [];
  const pattern = /(\w+)=("([^"]*)"|'([^']*)'|\S*)|"([^"]*)"|'([^']*)'|(\S+)/g;
  for (const match of input.matchAll(pattern)) {
    if (match[1] !== undefined) out.push(`${match[1]}=${match[3] ?? match[4] ?? match[2] ?? ""}`);
    else out.push(match[5] ?? match[6] ?? match[7] ?? "");
  }
  return out;
}

function coerce(value: string, schema: z.ZodType | undefined): unknown {
  const inner = schema instanceof z.ZodOptional ? schema.unwrap() : schema;
  if (inner instanceof z.ZodBoolean && (value === "true" || value === "false")) return value === "true";
  if (inner instanceof z.ZodNumber && value.trim() !== "" && Number.isFinite(Number(value))) return Number(value);
  return value;
}

export type Extraction =
  | { ok: true; parameters: Record<string, unknown> }
  | { ok: false; message: string; param: string | null };

export function extractParameters(input: string, schema: z.ZodObject, positional?: string): Extraction {
  const shape = schema.shape as Record<string, z.ZodType>;
  // No prototype: a key named `__proto__` is an own key like any other, never the object's prototype.
  const parameters: Record<string, unknown> = Object.create(null);
  const extra: string[] = [];
  for (const token of tokens(input.trim())) {
    const eq = token.indexOf("=");
    const key = eq > 0 ? token.slice(0, eq) : null;
    if (key && Object.hasOwn(shape, key)) parameters[key] = coerce(token.slice(eq + 1), shape[key]);
    else if (key)
      return {
        ok: false,
        message: `Unknown parameter ${quoted(key)}. Parameters: ${Object.keys(shape).join(", ")}.`,
        param: key,
      };
    else extra.push(token);
  }
  if (extra.length > 0) {
    if (!positional || Object.hasOwn(parameters, positional)) {
      return { ok: false, message: `Could not place ${quoted(extra.join(" "))}; write it as key=value.`, param: null };
    }
    parameters[positional] = coerce(extra.join(" "), shape[positional]);
  }
  const missing = Object.entries(shape)
    .filter(([key, field]) => !field.safeParse(undefined).success && !Object.hasOwn(parameters, key))
    .map(([key]) => key);
  if (missing.length > 0) {
    const examples = missing.map((key) => `${key}="..."`).join(" ");
    return {
      ok: false,
      message: `Missing ${missing.map((k) => `'${k}'`).join(", ")}: add ${examples}.`,
      param: missing[0] ?? null,
    };
  }
  return { ok: true, parameters };
}
