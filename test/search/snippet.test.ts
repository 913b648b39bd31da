// A search result's snippet: the words around the first match, cut with … and each match marked, matched as the index
// matches (case, accents, the last word as a prefix), shown as escaped HTML for the route and « » for the model.
import { describe, expect, it } from "vitest";
import { searchWords } from "../../src/search/search-query";
import { htmlSnippet, markedSnippet, plainSnippet } from "../../src/search/snippet";

const plain = (text: string, q: string) => plainSnippet(markedSnippet(text, searchWords(q)));

describe("search snippets", () => {
  it("marks every match, ignoring case and accents", () => {
    expect(plain("The Crème brûlée and the creme BRULEE.", "creme brulee")).toBe(
      "The «Crème» «brûlée» and the «creme» «BRULEE».",
    );
  });

  it("matches the last word as a prefix when it has three letters or more", () => {
    expect(plain("deploy the deployment", "deplo")).toBe("«deploy» the «deployment»");
    expect(plain("an ant", "an")).toBe("«an» ant");
  });

  it("shows a few words before the first match and cuts a long text with …", () => {
    const text = `${"one two three four five six seven eight nine ten ".repeat(3)}needle ${"after ".repeat(30)}`;
    expect(plain(text, "needle")).toBe(
      "…seven eight nine ten «needle» after after after after after after after after after after after…",
    );
  });

  it("escapes the text as HTML and wraps matches in <mark>", () => {
    expect(htmlSnippet(markedSnippet(`<b>"tag" & 'x'</b>`, searchWords("tag")))).toBe(
      "&lt;b&gt;&quot;<mark>tag</mark>&quot; &amp; &#39;x&#39;&lt;/b&gt;",
    );
  });
});
