// Names and titles a person types (a session's title, an attachment's name, an API key's name, a mode's display name,
// the draft_ddr workflow's title and owner) and descriptions (a mode's, an MCP server's, draft_ddr's purpose) refuse
// control characters, bidirectional overrides and isolates and unpaired surrogates with a 400 naming the field, and
// take ordinary text in any script: emoji, CJK, Arabic and Hebrew letters, and the right-to-left marks.
import { exports } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { authHeaders, TEST_KEYS } from "../fixtures/keys";
import { call, createSession, type ErrorBody, getSession } from "../fixtures/sessions";
import { scriptUpstream } from "../fixtures/upstream";

type Answer = { status: number; json: unknown };

interface TypedField {
  /** The field as a refusal names it. */
  param: string;
  /** Where a refusal says the field is, and its code. */
  where: "request body" | "parameters";
  code: "invalid_request" | "invalid_workflow_parameters";
  /** Prose (a description) keeps tabs and line breaks; a name is one line. */
  prose: boolean;
  /** Sends the value (call() sends JSON.stringify's text, in which an unpaired surrogate is a \ud800 escape). */
  send(value: string): Promise<Answer>;
  /** The value as the service keeps and shows it, read after `send` took it. */
  shown(answer: Answer): Promise<string>;
}

const admin = TEST_KEYS.admin.key;
const modeBody = {
  displayName: "Typed names",
  description: "A mode of the typed names tests.",
  systemPrompt: "You are Aptix in a test mode.",
  tools: ["agent_hello_world"],
};
const json = <T>(answer: Answer) => answer.json as T;

let sessionId = "";
let keyId = "";
let ddrSession = "";
beforeAll(async () => {
  sessionId = await createSession();
  ddrSession = await createSession("ddr_authoring");
  keyId = json<{ key: { id: string } }>(await call("POST", "/admin/keys", { name: "typed names" }, admin)).key.id;
});

/** draft_ddr's artifact of a run's answer. */
async function ddrArtifact(answer: Answer): Promise<string> {
  const { artifactId } = json<{ data: { artifactId: string } }>(answer).data;
  return (await getSession(ddrSession)).artifacts.find((a) => a.id === artifactId)?.content ?? "";
}
const runDdr = (parameters: Record<string, string>) =>
  call("POST", `/context/sessions/${ddrSession}/workflows/draft_ddr`, { parameters });

const FIELDS: Record<string, TypedField> = {
  "a session's title (PATCH /context/sessions/:id)": {
    param: "title",
    where: "request body",
    code: "invalid_request",
    prose: false,
    send: (title) => call("PATCH", `/context/sessions/${sessionId}`, { title }),
    shown: async (answer) => json<{ title: string }>(answer).title,
  },
  "an attachment's name (POST /context/sessions/:id/messages)": {
    param: "attachments.0.name",
    where: "request body",
    code: "invalid_request",
    prose: false,
    send: async (name) => {
      const script = await scriptUpstream([{ type: "completion", content: "Read it." }]);
      const id = await createSession();
      const file = { name, mediaType: "text/plain", text: "alpha" };
      const answer = await call("POST", `/context/sessions/${id}/messages`, {
        content: `read ${script.marker}`,
        attachments: [file],
      });
      return { ...answer, json: { ...(answer.json as object), sessionId: id } };
    },
    shown: async (answer) => {
      const view = await getSession(json<{ sessionId: string }>(answer).sessionId);
      return view.conversation[0]?.attachments?.[0]?.name ?? "";
    },
  },
  "a new API key's name (POST /admin/keys)": {
    param: "name",
    where: "request body",
    code: "invalid_request",
    prose: false,
    send: (name) => call("POST", "/admin/keys", { name }, admin),
    shown: async (answer) => json<{ key: { name: string } }>(answer).key.name,
  },
  "an API key's new name (PATCH /admin/keys/:id)": {
    param: "name",
    where: "request body",
    code: "invalid_request",
    prose: false,
    send: (name) => call("PATCH", `/admin/keys/${keyId}`, { name }, admin),
    shown: async (answer) => json<{ key: { name: string } }>(answer).key.name,
  },
  "a mode's display name (PUT /admin/modes/:key)": {
    param: "displayName",
    where: "request body",
    code: "invalid_request",
    prose: false,
    send: (displayName) => call("PUT", "/admin/modes/typed_names", { ...modeBody, displayName }, admin),
    shown: async (answer) => json<{ mode: { displayName: string } }>(answer).mode.displayName,
  },
  "draft_ddr's title (POST .../workflows/draft_ddr)": {
    param: "title",
    where: "parameters",
    code: "invalid_workflow_parameters",
    prose: false,
    send: (title) => runDdr({ id: "TUL-040", title }),
    shown: async (answer) => json<{ data: { title: string } }>(answer).data.title.replace(/^TUL-040 — /, ""),
  },
  "draft_ddr's owner (POST .../workflows/draft_ddr)": {
    param: "owner",
    where: "parameters",
    code: "invalid_workflow_parameters",
    prose: false,
    send: (owner) => runDdr({ id: "TUL-040", title: "Owned", owner }),
    shown: async (answer) => /^\*\*Owner:\*\* (.*) {2}$/m.exec(await ddrArtifact(answer))?.[1] ?? "",
  },
  "a mode's description (PUT /admin/modes/:key)": {
    param: "description",
    where: "request body",
    code: "invalid_request",
    prose: true,
    send: (description) => call("PUT", "/admin/modes/typed_names", { ...modeBody, description }, admin),
    shown: async (answer) => json<{ mode: { description: string } }>(answer).mode.description,
  },
  "an MCP server's description (PUT /admin/mcp-servers/:name)": {
    param: "description",
    where: "request body",
    code: "invalid_request",
    prose: true,
    send: (description) =>
      call(
        "PUT",
        "/admin/mcp-servers/typed-names",
        { url: "https://mcp.example.com/mcp", description, approval: "never" },
        admin,
      ),
    shown: async (answer) => json<{ server: { description: string } }>(answer).server.description,
  },
  "draft_ddr's purpose (POST .../workflows/draft_ddr)": {
    param: "purpose",
    where: "parameters",
    code: "invalid_workflow_parameters",
    prose: true,
    send: (purpose) => runDdr({ id: "TUL-040", title: "With a purpose", purpose }),
    shown: async (answer) => (await ddrArtifact(answer)).split("## 1. Purpose\n\n")[1]?.split("\n\n---")[0] ?? "",
  },
};

