// The Messages wire's answers in Anthropic's shape: every error a /v1/messages route answers (the key refused,
// a bad body, the model call limit, an upstream's error mirrored) becomes `{"type":"error","error":{type,message}}`
// with its status, and every answer carries `request-id`, as Anthropic's API does.
import { createMiddleware } from "hono/factory";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import type { OpenAIErrorBody } from "../errors";
import type { AppBindings } from "../http";
import { openAIErrorToAnthropic } from "../translate/anthropic-to-chat";

function isOpenAIErrorBody(value: unknown): value is OpenAIErrorBody {
  if (typeof value !== "object" || value === null || !("error" in value) || "type" in value) return false;
  const error = value.error;
  return typeof error === "object" && error !== null && "message" in error && typeof error.message === "string";
}

/** Put first on the Messages routes: it sees the answer after every other middleware and the route are done. */
export const anthropicErrorShape = createMiddleware<AppBindings>(async (c, next) => {
  await next();
  const res = c.res;
  const isJson = res.headers.get("content-type")?.startsWith("application/json") ?? false;
  if (res.status >= 400 && isJson) {
    const text = await res.text();
    let body: unknown = null;
    try {
      body = JSON.parse(text);
    } catch {
      // Not JSON after all: sent on as it was.
    }
    const headers = new Headers(res.headers);
    headers.set("request-id", c.get("requestId"));
    headers.delete("content-length");
    const out = isOpenAIErrorBody(body) ? JSON.stringify(openAIErrorToAnthropic(res.status, body)) : text;
    c.res = undefined;
    c.res = new Response(out, { status: res.status as ContentfulStatusCode, headers });
    return;
  }
  try {
    res.headers.set("request-id", c.get("requestId"));
  } catch {
    // A response with immutable headers: left unchanged.
  }
});
