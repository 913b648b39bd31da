// Every setting the Worker and its objects read, as one zod schema over the vars: its defaults are the only
// ones (wrangler.toml documents them), it is parsed once per isolate, and a malformed value is an error that
// names the variable, never silently replaced by a default.
import { z } from "zod";
import { TRACING_VARS, type TracingSettings, tracingOf } from "./tracing-settings";
import { firstProblem } from "./zod-issues";

/** A whole number of at least 1, as wrangler.toml writes it (a string) or as a JSON var (a number). */
const positiveInt = (fallback: number) =>
  z
    .union([z.number(), z.string().trim().regex(/^\d+$/, "must be a positive whole number")])
    .transform(Number)
    .pipe(z.number().int("must be a positive whole number").min(1, "must be a positive whole number"))
    .default(fallback);

/** A whole number of at least 0. */
const nonNegativeInt = (fallback: number) =>
  z
    .union([z.number(), z.string().trim().regex(/^\d+$/, "must be a whole number")])
    .transform(Number)
    .pipe(z.number().int("must be a whole number").min(0, "must be a whole number"))
    .default(fallback);

const text = (fallback: string) => z.string().default(fallback);

/** The vars, by their names, with their defaults. */
/**
 * WORKSPACE_PROTECTED_PATHS' default: the workspace tools' paths refused unless the operator says otherwise: a pattern ending in '/' is a directory anywhere in the
 * path, any other pattern a file name anywhere ('*' matches any run of characters); case is ignored.
 */
export const DEFAULT_PROTECTED_PATHS: readonly string[] = [
  ".git/",
  ".ssh/",
  ".aws/",
  ".gnupg/",
  ".env",
  ".env.*",
  ".npmrc",
  ".netrc",
  ".pgpass",
  ".dev.vars",
  ".dev.vars.*",
  "id_rsa*",
  "id_ed25519*",
  "*.pem",
  "*.key",
];

/** A web origin as a URL's `origin` writes it (`https://chat.example.com`), or null for text that is not one. */
function originOf(text: string): string | null {
  try {
    const url = new URL(text);
    return url.protocol === "http:" || url.protocol === "https:" ? url.origin : null;
  } catch {
    // Not a URL at all: no origin.
    return null;
  }
}

/** A comma-separated list, trimmed, empty items dropped. */
const commaList = z
  .string()
  .transform((v) =>
    v
      .split(",")
      .map((item) => item.trim())
      .filter(Boolean),
  )
  .default([]);

/** What is wrong with an issuer URL, or null: https:, or http: on a loopback host. */
function issuerProblem(text: string): string | null {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return "must be the identity provider's issuer URL, e.g. https://login.example.com";
  }
  if (url.protocol === "https:") return null;
  if (url.protocol === "http:" && isLoopbackHost(url.hostname)) return null;
  return "must be an https: URL (http: only on loopback: localhost, 127.0.0.1, [::1])";
}

/** A key that wraps other keys: empty (none), or long enough to hold 256 bits however it was written. */
const secretsKey = z
  .string()
  .refine((v) => v === "" || v.length >= 32, "must be at least 32 characters (for example `openssl rand -base64 32`)")
  .default("");

export function isLoopbackHost(hostname: string): boolean {
  return hostname === "localhost" || hostname === "[::1]" || /^127\.\d+\.\d+\.\d+$/.test(hostname);
}