const BIDI = "must not contain bidirectional overrides or isolates";
const SURROGATE = "must be well-formed Unicode (it has an unpaired surrogate,";
/** What every typed field refuses, in the middle of ordinary text: [what, the character, its code point, the detail]. */
const REFUSED_EVERYWHERE: [string, string, string, "control" | "bidi" | "surrogate"][] = [
  ["a C0 control character (BEL)", "\u0007", "U+0007", "control"],
  ["DEL", "\u007f", "U+007F", "control"],
  ["a C1 control character (NEL)", "\u0085", "U+0085", "control"],
  ["a right-to-left override", "\u202e", "U+202E", "bidi"],
  ["a left-to-right embedding", "\u202a", "U+202A", "bidi"],
  ["a left-to-right isolate", "\u2066", "U+2066", "bidi"],
  ["a pop directional isolate", "\u2069", "U+2069", "bidi"],
  ["an unpaired high surrogate", "\ud800", "U+D800", "surrogate"],
  ["an unpaired low surrogate", "\udfff", "U+DFFF", "surrogate"],
];
/** What a name refuses and prose keeps: a name is one line. */
const LINE_BREAKS: [string, string, string][] = [
  ["a line feed", "\n", "U+000A"],
  ["a tab", "\t", "U+0009"],
  ["a line separator", "\u2028", "U+2028"],
];
const ORDINARY = "Plan 🚀 計画 خطة الإطلاق תוכנית (v2) — café";
const WITH_MARKS = "\u05ea\u05d5\u05db\u05e0\u05d9\u05ea 2026\u200f and v2\u200e";

function detail(kind: "control" | "bidi" | "surrogate", at: string, prose: boolean): string {
  if (kind === "bidi") return `${BIDI} (it has ${at})`;
  if (kind === "surrogate") return `${SURROGATE} ${at})`;
  return prose
    ? `must not contain control characters other than tabs and line breaks (it has ${at})`
    : `must be one line without control characters (it has ${at})`;
}

async function expectRefused(field: TypedField, value: string, message: string): Promise<void> {
  const answer = await field.send(value);
  expect(answer.status).toBe(400);
  expect((answer.json as ErrorBody).error).toEqual({
    message: `Invalid '${field.param}' in the ${field.where}: ${message}.`,
    type: "invalid_request_error",
    code: field.code,
    param: field.param,
  });
}

for (const [described, field] of Object.entries(FIELDS)) {
  describe(described, () => {
    for (const [what, char, at, kind] of REFUSED_EVERYWHERE) {
      it(`refuses ${what} with a 400 naming '${field.param}'`, async () => {
        await expectRefused(field, `Plan${char} two`, detail(kind, at, field.prose));
      });
    }

    if (field.prose) {
      it("keeps tabs and line breaks (\\n, \\r\\n, U+2028)", async () => {
        const value = `First line\twith a tab\nsecond line\r\nthird line\u2028fourth line — ${ORDINARY}`;
        const answer = await field.send(value);
        expect(answer.status).toBeLessThan(300);
        expect(await field.shown(answer)).toBe(value);
      });

      it(`refuses a carriage return that is not part of \\r\\n with a 400 naming '${field.param}'`, async () => {
        await expectRefused(field, "Plan\rtwo", detail("control", "U+000D", true));
      });
    } else {
      for (const [what, char, at] of LINE_BREAKS) {
        it(`refuses ${what} inside the name with a 400 naming '${field.param}' (a name is one line)`, async () => {
          await expectRefused(field, `Plan${char}two`, detail("control", at, false));
        });
      }
    }

    it("takes ordinary text: emoji, CJK, Arabic and Hebrew letters, punctuation", async () => {
      const answer = await field.send(ORDINARY);
      expect(answer.status).toBeLessThan(300);
      expect(await field.shown(answer)).toBe(ORDINARY);
    });

    it("takes the right-to-left and left-to-right marks (U+200F, U+200E), which reorder no letters", async () => {
      const answer = await field.send(WITH_MARKS);
      expect(answer.status).toBeLessThan(300);
      expect(await field.shown(answer)).toBe(WITH_MARKS);
    });
  });
}

describe("an unpaired surrogate in the raw JSON text", () => {
  it("is refused when the body spells it as a \\ud800 escape, as JSON.stringify writes one", async () => {
    const body = String.raw`{"title":"Plan\ud800 two"}`;
    expect(JSON.stringify({ title: "Plan\ud800 two" })).toBe(body);
    const response = await exports.default.fetch(`http://aptix.test/context/sessions/${sessionId}`, {
      method: "PATCH",
      headers: { ...authHeaders(TEST_KEYS.chat.key), "content-type": "application/json" },
      body,
    });
    expect(response.status).toBe(400);
    expect(((await response.json()) as ErrorBody).error).toMatchObject({
      param: "title",
      message: `Invalid 'title' in the request body: ${SURROGATE} U+D800).`,
    });
  });
});
