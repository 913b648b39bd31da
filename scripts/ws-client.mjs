#!/usr/bin/env node
// A command-line client for a session's WebSocket (docs/protocol.md). It gets a ticket with your API key,
// connects, prints every frame, and turns what you type into frames:
//   any text            -> user_message
//   /approve ID         -> approval (approved)          /deny ID [reason] -> approval (denied)
//   /result ID JSON     -> tool_results (resultJson)    /fail ID MESSAGE  -> tool_results (errorMessage)
//   /resume SEQ         -> resume                        /cancel, /ping, /quit
// Usage: npm run ws -- SESSION_ID   (APTIX_URL defaults to http://localhost:8787, APTIX_KEY to dev-key)
import { createInterface } from "node:readline";

const [sessionId, afterSeq] = process.argv.slice(2);
const base = (process.env.APTIX_URL ?? "http://localhost:8787").replace(/\/+$/, "");
const key = process.env.APTIX_KEY ?? "dev-key";
if (!sessionId) {
  console.error("usage: npm run ws -- SESSION_ID [AFTER_SEQ]");
  process.exit(2);
}

const ticketResponse = await fetch(`${base}/context/sessions/${sessionId}/ws-ticket`, {
  method: "POST",
  headers: { authorization: `Bearer ${key}` },
});
const ticketBody = await ticketResponse.json();
if (!ticketResponse.ok) {
  console.error(`no ticket: ${JSON.stringify(ticketBody)}`);
  process.exit(1);
}
const url = new URL(`${base.replace(/^http/, "ws")}/context/sessions/${sessionId}/ws`);
url.searchParams.set("ticket", ticketBody.ticket);
if (afterSeq) url.searchParams.set("afterSeq", afterSeq);

const ws = new WebSocket(url);
let counter = 0;
const send = (frame) => ws.send(JSON.stringify(frame));

ws.addEventListener("message", (event) => {
  const frame = JSON.parse(String(event.data));
  if (frame.type === "assistant_delta") process.stdout.write(frame.text);
  else console.log(`\n< ${JSON.stringify(frame)}`);
});
ws.addEventListener("close", (event) => {
  console.log(`\nsocket closed (${event.code})`);
  process.exit(0);
});
ws.addEventListener("error", () => {
  console.error("socket error");
  process.exit(1);
});
await new Promise((resolve) => ws.addEventListener("open", resolve, { once: true }));

const lines = createInterface({ input: process.stdin });
for await (const line of lines) {
  const [command, id, ...rest] = line.trim().split(" ");
  if (!line.trim()) continue;
  if (command === "/quit") break;
  else if (command === "/approve") send({ type: "approval", decisions: [{ toolCallId: id, approved: true }] });
  else if (command === "/deny") {
    send({
      type: "approval",
      decisions: [{ toolCallId: id, approved: false, ...(rest.length ? { reason: rest.join(" ") } : {}) }],
    });
  } else if (command === "/result")
    send({ type: "tool_results", results: [{ toolCallId: id, resultJson: rest.join(" ") }] });
  else if (command === "/fail")
    send({ type: "tool_results", results: [{ toolCallId: id, errorMessage: rest.join(" ") }] });
  else if (command === "/resume") send({ type: "resume", afterSeq: Number(id) });
  else if (command === "/cancel") send({ type: "cancel" });
  else if (command === "/ping") send({ type: "ping" });
  else send({ type: "user_message", content: line, clientMessageId: `cli-${++counter}` });
}
ws.close(1000, "bye");
