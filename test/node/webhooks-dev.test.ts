// `npm run webhooks:dev` prints each delivery and verifies it with `standardwebhooks`: a delivery signed with its
// WEBHOOK_SECRET (signed here by the same library, as aptix signs) prints as verified with its type and data, and one
// signed with another secret is answered 401 and printed as not verified.
import { type ChildProcessByStdio, spawn } from "node:child_process";
import type { Readable } from "node:stream";
import { Webhook } from "standardwebhooks";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const SECRET = `whsec_${Buffer.from("a local development secret, 32 b").toString("base64")}`;
const OTHER = `whsec_${Buffer.from("another secret entirely, 32 byte").toString("base64")}`;

let receiver: ChildProcessByStdio<null, Readable, null>;
let url = "";
let output = "";

beforeAll(async () => {
  receiver = spawn(process.execPath, ["scripts/webhooks-dev.ts"], {
    env: { ...process.env, PORT: "0", WEBHOOK_SECRET: SECRET },
    stdio: ["ignore", "pipe", "inherit"],
  });
  receiver.stdout.on("data", (chunk: Buffer) => {
    output += chunk.toString();
  });
  url = await new Promise<string>((resolve, reject) => {
    receiver.stdout.on("data", () => {
      const found = /Webhook receiver at (http:\/\/\S+\/)/.exec(output);
      if (found?.[1]) resolve(found[1]);
    });
    receiver.once("exit", (code) => reject(new Error(`npm run webhooks:dev exited with ${code}`)));
  });
});

afterAll(() => {
  receiver.kill();
});

/** POSTs `body` as aptix does, signed with `secret`; the status, and the line printed for it. */
async function deliver(secret: string, id: string, body: string): Promise<{ status: number; line: string }> {
  const at = new Date();
  const response = await fetch(url, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      "webhook-id": id,
      "webhook-timestamp": String(Math.floor(at.getTime() / 1000)),
      "webhook-signature": new Webhook(secret).sign(id, at, body),
    },
    body,
  });
  for (;;) {
    const line = output.split("\n").find((l) => l.includes(id));
    if (line) return { status: response.status, line };
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describe("npm run webhooks:dev", () => {
  it("prints a delivery signed with its secret as verified, with its type and data", async () => {
    const body = JSON.stringify({
      type: "turn.completed",
      timestamp: new Date().toISOString(),
      data: { turnId: "t-1" },
    });
    const { status, line } = await deliver(SECRET, "msg_verified", body);
    expect(status).toBe(204);
    expect(line).toMatch(/ turn\.completed msg_verified verified$/);
    expect(output).toContain('{"turnId":"t-1"}');
  });

  it("answers 401 to a delivery signed with another secret, printing it as not verified", async () => {
    const body = JSON.stringify({ type: "turn.failed", timestamp: new Date().toISOString(), data: {} });
    const { status, line } = await deliver(OTHER, "msg_forged", body);
    expect(status).toBe(401);
    expect(line).toMatch(/msg_forged NOT VERIFIED/);
  });
});
