// Tools someone else defined (an MCP server's, a client's own): their JSON schema in our schema's shape, and
// their arguments read once, by one rule, for the check before a call and for the call itself.
import { schemaProblem } from "../json-schema-check";
import type { OpenAIFunctionToolSchema } from "./contract";
import { type ParsedArguments, readJsonObject } from "./tool-arguments";

/** A JSON object schema as others write it: properties and required names, anything else beside them. */
export interface ForeignObjectSchema {
  properties?: Record<string, unknown>;
  required?: readonly string[];
}

/** The schema in our shape; a property without a description gets one from its name (TUL-011 wants one). */
export function foreignFunctionSchema(
  name: string,
  description: string,
  input: ForeignObjectSchema,
): OpenAIFunctionToolSchema {
  const properties: Record<string, Record<string, unknown>> = {};
  for (const [key, value] of Object.entries(input.properties ?? {})) {
    const property = typeof value === "object" && value !== null ? { ...(value as Record<string, unknown>) } : {};
    if (typeof property.description !== "string" || property.description.trim() === "") {
      property.description = `The ${key} argument.`;
    }
    properties[key] = property;
  }
  return {
    type: "function",
    name,
    description,
    parameters: { type: "object", properties, required: [...(input.required ?? [])] },
  };
}

/**
 * The arguments as the object a call sends, or what is wrong with them: not JSON, not an object, or not what
 * `schema` asks (its first problem, by field). Arguments of only whitespace are no arguments.
 */
export function readForeignArguments(
  label: string,
  argumentsJson: string,
  schema: object,
): ParsedArguments<Record<string, unknown>> {
  const read = readJsonObject(argumentsJson.trim() === "" ? "{}" : argumentsJson, label);
  if (!read.ok) return read;
  const problem = schemaProblem(schema, read.args);
  if (problem) return { ok: false, message: `${label} got arguments its schema refuses: ${problem.message}.` };
  return read;
}
