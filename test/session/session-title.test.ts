// The automatic title a session takes from its first message: a message may hold anything, so what a typed title
// refuses (control characters, bidirectional overrides and isolates, unpaired surrogates) is taken out, not refused;
// ordinary text in any script stays as it is.
import { describe, expect, it } from "vitest";
import { sessionTitle, TITLE_CHARS } from "../../src/session/session-index";
import type { SessionList } from "../../src/wire/session";
import { call, createSession } from "../fixtures/sessions";
import { scriptUpstream } from "../fixtures/upstream";

describe("sessionTitle", () => {
  it("takes out bidirectional overrides and isolates", () => {
    expect(sessionTitle("Pay \u202Eexe.gnp\u202C now \u2067x\u2069")).toBe("Pay exe.gnp now x");
  });

  it("turns control characters (C0, DEL, C1) into spaces, one between words", () => {
    expect(sessionTitle("Plan\u0007the\u007f\u0085launch\u001b[31m")).toBe("Plan the launch [31m");
  });

  it("takes out unpaired surrogates and keeps paired ones (emoji)", () => {
    expect(sessionTitle("Plan \ud800launch \udfff🚀")).toBe("Plan launch 🚀");
  });

  it("keeps emoji, CJK, Arabic and Hebrew letters and the right-to-left mark", () => {
    const text = "Plan 🚀 計画 خطة الإطلاق תוכנית\u200f";
    expect(sessionTitle(text)).toBe(text);
  });

  it("does not cut an emoji in half where it shortens a long message", () => {
    const title = sessionTitle(`${"a".repeat(TITLE_CHARS - 2)}🚀🚀`);
    expect(title).toBe(`${"a".repeat(TITLE_CHARS - 2)}…`);
  });

  it("is empty for a message of nothing but control characters and overrides", () => {
    expect(sessionTitle("\u0007\u202e\u2066")).toBe("");
  });
});

describe("the list's automatic title", () => {
  it("holds no override or control character of the first message", async () => {
    const script = await scriptUpstream([{ type: "completion", content: "Noted." }]);
    const id = await createSession();
    const said = await call("POST", `/context/sessions/${id}/messages`, {
      content: `Plan the \u202Ehcnual\u202C\u0007 ${script.marker}`,
    });
    expect(said.status).toBe(200);
    const deadline = Date.now() + 5_000;
    let title: string | null | undefined;
    while (Date.now() < deadline) {
      const list = (await call("GET", "/context/sessions?limit=100")).json as typeof SessionList._output;
      title = list.sessions.find((s) => s.sessionId === id)?.title;
      if (title) break;
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    expect(title).toBe(`Plan the hcnual ${script.marker}`);
  });
});
