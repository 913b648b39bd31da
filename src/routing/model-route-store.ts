// The model_routes table: the one module with its SQL and its row codec (snake_case columns to a ModelRoute,
// once). The routes an org sees, one owner's routes and their writes, and the look-ups of who names a route or a
// secret.
import { z } from "zod";
import type { Db } from "../db";
import { DEFAULT_ANTHROPIC_VERSION } from "../llm/anthropic-chat-model";
import {
  defaultMaxTokensField,
  INPUT_MODALITIES,
  MAX_TOKENS_FIELDS,
  MODEL_PROVIDERS,
  type ModelRoute,
  type ModelRouteBody,
  PROMPT_CACHE_TTLS,
} from "./model-routes";

const Row = z.object({
  org: z.string(),
  name: z.string(),
  provider: z.enum(MODEL_PROVIDERS),
  model: z.string(),
  base_url: z.string().nullable(),
  api_key_secret: z.string().nullable(),
  tool_format: z.enum(["native", "json"]),
  timeout_ms: z.number().int().nullable(),
  fallbacks: z.string().transform((text) => z.array(z.string()).parse(JSON.parse(text))),
  input_price_per_mtok: z.number().nullable(),
  output_price_per_mtok: z.number().nullable(),
  cached_input_price_per_mtok: z.number().nullable(),
  cache_write_price_per_mtok: z.number().nullable(),
  prompt_caching: z.number().int(),
  prompt_cache_ttl: z.enum(PROMPT_CACHE_TTLS).nullable(),
  prompt_cache_key: z.number().int(),
  max_tokens_field: z.enum(MAX_TOKENS_FIELDS).nullable().optional(),
  context_tokens: z.number().int().nullable(),
  anthropic_version: z.string().nullable(),
  input_modalities: z.string().transform((text) => z.array(z.enum(INPUT_MODALITIES)).parse(JSON.parse(text))),
  created_at: z.string(),
  updated_at: z.string(),
});

function routeOfRow(row: unknown): ModelRoute {
  const r = Row.parse(row);
  return {
    name: r.name,
    provider: r.provider,
    model: r.model,
    baseUrl: r.base_url,
    apiKeySecret: r.api_key_secret,
    toolFormat: r.tool_format,
    timeoutMs: r.timeout_ms,
    fallbacks: r.fallbacks,
    inputPricePerMTok: r.input_price_per_mtok,
    outputPricePerMTok: r.output_price_per_mtok,
    cachedInputPricePerMTok: r.cached_input_price_per_mtok,
    cacheWritePricePerMTok: r.cache_write_price_per_mtok,
    promptCaching: r.prompt_caching === 1,
    promptCacheTtl: r.provider === "anthropic" ? (r.prompt_cache_ttl ?? "5m") : null,
    promptCacheKey: r.prompt_cache_key === 1,
    maxTokensField:
      r.provider === "openai_compatible" ? (r.max_tokens_field ?? defaultMaxTokensField(r.base_url ?? "")) : null,
    contextTokens: r.context_tokens,
    inputModalities: r.input_modalities,
    anthropicVersion: r.provider === "anthropic" ? (r.anthropic_version ?? DEFAULT_ANTHROPIC_VERSION) : null,
    source: "stored",
    org: r.org === "" ? null : r.org,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  };
}

/** The routes org `org` may use (its own and the deployment's; its own first where both have a name), from D1. */
export async function routesSeenBy(db: Db, org: string | null): Promise<ModelRoute[]> {
  const { results } = await db
    .prepare("SELECT * FROM model_routes WHERE org IN ('', ?) ORDER BY name, org DESC")
    .bind(org ?? "")
    .all();
  return results.map(routeOfRow);
}

/** The routes of one owner: an org's own, or (owner null) the deployment's. */
export class ModelRouteRegistry {
  private readonly org: string;

  constructor(
    private readonly db: Db,
    owner: string | null,
  ) {
    this.org = owner ?? "";
  }

  async list(): Promise<ModelRoute[]> {
    const { results } = await this.db
      .prepare("SELECT * FROM model_routes WHERE org = ? ORDER BY name")
      .bind(this.org)
      .all();
    return results.map(routeOfRow);
  }

  async get(name: string): Promise<ModelRoute | null> {
    const row = await this.db
      .prepare("SELECT * FROM model_routes WHERE org = ? AND name = ?")
      .bind(this.org, name)
      .first();
    return row ? routeOfRow(row) : null;
  }

