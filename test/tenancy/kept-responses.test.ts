// A kept response (the agent's Responses door) is its session owner's: another member of the org is told it does
// not exist, an admin of the org may read it and continue the session, and what the admin's turn keeps stays the
// member's.
import { exports } from "cloudflare:workers";
import { beforeEach, describe, expect, it } from "vitest";
import { freshDatabase } from "../fixtures/database";
import { authHeaders } from "../fixtures/keys";
import { scriptUpstream } from "../fixtures/upstream";
import { ADMIN_A, MEMBER_A, OTHER_MEMBER_A } from "./fixtures";

beforeEach(freshDatabase);

async function respond(key: string, body: Record<string, unknown>): Promise<{ status: number; id: string }> {
  const response = await exports.default.fetch("http://aptix.test/agent/v1/responses", {
    method: "POST",
    headers: { ...authHeaders(key), "content-type": "application/json" },
    body: JSON.stringify({ model: "aptix-agent/general", ...body }),
  });
  const json = (await response.json()) as { id?: string };
  return { status: response.status, id: json.id ?? "" };
}

const statusOf = async (key: string, id: string) =>
  (await exports.default.fetch(`http://aptix.test/agent/v1/responses/${id}`, { headers: authHeaders(key) })).status;

describe("a kept response", () => {
  it("is not found by another member; an admin reads it and continues it, and the new one stays the member's", async () => {
    const script = await scriptUpstream([
      { type: "completion", content: "First." },
      { type: "completion", content: "Second." },
    ]);
    const first = await respond(MEMBER_A, { input: `hello ${script.marker}` });
    expect(first.status).toBe(200);
    expect(await statusOf(OTHER_MEMBER_A, first.id)).toBe(404);
    expect((await respond(OTHER_MEMBER_A, { input: "more", previous_response_id: first.id })).status).toBe(404);
    expect(await statusOf(ADMIN_A, first.id)).toBe(200);
    const continued = await respond(ADMIN_A, { input: `more ${script.marker}`, previous_response_id: first.id });
    expect(continued.status).toBe(200);
    expect(await statusOf(MEMBER_A, continued.id)).toBe(200);
  });
});
