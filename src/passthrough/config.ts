// The passthrough's settings, read from the Worker's vars and secrets (with defaults for anything unset).
import { z } from "zod";
import { positiveIntVar as positive } from "../env-vars";

export interface PassthroughConfig {
  /** The upstream's OpenAI base URL, ending in /v1; empty when none is configured (the offline demo). */
  baseUrl: string;
  /** The server's own upstream key; a client's key never goes upstream. */
  apiKey: string;
  /** An SSE comment this often while a committed stream has nothing from the upstream yet. */
  keepaliveMs: number;
  /** Give up when the upstream has sent no first byte (headers of a JSON answer, a first SSE chunk) by then. */
  firstByteTimeoutMs: number;
  /** End a stream (or a JSON body) that stays silent this long after its first byte. */
  idleTimeoutMs: number;
}

const PassthroughEnv = z.object({
  LLM_BASE_URL: z.string().catch(""),
  LLM_API_KEY: z.string().catch(""),
  PASSTHROUGH_KEEPALIVE_MS: positive(15_000),
  PASSTHROUGH_FIRST_BYTE_TIMEOUT_MS: positive(120_000),
  PASSTHROUGH_IDLE_TIMEOUT_MS: positive(60_000),
});

// The env object is the same for every request an isolate serves: parse it once, not per request.
const cache = new WeakMap<object, PassthroughConfig>();

export function passthroughConfig(env: Cloudflare.Env): PassthroughConfig {
  const hit = cache.get(env);
  if (hit) return hit;
  const e = PassthroughEnv.parse(env);
  const config: PassthroughConfig = {
    baseUrl: e.LLM_BASE_URL.trim().replace(/\/+$/, ""),
    apiKey: e.LLM_API_KEY,
    keepaliveMs: e.PASSTHROUGH_KEEPALIVE_MS,
    firstByteTimeoutMs: e.PASSTHROUGH_FIRST_BYTE_TIMEOUT_MS,
    idleTimeoutMs: e.PASSTHROUGH_IDLE_TIMEOUT_MS,
  };
  cache.set(env, config);
  return config;
}