const SettingsShape = z.object({
  /** Where the model lives: an OpenAI-compatible base URL ending in /v1. Empty: the offline demo model. */
  LLM_BASE_URL: z
    .string()
    .trim()
    .refine((v) => v === "" || /^https?:\/\/[^\s]+$/.test(v), "must be an http(s) URL or empty")
    .refine((v) => !/^https?:\/\/[^/?#]*@/.test(v), "must not carry a user name or password: set LLM_API_KEY instead")
    .transform((v) => v.replace(/\/+$/, ""))
    .default(""),
  LLM_MODEL: text("demo"),
  /** Secret: the key sent to the upstream LLM (`wrangler secret put LLM_API_KEY`). */
  LLM_API_KEY: text(""),
  /** "native" (OpenAI tools/tool_calls) or "json" (the strict JSON object of the design document). */
  LLM_TOOL_FORMAT: z.enum(["native", "json"], { error: "must be 'native' or 'json'" }).default("native"),
  /**
   * The field `default` names the answer's limit with: `max_tokens` or `max_completion_tokens` (OpenAI's reasoning
   * models take only the latter). "": by host, `max_completion_tokens` for api.openai.com, else `max_tokens`.
   */
  LLM_MAX_TOKENS_FIELD: z
    .enum(["", "max_tokens", "max_completion_tokens"], { error: "must be 'max_tokens' or 'max_completion_tokens'" })
    .default(""),
  /** The function-calling model `default` runs on Workers AI (the AI binding) when LLM_BASE_URL is empty; "": never. */
  WORKERS_AI_MODEL: text("@cf/zai-org/glm-4.7-flash"),
  /** How long an isolate keeps the model routes it read from D1; 0 reads them for every call. */
  MODEL_ROUTES_CACHE_MS: nonNegativeInt(10_000),
  /** How long an isolate keeps a mode and the base prompt it read for the agent's OpenAI door; 0 reads them for every message. */
  MODES_CACHE_MS: nonNegativeInt(10_000),
  /** "off": no token or cost budget is checked (no reservation before a model call); usage rows are written all the same. */
  METER_BUDGETS: z.enum(["on", "off"], { error: "must be 'on' or 'off'" }).default("on"),
  /** How many calls like the current one an isolate's lease from its org's meter is asked for (1: one reservation a call). */
  METER_LEASE_CALLS: positiveInt(16),
  /**
   * How long a holder (an isolate, a session object) spends from one lease before it gives it back or renews it; its
   * settles reach the meter with that, or when the lease is spent: at most once in this time otherwise.
   */
  METER_LEASE_MS: positiveInt(1_000),
  /** Failures in a row (before a first byte) after which an isolate skips a route for a while. */
  MODEL_BREAKER_FAILURES: positiveInt(3),
  /** How long a route whose circuit opened is skipped before it is tried again. */
  MODEL_BREAKER_COOLDOWN_MS: positiveInt(30_000),
  MAX_BODY_BYTES: positiveInt(1_048_576),
  MAX_TOOL_RESULT_BYTES: positiveInt(10_485_760),
  AGENT_MAX_ITERATIONS: positiveInt(10),
  AGENT_TURN_TIMEOUT_MS: positiveInt(300_000),
  AGENT_PAUSE_TTL_MS: positiveInt(86_400_000),
  AGENT_MAX_PARSE_FAILURES: positiveInt(3),
  AGENT_MAX_RESUMES: nonNegativeInt(3),
  AGENT_RESUME_CHECK_MS: positiveInt(10_000),
  MODEL_CALL_TIMEOUT_MS: positiveInt(120_000),
  TOOL_RESULT_BUDGET_CHARS: positiveInt(16_000),
  HISTORY_BUDGET_TOKENS: positiveInt(24_000),
  PROMPT_BUDGET_TOKENS: positiveInt(6_000),
  PASSTHROUGH_KEEPALIVE_MS: positiveInt(15_000),
  PASSTHROUGH_FIRST_BYTE_TIMEOUT_MS: positiveInt(120_000),
  PASSTHROUGH_IDLE_TIMEOUT_MS: positiveInt(60_000),
  /** Allow http: MCP servers on loopback (a local server in development); otherwise they must be https:. */
  MCP_ALLOW_HTTP_LOOPBACK: z
    .enum(["true", "false"], { error: "must be 'true' or 'false'" })
    .transform((v) => v === "true")
    .default(false),
  /** How long a session keeps a server's discovered tools before it lists them again. */
  MCP_DISCOVERY_TTL_MS: positiveInt(300_000),
  /** Comma-separated host names the Worker answers to (DNS rebinding); "" answers to any (Cloudflare's routes decide). */
  ALLOWED_HOSTS: z
    .string()
    .transform((v) =>
      v
        .split(",")
        .map((h) => h.trim().toLowerCase())
        .filter(Boolean),
    )
    .default([]),
  /**
   * Comma-separated origins of web apps that may call the API from a browser (CORS), each `scheme://host[:port]`;
   * "" (the default) lets no other origin in. Every other origin is refused, /mcp's included.
   */
  CORS_ALLOWED_ORIGINS: z
    .string()
    .transform((v, ctx) => {
      const origins = v
        .split(",")
        .map((o) => o.trim())
        .filter(Boolean);
      for (const origin of origins) {
        if (originOf(origin) !== origin) {
          ctx.addIssue({
            code: "custom",
            message: `must be origins such as https://chat.example.com, comma-separated (not ${JSON.stringify(origin)})`,
          });
          return z.NEVER;
        }
      }
      return origins;
    })
    .default([]),
  /**
   * Single sign-on: the OpenID provider's issuer URL (discovery at /.well-known/openid-configuration); "" offers
   * no sign-in but API keys. https:, or http: on loopback only (a provider on this machine, `npm run idp:dev`).
   */
  OIDC_ISSUER: z
    .string()
    .trim()
    .superRefine((v, ctx) => {
      const problem = v === "" ? null : issuerProblem(v);
      if (problem) ctx.addIssue({ code: "custom", message: problem });
    })
    .transform((v) => v.replace(/\/+$/, ""))
    .default(""),
  /** The client id aptix is registered with at the provider. */
  OIDC_CLIENT_ID: text(""),
  /** Secret: the client's secret at the provider (`wrangler secret put OIDC_CLIENT_SECRET`). */
  OIDC_CLIENT_SECRET: text(""),
  /** The org every signed-in user belongs to; or OIDC_ORG_CLAIM names the claim that says it. */
  OIDC_ORG: text(""),
  OIDC_ORG_CLAIM: text(""),
  /** The claim that names the user (their id in aptix: keys, sessions and usage rows name it). */
  OIDC_USER_CLAIM: text("email"),
  /** The claim that lists the user's groups, and the comma-separated groups whose members are admins or operators. */
  OIDC_GROUPS_CLAIM: text("groups"),
  OIDC_ADMIN_GROUPS: commaList,
  OIDC_OPERATOR_GROUPS: commaList,
  /** The scopes asked of the provider (space-separated; `openid` is always asked). */
  OIDC_SCOPES: text("openid email profile"),
  /**
   * Cloudflare Access in front of the Worker: the team's domain (https://<team>.cloudflareaccess.com) and the
   * application's AUD tag; its signed Cf-Access-Jwt-Assertion is then taken as the person's identity, in CF_ACCESS_ORG.
   */
  CF_ACCESS_TEAM_DOMAIN: z
    .string()
    .trim()
    .superRefine((v, ctx) => {
      const problem = v === "" ? null : issuerProblem(v);
      if (problem)
        ctx.addIssue({
          code: "custom",
          message: problem.replace("the identity provider's issuer URL", "the Access team's domain"),
        });
    })
    .transform((v) => v.replace(/\/+$/, ""))
    .default(""),
  CF_ACCESS_AUD: text(""),
  CF_ACCESS_ORG: text(""),
  /** How long a browser session lasts at most after sign-in, and without a request. */
  BROWSER_SESSION_LIFETIME_MS: positiveInt(604_800_000),
  BROWSER_SESSION_IDLE_MS: positiveInt(28_800_000),
  /** Sessions idle (no change) for longer than this many days are deleted by the hourly cron; 0 (the default): never. */
  SESSION_RETENTION_DAYS: nonNegativeInt(0),
  /** The most sessions one cron run deletes (the rest wait for the next run). */
  SESSION_RETENTION_BATCH: positiveInt(50),
  /** How long an Idempotency-Key's first answer is kept and replayed, in hours (src/jobs/idempotency.ts). */
  IDEMPOTENCY_WINDOW_HOURS: positiveInt(24),
  /** Webhooks (src/webhooks/): http: endpoints on loopback allowed (development; npm start sets it), else https: only. */
  WEBHOOK_ALLOW_HTTP_LOOPBACK: z
    .enum(["true", "false"], { error: "must be 'true' or 'false'" })
    .transform((v) => v === "true")
    .default(false),
  /** How long a failing delivery is retried (with backoff) before its endpoint is disabled. */
  WEBHOOK_RETRY_WINDOW_MS: positiveInt(86_400_000),
  /** How long one delivery's POST may take before it counts as failed. */
  WEBHOOK_TIMEOUT_MS: positiveInt(5_000),
  /** Comma-separated patterns the workspace tools refuse; "" refuses none. */
  WORKSPACE_PROTECTED_PATHS: z
    .string()
    .transform((v) =>
      v
        .split(",")
        .map((p) => p.trim())
        .filter(Boolean),
    )
    .default([...DEFAULT_PROTECTED_PATHS]),
  /**
   * Secret: the key that wraps the data keys of orgs' provider keys (PUT /admin/secrets; docs/auth.md), at least 32
   * characters (`openssl rand -base64 32`); "": orgs cannot store provider keys. SECRETS_KEY_PREVIOUS: the key before a
   * rotation, still read until POST /admin/secrets/rewrap has wrapped every data key again with SECRETS_KEY.
   */
  SECRETS_KEY: secretsKey,
  SECRETS_KEY_PREVIOUS: secretsKey,
  /** Schedules (docs/schedules.md): how many one person, and one org, may have; how soon a busy session's run retries. */
  SCHEDULES_MAX_PER_USER: nonNegativeInt(50),
  SCHEDULES_MAX_PER_ORG: nonNegativeInt(1_000),
  SCHEDULE_BUSY_RETRY_MS: positiveInt(30_000),
  /** Memories (docs/memory.md): how many one person may have (and their org, of its own). */
  MEMORY_MAX_PER_USER: positiveInt(1_000),
  /** Guardrails (docs/guardrails.md): how long an isolate sums its counters before one D1 batch writes them. */
  GUARDRAIL_COUNT_WINDOW_MS: positiveInt(1_000),
  /** OpenTelemetry traces (src/observability/tracing/tracing-settings.ts; docs/observability.md). */
  ...TRACING_VARS,
});

/** Single sign-on needs its client and an org: a half-configured issuer is refused, naming what is missing. */
export const SettingsVars = SettingsShape.superRefine((v, ctx) => {
  if (v.CF_ACCESS_TEAM_DOMAIN !== "") {
    for (const name of ["CF_ACCESS_AUD", "CF_ACCESS_ORG"] as const) {
      if (v[name].trim() === "") {
        ctx.addIssue({ code: "custom", path: [name], message: "must be set when CF_ACCESS_TEAM_DOMAIN is" });
        return;
      }
    }
  }
  if (v.OIDC_ISSUER === "") return;
  const missing = (name: "OIDC_CLIENT_ID" | "OIDC_CLIENT_SECRET" | "OIDC_ORG", why: string) =>
    ctx.addIssue({ code: "custom", path: [name], message: why });
  if (v.OIDC_CLIENT_ID.trim() === "")
    missing("OIDC_CLIENT_ID", "must be set when OIDC_ISSUER is (the client id at the provider)");
  else if (v.OIDC_CLIENT_SECRET === "")
    missing("OIDC_CLIENT_SECRET", "must be set when OIDC_ISSUER is (`wrangler secret put OIDC_CLIENT_SECRET`)");
  else if (v.OIDC_ORG.trim() === "" && v.OIDC_ORG_CLAIM.trim() === "")
    missing("OIDC_ORG", "or OIDC_ORG_CLAIM must be set when OIDC_ISSUER is (the org signed-in users belong to)");
});

export type SettingName = keyof z.input<typeof SettingsVars>;

/** The vars an Env may carry, as strings (what `wrangler dev --var` and the dashboard set). */
export type SettingsEnv = { [K in SettingName]?: string };

export interface Settings {
  llm: {
    baseUrl: string;
    model: string;
    apiKey: string;
    toolFormat: "native" | "json";
    /** The field `default` sends the answer's limit in; null: by the base URL's host. */
    maxTokensField: "max_tokens" | "max_completion_tokens" | null;
    callTimeoutMs: number;
    /** The Workers AI model of `default` without LLM_BASE_URL; "" never uses Workers AI. */
    workersAiModel: string;
  };
  /** Model routes (src/routing): how long an isolate keeps them, and its circuit breaker. */
  routing: { cacheMs: number; breakerFailures: number; breakerCooldownMs: number };
  /** The mode catalog: how long an isolate keeps a mode (and the base prompt) the agent's OpenAI door read. */
  modes: { cacheMs: number };
  /** Whether model calls reserve in their org's meter (token and cost budgets). */
  metering: { budgets: boolean; leaseCalls: number; leaseMs: number };
  limits: { maxBodyBytes: number; maxToolResultBytes: number };
  /** Turns a restart of the session's object cut off (src/agent/turn-status.ts, src/session/turn-driver.ts). */
  resume: {
    /** How many times one turn resumes by itself; once more, it ends as `turn_interrupted`. 0: never. */
    maxResumes: number;
    /** While a turn works, the object's alarm is this far ahead: an object that stopped wakes by then. */
    checkMs: number;
  };
  agent: {
    /** Model calls in one turn (the design document: 10). */
    maxIterations: number;
    /** Working time of one turn (the design document: 5 minutes); time paused for a person or client is not counted. */
    turnTimeoutMs: number;
    /** How long a paused turn waits for approvals or client results before it expires. */
    pauseTtlMs: number;
    /** Malformed JSON-format tool calls in a row before the turn fails (the design document: 3). */
    maxParseFailures: number;
    /** Characters of one tool result the model sees; the whole result stays in the session. */
    toolResultBudgetChars: number;
    /** Estimated tokens of earlier turns sent with each request. */
    historyBudgetTokens: number;
    /** Estimated tokens of the enhanced system prompt. */
    promptBudgetTokens: number;
  };
  /** The passthrough's clocks; where it forwards to is a model route's (src/routing), `default` made from `llm`. */
  passthrough: {
    /** An SSE comment this often while a committed stream has nothing from the upstream yet. */
    keepaliveMs: number;
    /** Give up when the upstream has sent no first byte (headers of a JSON answer, a first SSE chunk) by then. */
    firstByteTimeoutMs: number;
    /** End a stream (or a JSON body) that stays silent this long after its first byte. */
    idleTimeoutMs: number;
  };
  workspace: { protectedPaths: readonly string[] };
  /** Retention: sessions idle longer than `retentionDays` (0: never) are deleted, at most `retentionBatch` a run. */
  sessions: { retentionDays: number; retentionBatch: number };
  /** Schedules: the most a person and an org may have; how soon a run whose session is busy is tried again. */
  schedules: { maxPerUser: number; maxPerOrg: number; busyRetryMs: number };
  memory: { maxPerUser: number };
  guardrails: { countWindowMs: number };
  /** Idempotency-Key: how long a key's first answer is kept and replayed. */
  idempotency: { windowMs: number };
  /** The host names requests may name; empty: any. */
  http: { allowedHosts: readonly string[]; corsAllowedOrigins: readonly string[] };
  mcp: { allowHttpLoopback: boolean; discoveryTtlMs: number };
  /** Signed webhooks: loopback http: endpoints (development), the retry window, one POST's timeout. */
  webhooks: { allowHttpLoopback: boolean; retryWindowMs: number; timeoutMs: number };
  /** null: tracing is off (no OTLP endpoint, or OTEL_SDK_DISABLED). */
  tracing: TracingSettings | null;
  /** The keys that wrap orgs' provider keys: null when SECRETS_KEY is not set (orgs cannot store any). */
  secrets: { key: string; previousKey: string | null } | null;
  auth: {
    /** Single sign-on, or null when OIDC_ISSUER is empty. */
    oidc: OidcSettings | null;
    /** Cloudflare Access in front of the Worker, or null. */
    access: { teamDomain: string; aud: string; org: string } | null;
    browserSessions: { lifetimeMs: number; idleMs: number };
  };
}

export interface OidcSettings {
  issuer: string;
  clientId: string;
  clientSecret: string;
  /** The org of every user, or null when `orgClaim` says it. */
  org: string | null;
  orgClaim: string | null;
  userClaim: string;
  groupsClaim: string;
  adminGroups: readonly string[];
  operatorGroups: readonly string[];
  scopes: string;
}

/** A var whose value the schema refuses: the message names it and says what it must be. */
export class SettingsError extends Error {
  constructor(
    readonly variable: string,
    problem: string,
  ) {
    super(`${variable} ${problem}.`);
    this.name = "SettingsError";
  }
}

function fromVars(v: z.output<typeof SettingsVars>): Settings {
  return {
    llm: {
      baseUrl: v.LLM_BASE_URL,
      model: v.LLM_MODEL,
      apiKey: v.LLM_API_KEY,
      toolFormat: v.LLM_TOOL_FORMAT,
      maxTokensField: v.LLM_MAX_TOKENS_FIELD || null,
      callTimeoutMs: v.MODEL_CALL_TIMEOUT_MS,
      workersAiModel: v.WORKERS_AI_MODEL.trim(),
    },
    metering: { budgets: v.METER_BUDGETS === "on", leaseCalls: v.METER_LEASE_CALLS, leaseMs: v.METER_LEASE_MS },
    modes: { cacheMs: v.MODES_CACHE_MS },
    routing: {
      cacheMs: v.MODEL_ROUTES_CACHE_MS,
      breakerFailures: v.MODEL_BREAKER_FAILURES,
      breakerCooldownMs: v.MODEL_BREAKER_COOLDOWN_MS,
    },
    limits: { maxBodyBytes: v.MAX_BODY_BYTES, maxToolResultBytes: v.MAX_TOOL_RESULT_BYTES },
    resume: { maxResumes: v.AGENT_MAX_RESUMES, checkMs: v.AGENT_RESUME_CHECK_MS },
    agent: {
      maxIterations: v.AGENT_MAX_ITERATIONS,
      turnTimeoutMs: v.AGENT_TURN_TIMEOUT_MS,
      pauseTtlMs: v.AGENT_PAUSE_TTL_MS,
      maxParseFailures: v.AGENT_MAX_PARSE_FAILURES,
      toolResultBudgetChars: v.TOOL_RESULT_BUDGET_CHARS,
      historyBudgetTokens: v.HISTORY_BUDGET_TOKENS,
      promptBudgetTokens: v.PROMPT_BUDGET_TOKENS,
    },
    passthrough: {
      keepaliveMs: v.PASSTHROUGH_KEEPALIVE_MS,
      firstByteTimeoutMs: v.PASSTHROUGH_FIRST_BYTE_TIMEOUT_MS,
      idleTimeoutMs: v.PASSTHROUGH_IDLE_TIMEOUT_MS,
    },
    workspace: { protectedPaths: v.WORKSPACE_PROTECTED_PATHS },
    sessions: { retentionDays: v.SESSION_RETENTION_DAYS, retentionBatch: v.SESSION_RETENTION_BATCH },
    schedules: {
      maxPerUser: v.SCHEDULES_MAX_PER_USER,
      maxPerOrg: v.SCHEDULES_MAX_PER_ORG,
      busyRetryMs: v.SCHEDULE_BUSY_RETRY_MS,
    },
    memory: { maxPerUser: v.MEMORY_MAX_PER_USER },
    guardrails: { countWindowMs: v.GUARDRAIL_COUNT_WINDOW_MS },
    idempotency: { windowMs: v.IDEMPOTENCY_WINDOW_HOURS * 3_600_000 },
    http: { allowedHosts: v.ALLOWED_HOSTS, corsAllowedOrigins: v.CORS_ALLOWED_ORIGINS },
    mcp: { allowHttpLoopback: v.MCP_ALLOW_HTTP_LOOPBACK, discoveryTtlMs: v.MCP_DISCOVERY_TTL_MS },
    webhooks: {
      allowHttpLoopback: v.WEBHOOK_ALLOW_HTTP_LOOPBACK,
      retryWindowMs: v.WEBHOOK_RETRY_WINDOW_MS,
      timeoutMs: v.WEBHOOK_TIMEOUT_MS,
    },
    tracing: tracingOf(v),
    secrets: v.SECRETS_KEY === "" ? null : { key: v.SECRETS_KEY, previousKey: v.SECRETS_KEY_PREVIOUS || null },
    auth: {
      oidc:
        v.OIDC_ISSUER === ""
          ? null
          : {
              issuer: v.OIDC_ISSUER,
              clientId: v.OIDC_CLIENT_ID.trim(),
              clientSecret: v.OIDC_CLIENT_SECRET,
              org: v.OIDC_ORG.trim() || null,
              orgClaim: v.OIDC_ORG.trim() ? null : v.OIDC_ORG_CLAIM.trim(),
              userClaim: v.OIDC_USER_CLAIM.trim() || "email",
              groupsClaim: v.OIDC_GROUPS_CLAIM.trim() || "groups",
              adminGroups: v.OIDC_ADMIN_GROUPS,
              operatorGroups: v.OIDC_OPERATOR_GROUPS,
              scopes: [...new Set(["openid", ...v.OIDC_SCOPES.split(/\s+/).filter(Boolean)])].join(" "),
            },
      browserSessions: { lifetimeMs: v.BROWSER_SESSION_LIFETIME_MS, idleMs: v.BROWSER_SESSION_IDLE_MS },
      access:
        v.CF_ACCESS_TEAM_DOMAIN === ""
          ? null
          : { teamDomain: v.CF_ACCESS_TEAM_DOMAIN, aud: v.CF_ACCESS_AUD.trim(), org: v.CF_ACCESS_ORG.trim() },
    },
  };
}

/** Parses the vars of `env` (only those the schema names; bindings are left alone). Throws SettingsError. */
export function parseSettings(env: object): Settings {
  const vars: Record<string, unknown> = {};
  for (const name of Object.keys(SettingsVars.shape)) {
    const value: unknown = Reflect.get(env, name);
    if (value !== undefined) vars[name] = value;
  }
  const parsed = SettingsVars.safeParse(vars);
  if (parsed.success) return fromVars(parsed.data);
  const problem = firstProblem(parsed.error);
  throw new SettingsError(problem.param ?? "a var", problem.detail);
}

// The env object is the same for every request an isolate serves: parse it once, not per request.
const cache = new WeakMap<object, Settings | SettingsError>();

/** The settings of `env`, parsed once per env object; a malformed var throws the same SettingsError each time. */
export function settings(env: object): Settings {
  let hit = cache.get(env);
  if (!hit) {
    try {
      hit = parseSettings(env);
    } catch (error) {
      if (!(error instanceof SettingsError)) throw error;
      hit = error;
    }
    cache.set(env, hit);
  }
  if (hit instanceof SettingsError) throw hit;
  return hit;
}
