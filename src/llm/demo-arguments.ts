// The offline demo model's arguments for a client's own tool: a value valid for the tool's JSON schema,
// taken from the user's words where a string field plainly wants them (a quoted phrase, a name).

type Schema = Record<string, unknown>;

const isSchema = (value: unknown): value is Schema =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/** A quoted phrase of the user's, else a capitalised word past the first, else null. */
function wordsFor(text: string): string | null {
  const quoted = /["“'‘]([^"”'’]{1,200})["”'’]/.exec(text)?.[1];
  if (quoted) return quoted;
  const words = text.split(/\s+/).slice(1);
  return words.find((w) => /^[A-Z][\p{L}-]+$/u.test(w.replace(/[.,!?;:]+$/, "")))?.replace(/[.,!?;:]+$/, "") ?? null;
}

function stringFor(schema: Schema, name: string, text: string): string {
  if (typeof schema.format === "string") {
    const byFormat: Record<string, string> = {
      "date-time": "2026-01-01T00:00:00Z",
      date: "2026-01-01",
      time: "00:00:00",
      email: "user@example.com",
      uri: "https://example.com",
      url: "https://example.com",
      uuid: "00000000-0000-4000-8000-000000000000",
    };
    const value = byFormat[schema.format];
    if (value) return value;
  }
  let value = wordsFor(text) ?? (/path|file/i.test(name) ? "README.md" : "example");
  const min = typeof schema.minLength === "number" ? schema.minLength : 0;
  const max = typeof schema.maxLength === "number" ? schema.maxLength : Number.POSITIVE_INFINITY;
  if (value.length < min) value = value.padEnd(min, "x");
  return value.slice(0, max);
}

function numberFor(schema: Schema, integer: boolean): number {
  const min =
    typeof schema.minimum === "number"
      ? schema.minimum
      : typeof schema.exclusiveMinimum === "number"
        ? schema.exclusiveMinimum + (integer ? 1 : 0.5)
        : 1;
  const max = typeof schema.maximum === "number" ? schema.maximum : Number.POSITIVE_INFINITY;
  const value = Math.min(Math.max(min, 1), max);
  return integer ? Math.ceil(value) : value;
}

/** A value valid for `schema`; `name` is the property it fills, `text` the user's words. */
export function sampleValue(schema: unknown, text: string, name = ""): unknown {
  if (!isSchema(schema)) return null;
  if ("const" in schema) return schema.const;
  if (Array.isArray(schema.enum) && schema.enum.length > 0) return schema.enum[0];
  if ("default" in schema) return schema.default;
  for (const key of ["anyOf", "oneOf", "allOf"]) {
    const options = schema[key];
    if (Array.isArray(options)) {
      const usable = options.find((o) => isSchema(o) && o.type !== "null") ?? options[0];
      if (key !== "allOf") return sampleValue(usable, text, name);
      return Object.assign({}, ...options.map((o) => sampleValue(o, text, name)).filter(isSchema));
    }
  }
  const type = Array.isArray(schema.type) ? schema.type.find((t) => t !== "null") : schema.type;
  switch (type) {
    case "string":
      return stringFor(schema, name, text);
    case "integer":
      return numberFor(schema, true);
    case "number":
      return numberFor(schema, false);
    case "boolean":
      return true;
    case "null":
      return null;
    case "array": {
      const count = typeof schema.minItems === "number" ? schema.minItems : 1;
      const capped = typeof schema.maxItems === "number" ? Math.min(count, schema.maxItems) : count;
      return Array.from({ length: capped }, () => sampleValue(schema.items, text, name));
    }
    default: {
      const properties = isSchema(schema.properties) ? schema.properties : {};
      const required = Array.isArray(schema.required) ? schema.required.filter((r) => typeof r === "string") : [];
      const out: Record<string, unknown> = {};
      for (const key of required) out[key] = sampleValue(properties[key], text, key);
      return out;
    }
  }
}
