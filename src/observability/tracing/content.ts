// Content on spans, only when OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT opts in: prompts, completions,
// tool arguments and results, in the GenAI conventions' JSON shapes, cut to a size, and with every secret the
// Worker knows taken out first (its secret bindings: the LLM key, route keys, MCP tokens, the collector's
// headers, the single sign-on client's secret; and aptix's own key and token formats).

import { SettingsVars } from "../../settings";
import { type ChatMessage, userText } from "../../wire/openai";

/** The most characters one content attribute carries. */
export const CONTENT_CHARS = 16_384;

/** Settings that are secrets although the settings schema names them. */
const SECRET_SETTINGS = new Set(["LLM_API_KEY", "OIDC_CLIENT_SECRET", "OTEL_EXPORTER_OTLP_HEADERS"]);
const PUBLIC_SETTINGS = new Set(Object.keys(SettingsVars.shape).filter((name) => !SECRET_SETTINGS.has(name)));

/** aptix's own credentials by their formats: API keys (`ak_…`) and WebSocket tickets (`wst_…`). */
const OWN_TOKENS = /\b(?:ak|wst)_[A-Za-z0-9_-]{8,}/g;

/**
 * Takes every secret value of `env` out of `text`: each string binding that is not a public setting (secrets,
 * route and MCP keys, which have names of the operator's choosing), and the collector headers' values.
 */
export function secretRedactor(env: object): (text: string) => string {
  const secrets: string[] = [];
  for (const [name, value] of Object.entries(env)) {
    if (typeof value !== "string" || PUBLIC_SETTINGS.has(name)) continue;
    if (value.length >= 6) secrets.push(value);
    if (name === "OTEL_EXPORTER_OTLP_HEADERS") {
      for (const pair of value.split(",")) {
        const raw = pair.slice(pair.indexOf("=") + 1).trim();
        let decoded = raw;
        try {
          decoded = decodeURIComponent(raw);
        } catch {
          // Not percent-encoded: the raw value is the value.
        }
        // The header's value, and its credential without the scheme (`Bearer <token>`: the token alone too).
        const credential = decoded.includes(" ") ? decoded.slice(decoded.indexOf(" ") + 1).trim() : decoded;
        for (const secret of [raw, decoded, credential]) if (secret.length >= 6) secrets.push(secret);
      }
    }
  }
  // A secret quoted inside JSON text (content is redacted as JSON) has its quotes and backslashes escaped.
  for (const secret of [...secrets]) {
    const escaped = JSON.stringify(secret).slice(1, -1);
    if (escaped !== secret) secrets.push(escaped);
  }
  // Longest first, so a secret that contains another is taken out whole.
  secrets.sort((a, b) => b.length - a.length);
  return (text) => {
    let out = text;
    for (const secret of secrets) if (out.includes(secret)) out = out.replaceAll(secret, "[redacted]");
    return out.replace(OWN_TOKENS, "[redacted]");
  };
}

/** Cut to CONTENT_CHARS. */
export function bounded(text: string): string {
  return text.length > CONTENT_CHARS ? `${text.slice(0, CONTENT_CHARS)}…` : text;
}

type Part =
  | { type: "text"; content: string }
  | { type: "tool_call"; id: string; name: string; arguments: string }
  | { type: "tool_call_response"; id: string; response: string };

/** Chat messages in the GenAI conventions' input/output message shape: `[{ role, parts: [...] }]`. */
export function genAiMessages(messages: readonly ChatMessage[]): { role: string; parts: Part[] }[] {
  return messages.map((m) => {
    const parts: Part[] = [];
    // A user's message with images: its text parts (each image's naming line among them), never an image's data.
    const text = typeof m.content === "string" ? m.content : m.content == null ? "" : userText(m.content);
    if (m.role === "tool") {
      parts.push({ type: "tool_call_response", id: m.tool_call_id ?? "", response: text });
    } else if (text !== "") {
      parts.push({ type: "text", content: text });
    }
    for (const call of ("tool_calls" in m ? m.tool_calls : undefined) ?? []) {
      parts.push({ type: "tool_call", id: call.id, name: call.function.name, arguments: call.function.arguments });
    }
    return { role: m.role, parts };
  });
}
