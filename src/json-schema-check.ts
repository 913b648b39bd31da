// Checks a value against a JSON schema someone else wrote (an MCP tool's inputSchema, an elicitation's
// requestedSchema) with @cfworker/json-schema (Workers forbid the code generation ajv uses), and names the
// first problem in words: which field, and what is wrong with it.
import { type Schema, Validator } from "@cfworker/json-schema";

export interface SchemaProblem {
  /** The top-level field the problem is in ("" for the value as a whole). */
  field: string;
  message: string;
}

const validators = new WeakMap<object, Validator>();

/** The first problem of `value` under `schema`, or null when it fits. Validators are kept per schema object. */
export function schemaProblem(schema: object, value: unknown): SchemaProblem | null {
  let validator = validators.get(schema);
  if (!validator) {
    validator = new Validator(schema as Schema, "2020-12", false);
    validators.set(schema, validator);
  }
  const checked = validator.validate(value);
  if (checked.valid) return null;
  // The first error about a field itself (not the "properties" summary); a missing field is named in its text.
  const error = checked.errors.find((e) => e.keyword !== "properties") ?? checked.errors[0];
  const located = error?.instanceLocation.replace(/^#\/?/, "").split("/")[0] ?? "";
  const field = located || (error?.keyword === "required" ? (/"([^"]+)"/.exec(error.error)?.[1] ?? "") : "");
  const text = (error?.error ?? "it is invalid").replace(/\.$/, "");
  return { field, message: field ? `'${field}': ${text}` : text };
}
