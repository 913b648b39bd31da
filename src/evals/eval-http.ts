// How the eval runner speaks to an aptix: JSON over HTTP with the caller's key, through a fetch it is given (the
// global one from the CLI, the Worker's own app for a server-side run, `exports.default.fetch` in tests). Every
// request carries the eval header, so the turns' usage rows say `eval` (docs/evals.md, "Metered as evals").
export const EVAL_HEADER = "x-aptix-eval";

export type Fetch = (input: Request | string | URL, init?: RequestInit) => Promise<Response>;

export type HttpAnswer =
  | { ok: true; status: number; body: unknown }
  | { ok: false; status: number; body: unknown; message: string; code: string | null };

export interface EvalHttp {
  send(method: string, path: string, body?: unknown): Promise<HttpAnswer>;
}

export interface EvalTarget {
  /** The aptix to run against, e.g. http://127.0.0.1:8787 (no trailing path). */
  baseUrl: string;
  /** An org admin's key (evals pin versions and meter as `eval`: both are an org admin's). */
  key: string;
  fetch?: Fetch;
}

export function evalHttp(target: EvalTarget): EvalHttp {
  const doFetch = target.fetch ?? fetch;
  const base = target.baseUrl.replace(/\/+$/, "");
  return {
    async send(method, path, body) {
      const response = await doFetch(`${base}${path}`, {
        method,
        headers: {
          authorization: `Bearer ${target.key}`,
          [EVAL_HEADER]: "1",
          ...(body === undefined ? {} : { "content-type": "application/json" }),
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      const text = await response.text();
      let parsed: unknown = null;
      try {
        parsed = text ? JSON.parse(text) : null;
      } catch {
        parsed = text;
      }
      if (response.ok) return { ok: true, status: response.status, body: parsed };
      const error = errorOf(parsed);
      return {
        ok: false,
        status: response.status,
        body: parsed,
        message: error?.message ?? `HTTP ${response.status}`,
        code: error?.code ?? null,
      };
    },
  };
}

function errorOf(body: unknown): { message: string; code: string | null } | null {
  if (body === null || typeof body !== "object" || !("error" in body)) return null;
  const error = body.error;
  if (error === null || typeof error !== "object") return null;
  const message = "message" in error && typeof error.message === "string" ? error.message : null;
  const code = "code" in error && typeof error.code === "string" ? error.code : null;
  return message ? { message, code } : null;
}
