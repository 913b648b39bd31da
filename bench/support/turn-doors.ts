// The ways bench:ops takes a turn, each driven as its client drives it: aptix's doors (`http`, `sse`, `ws`,
// `openai`) and the passthrough, and the Agents SDK peers' (the plain Agent's HTTP turn, the AIChatAgent's WebSocket
// turn, as bench:peers drives them). Each turn is checked for the scripted final answer.
import { randomUUID } from "node:crypto";
import { api } from "./bench-api.ts";
import { sseData } from "./sse-data.ts";

/** seeds/local.sql's key: an operator of dev-org (bench:ops's counts are an operator's to read). */
const KEY = "dev-key";
export const auth = { authorization: `Bearer ${KEY}` };

/** The answer every scripted turn ends with. */
export const FINAL_TEXT = "Both greetings are ready: Dana and Lee have been welcomed to Aptix.";

/** A conversation on one door: `turn` runs one turn to its end and checks it. */
export interface Door {
  name: string;
  open(): Promise<{ turn(content: string): Promise<void>; close(): void }>;
}

/**
 * A user's message as the Agents SDK's WebSocketChatTransport (useAgentChat) sends it to an AIChatAgent: a
 * cf_agent_use_chat_request frame with {messages, trigger: "submit-message"}; its id names the response's frames.
 */
export function chatAgentRequest(content: string): { id: string; frame: string } {
  const id = randomUUID().slice(0, 8);
  const message = { id: randomUUID(), role: "user", parts: [{ type: "text", text: content }] };
  const body = JSON.stringify({ messages: [message], trigger: "submit-message" });
  return { id, frame: JSON.stringify({ id, init: { method: "POST", body }, type: "cf_agent_use_chat_request" }) };
}

function checkText(door: string, text: string): void {
  if (text !== FINAL_TEXT) throw new Error(`${door}: the turn answered ${JSON.stringify(text).slice(0, 300)}`);
}

async function newSession(base: string): Promise<string> {
  return String((await api(base, "POST", "/context/sessions", {})).sessionId);
}

export function httpDoor(base: string): Door {
  return {
    name: "http",
    async open() {
      const path = `/context/sessions/${await newSession(base)}/messages`;
      return {
        async turn(content) {
          const turn = await api(base, "POST", path, { content });
          if (turn.status !== "completed")
            throw new Error(`http: the turn ended ${JSON.stringify(turn).slice(0, 300)}`);
          checkText("http", String(turn.text));
        },
        close() {},
      };
    },
  };
}

interface Frame {
  type?: string;
  text?: string;
  [key: string]: unknown;
}

/** The end of a turn in the session's frames (docs/protocol.md): completed, or a failure. */
function turnEnd(frame: Frame, door: string): boolean {
  if (frame.type === "error" || frame.type === "turn_failed") {
    throw new Error(`${door}: ${JSON.stringify(frame).slice(0, 300)}`);
  }
  return frame.type === "turn_completed";
}

export function sseDoor(base: string): Door {
  return {
    name: "sse",
    async open() {
      const path = `/context/sessions/${await newSession(base)}/messages`;
      return {
        async turn(content) {
          const response = await fetch(`${base}${path}`, {
            method: "POST",
            headers: { ...auth, "content-type": "application/json", accept: "text/event-stream" },
            body: JSON.stringify({ content }),
          });
          if (!response.ok || !response.body) throw new Error(`sse: answered ${response.status}`);
          let completed = false;
          for await (const data of sseData(response.body)) {
            if (turnEnd(JSON.parse(data) as Frame, "sse")) completed = true;
          }
          if (!completed) throw new Error("sse: the stream ended without turn_completed");
        },
        close() {},
      };
    },
  };
}

export function wsDoor(base: string): Door {
  return {
    name: "ws",
    async open() {
      const sessionId = await newSession(base);
      const { ticket } = await api(base, "POST", `/context/sessions/${sessionId}/ws-ticket`, {});
      const ws = new WebSocket(
        `${base.replace(/^http/, "ws")}/context/sessions/${sessionId}/ws?ticket=${String(ticket)}`,
      );
      let waiter: { resolve(): void; reject(error: Error): void } | null = null;
      let text = "";
      const opened = new Promise<void>((resolve, reject) => {
        ws.addEventListener("message", () => resolve(), { once: true });
        ws.addEventListener("error", () => reject(new Error("ws: the socket failed")), { once: true });
      });
      ws.addEventListener("message", (event) => {
        const frame = JSON.parse(String(event.data)) as Frame;
        if (frame.type === "assistant_delta") text += String(frame.text ?? "");
        try {
          if (turnEnd(frame, "ws")) waiter?.resolve();
        } catch (error) {
          waiter?.reject(error as Error);
        }
      });
      await opened; // session_state
      return {
        turn(content) {
          text = "";
          return new Promise<void>((resolve, reject) => {
            waiter = {
              resolve: () => {
                waiter = null;
                try {
                  checkText("ws", text);
                  resolve();
                } catch (error) {
                  reject(error);
                }
              },
              reject,
            };
            ws.send(JSON.stringify({ type: "user_message", content, clientMessageId: randomUUID() }));
          });
        },
        close() {
          ws.close(1000, "bench done");
        },
      };
    },
  };
}

