// Tools someone else defined (an MCP server's, a client's own): their JSON schema in our schema's shape, and
// their arguments read once, by one rule, for the check before a call and for the call itself.
import { schemaProblem } from "../json-schema-check";
import type { OpenAIFunctionToolSchema } from "./contract";

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
): { args: Record<string, unknown> } | { problem: string } {
  let args: unknown;
  try {
    args = JSON.parse(argumentsJson.trim() === "" ? "{}" : argumentsJson);
  } catch {
    return { problem: `${label} requires its arguments as a JSON object; the arguments are not valid JSON.` };
  }
  if (typeof args !== "object" || args === null || Array.isArray(args)) {
    return { problem: `${label} requires its arguments as a JSON object.` };
  }
  const problem = schemaProblem(schema, args);
  if (problem) return { problem: `${label} got arguments its schema refuses: ${problem.message}.` };
  return { args: args as Record<string, unknown> };
}
