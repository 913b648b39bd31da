// One settings schema (src/settings.ts): defaults in one place, a malformed var named and never replaced, and
// wrangler.toml's documentation of the vars kept true to the schema.
import { describe, expect, it } from "vitest";
import { parseSettings, SettingsError, SettingsVars } from "../../src/settings";
import wranglerToml from "../../wrangler.toml?raw";
import { type ErrorBody, workerWith } from "../passthrough/harness";

describe("settings", () => {
  it("reads the defaults when no var is set", () => {
    const settings = parseSettings({});
    expect(settings.agent).toMatchObject({ maxIterations: 10, turnTimeoutMs: 300_000, pauseTtlMs: 86_400_000 });
    expect([settings.llm.baseUrl, settings.llm.toolFormat, settings.limits.maxBodyBytes]).toEqual([
      "",
      "native",
      1_048_576,
    ]);
  });

  it("trims LLM_BASE_URL and its trailing slashes (the `default` route of the loop and the passthrough alike)", () => {
    const settings = parseSettings({ LLM_BASE_URL: "  https://llm.example/v1/ " });
    expect(settings.llm.baseUrl).toBe("https://llm.example/v1");
  });

  for (const [name, value, problem] of [
    ["LLM_TOOL_FORMAT", "jsn", "must be 'native' or 'json'"],
    ["AGENT_MAX_ITERATIONS", "ten", "must be a positive whole number"],
    ["AGENT_TURN_TIMEOUT_MS", "0", "must be a positive whole number"],
    ["LLM_BASE_URL", "llm.example/v1", "must be an http(s) URL or empty"],
    [
      "LLM_BASE_URL",
      "https://me:sk-x@llm.example/v1",
      "must not carry a user name or password: set LLM_API_KEY instead",
    ],
    ["SESSION_RETENTION_DAYS", "-1", "must be a whole number"],
    ["SESSION_RETENTION_BATCH", "0", "must be a positive whole number"],
  ] as const) {
    it(`refuses ${name}=${value}, naming the variable, instead of falling back to a default`, () => {
      expect(() => parseSettings({ [name]: value })).toThrow(new SettingsError(name, problem));
    });
  }

  it("answers every request, /healthz included, 500 misconfigured naming the malformed var", async () => {
    const worker = workerWith({ LLM_TOOL_FORMAT: "jsn" });
    for (const path of ["/healthz", "/modes"]) {
      const response = await worker.fetch(`http://aptix.test${path}`);
      expect(response.status).toBe(500);
      expect(((await response.json()) as ErrorBody).error).toEqual({
        message: "The server is misconfigured: LLM_TOOL_FORMAT must be 'native' or 'json'.",
        type: "server_error",
        code: "misconfigured",
        param: null,
      });
    }
  });

  it("documents every setting in wrangler.toml with the schema's default", () => {
    const documented = new Map(
      [...wranglerToml.matchAll(/^# ([A-Z_]+) = "([^"]*)"/gm)].map((m) => [m[1] ?? "", m[2] ?? ""] as const),
    );
    const defaults = SettingsVars.parse({});
    for (const name of Object.keys(SettingsVars.shape) as (keyof typeof defaults)[]) {
      const value = defaults[name];
      // Lists are written comma-separated, key=value pairs (OTEL_EXPORTER_OTLP_HEADERS) as `k=v,k2=v2`.
      const asWritten = Array.isArray(value)
        ? value.join(",")
        : typeof value === "object" && value !== null
          ? Object.entries(value)
              .map(([k, v]) => `${k}=${String(v)}`)
              .join(",")
          : String(value);
      expect(documented.get(name), name).toBe(asWritten);
    }
    expect([...documented.keys()].sort()).toEqual(Object.keys(SettingsVars.shape).sort());
  });
});
