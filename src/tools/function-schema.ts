// Builds a tool's OpenAI function schema from its zod argument schema, so the two cannot drift.
import { z } from "zod";
import type { OpenAIFunctionToolSchema } from "./contract";
import { isJsonObject } from "./tool-arguments";

type JsonObject = Record<string, unknown>;

// Converting a zod schema to JSON schema is the costly part; a tool's schema never changes, so it is made once.
const made = new WeakMap<z.ZodObject, Map<string, OpenAIFunctionToolSchema>>();

/** The same input gives the same JSON on every call: no timestamps, ids or random values. */
export function functionToolSchema(
  name: string,
  description: string,
  argsSchema: z.ZodObject,
): OpenAIFunctionToolSchema {
  const byName = made.get(argsSchema) ?? new Map<string, OpenAIFunctionToolSchema>();
  made.set(argsSchema, byName);
  const key = `${name}\u0000${description}`;
  const hit = byName.get(key);
  // A deep copy: callers may not share (and so change) the one made schema.
  if (hit) return structuredClone(hit);
  const schema = makeSchema(name, description, argsSchema);
  byName.set(key, schema);
  return structuredClone(schema);
}

function makeSchema(name: string, description: string, argsSchema: z.ZodObject): OpenAIFunctionToolSchema {
  const json = z.toJSONSchema(argsSchema, { io: "input", unrepresentable: "any" });
  const properties: Record<string, JsonObject> = {};
  if (isJsonObject(json.properties)) {
    for (const [key, value] of Object.entries(json.properties)) {
      if (isJsonObject(value)) properties[key] = value;
    }
  }
  const required = Array.isArray(json.required) ? json.required.filter((r) => typeof r === "string") : [];
  return {
    type: "function",
    name,
    description,
    parameters: { type: "object", properties, required, additionalProperties: false },
  };
}