  /**
   * Stores the route, with `also` in the same batch (its audit row); `created` when it is new. The caller checked its
   * fallbacks (fallbackProblem).
   */
  async put(
    name: string,
    body: ModelRouteBody,
    also: D1PreparedStatement[] = [],
  ): Promise<{ route: ModelRoute; created: boolean }> {
    const existed = (await this.get(name)) !== null;
    const write = this.db
      .prepare(
        `INSERT INTO model_routes (org, name, provider, model, base_url, api_key_secret, tool_format, timeout_ms,
           fallbacks, input_price_per_mtok, output_price_per_mtok, context_tokens, anthropic_version, input_modalities,
           cached_input_price_per_mtok, cache_write_price_per_mtok, prompt_caching, prompt_cache_ttl, prompt_cache_key,
           max_tokens_field)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
         ON CONFLICT (org, name) DO UPDATE SET provider = excluded.provider, model = excluded.model,
           base_url = excluded.base_url, api_key_secret = excluded.api_key_secret,
           tool_format = excluded.tool_format, timeout_ms = excluded.timeout_ms, fallbacks = excluded.fallbacks,
           input_price_per_mtok = excluded.input_price_per_mtok, output_price_per_mtok = excluded.output_price_per_mtok,
           context_tokens = excluded.context_tokens, anthropic_version = excluded.anthropic_version,
           input_modalities = excluded.input_modalities,
           cached_input_price_per_mtok = excluded.cached_input_price_per_mtok,
           cache_write_price_per_mtok = excluded.cache_write_price_per_mtok, prompt_caching = excluded.prompt_caching,
           prompt_cache_ttl = excluded.prompt_cache_ttl, prompt_cache_key = excluded.prompt_cache_key,
           max_tokens_field = excluded.max_tokens_field,
           updated_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now')`,
      )
      .bind(
        this.org,
        name,
        body.provider,
        body.model,
        body.baseUrl ?? null,
        body.apiKeySecret ?? null,
        body.toolFormat,
        body.timeoutMs ?? null,
        JSON.stringify(body.fallbacks),
        body.inputPricePerMTok,
        body.outputPricePerMTok,
        body.contextTokens,
        body.provider === "anthropic" ? (body.anthropicVersion ?? DEFAULT_ANTHROPIC_VERSION) : null,
        JSON.stringify(body.inputModalities),
        body.cachedInputPricePerMTok,
        body.cacheWritePricePerMTok,
        body.promptCaching ? 1 : 0,
        body.provider === "anthropic" ? (body.promptCacheTtl ?? "5m") : null,
        body.promptCacheKey ? 1 : 0,
        body.provider === "openai_compatible"
          ? (body.maxTokensField ?? defaultMaxTokensField(body.baseUrl ?? ""))
          : null,
      );
    await this.db.batch([write, ...also]);
    const route = await this.get(name);
    if (!route) throw new Error(`model route ${name} was not stored`);
    return { route, created: !existed };
  }

  /** Removes the route, with `also` in the same batch (its audit row). */
  async delete(name: string, also: D1PreparedStatement[] = []): Promise<void> {
    await this.db.batch([
      this.db.prepare("DELETE FROM model_routes WHERE org = ? AND name = ?").bind(this.org, name),
      ...also,
    ]);
  }
}

/** The routes whose fallbacks may name `name` as `owner` (an org, or "": the deployment's, for every org) sees it. */
export async function routesFallingBackTo(
  db: Db,
  name: string,
  owner: string,
): Promise<{ org: string; name: string }[]> {
  // An org's route naming a deployment route falls back to it unless the org has its own route of that name.
  const { results } = await db
    .prepare(
      `SELECT r.org, r.name, r.fallbacks FROM model_routes r WHERE (r.org = ?2 OR (?2 = '' AND NOT EXISTS
         (SELECT 1 FROM model_routes o WHERE o.org = r.org AND o.name = ?1)))`,
    )
    .bind(name, owner)
    .all();
  return results
    .map((r) => Row.pick({ org: true, name: true, fallbacks: true }).parse(r))
    .filter((r) => r.fallbacks.includes(name))
    .map((r) => ({ org: r.org, name: r.name }));
}

/** The org's routes that name the secret `secret` (as "model route <name>"), to batch with other look-ups. */
export function routesNamingSecretStatement(db: Db, org: string, secret: string): D1PreparedStatement {
  return db
    .prepare("SELECT 'model route ' || name AS user FROM model_routes WHERE org = ? AND api_key_secret = ?")
    .bind(org, secret);
}