/**
 * One chat completion of `content` at `url` (the agent's OpenAI door, or the passthrough), its answer's text checked;
 * resolves to the answer's response headers.
 */
async function chatCompletion(
  door: string,
  url: string,
  model: string,
  content: string,
  headers: Record<string, string> = {},
): Promise<Headers> {
  const response = await fetch(url, {
    method: "POST",
    headers: { ...auth, "content-type": "application/json", ...headers },
    body: JSON.stringify({ model, messages: [{ role: "user", content }] }),
  });
  const body = (await response.json()) as { choices?: { message?: { content?: string } }[] };
  if (!response.ok) throw new Error(`${door}: answered ${response.status}: ${JSON.stringify(body)}`);
  checkText(door, String(body.choices?.[0]?.message?.content));
  return response.headers;
}

export function openaiDoor(base: string): Door {
  return {
    name: "openai",
    async open() {
      let session: string | null = null;
      return {
        async turn(content) {
          const headers = await chatCompletion(
            "openai",
            `${base}/agent/v1/chat/completions`,
            "aptix-agent/general",
            content,
            session ? { "x-aptix-session": session } : {},
          );
          session = headers.get("x-aptix-session");
        },
        close() {},
      };
    },
  };
}

/** The passthrough: each "turn" is one chat completion relayed to the upstream. */
export function passthroughDoor(base: string): Door {
  return {
    name: "passthrough",
    async open() {
      return {
        async turn(content) {
          await chatCompletion("passthrough", `${base}/v1/chat/completions`, "bench-model", content);
        },
        close() {},
      };
    },
  };
}

/** The plain Agent peer's HTTP turn (bench/peers/plain-agent.ts). */
export function plainPeerDoor(base: string): Door {
  return {
    name: "http",
    async open() {
      const url = `${base}/agents/plain-peer/${randomUUID()}`;
      await (await fetch(url)).text();
      return {
        async turn(content) {
          const response = await fetch(url, {
            method: "POST",
            headers: { "content-type": "application/json" },
            body: JSON.stringify({ content }),
          });
          const body = (await response.json()) as { text?: string };
          if (!response.ok) throw new Error(`plain Agent: answered ${response.status}`);
          checkText("plain Agent", String(body.text));
        },
        close() {},
      };
    },
  };
}

/** The AIChatAgent peer's WebSocket turn, as the SDK's WebSocketChatTransport sends it (bench/peers/chat-agent.ts). */
export function chatPeerDoor(base: string): Door {
  return {
    name: "ws",
    async open() {
      const ws = new WebSocket(`${base.replace(/^http/, "ws")}/agents/chat-peer/${randomUUID()}`);
      const pending = new Map<string, { text: string; resolve(): void; reject(e: Error): void }>();
      await new Promise<void>((resolve, reject) => {
        ws.addEventListener("message", (event) => {
          if ((JSON.parse(String(event.data)) as Frame).type === "cf_agent_mcp_servers") resolve();
        });
        ws.addEventListener("error", () => reject(new Error("AIChatAgent: the socket failed")), { once: true });
      });
      ws.addEventListener("message", (event) => {
        const frame = JSON.parse(String(event.data)) as Frame & { id?: string; body?: string; done?: boolean };
        const turn = frame.type === "cf_agent_use_chat_response" && frame.id ? pending.get(frame.id) : undefined;
        if (!turn) return;
        if (frame.error) turn.reject(new Error(`AIChatAgent: ${String(frame.body)}`));
        if (frame.body?.trim()) {
          const chunk = JSON.parse(frame.body) as { type: string; delta?: string };
          if (chunk.type === "text-delta") turn.text += chunk.delta ?? "";
        }
        if (frame.done) {
          pending.delete(frame.id ?? "");
          try {
            checkText("AIChatAgent", turn.text);
            turn.resolve();
          } catch (error) {
            turn.reject(error as Error);
          }
        }
      });
      return {
        turn(content) {
          const { id, frame } = chatAgentRequest(content);
          return new Promise<void>((resolve, reject) => {
            pending.set(id, { text: "", resolve, reject });
            ws.send(frame);
          });
        },
        close() {
          ws.close(1000, "bench done");
        },
      };
    },
  };
}
