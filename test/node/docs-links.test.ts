// The README stays a front door (at most 300 lines) and no relative link in it or in docs/ is dead: each names a
// file that exists and, with a `#anchor`, a heading of that file whose GitHub slug is the anchor.
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { describe, expect, it } from "vitest";

const README_MAX_LINES = 300;

/** Every Markdown file under `dir`, as paths from the repository's root. */
function markdownFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return markdownFiles(path);
    return name.endsWith(".md") ? [path] : [];
  });
}

/** The text outside fenced code blocks and inline code, where a link or a heading means one. */
function prose(markdown: string): string {
  return markdown.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, "").replace(/`[^`\n]*`/g, "");
}

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens; repeats get -1, -2, ... */
function headingSlugs(markdown: string): Set<string> {
  const seen = new Map<string, number>();
  const slugs = new Set<string>();
  const withoutFences = markdown.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, "");
  for (const [, heading = ""] of withoutFences.matchAll(/^#{1,6}\s+(.+?)\s*#*\s*$/gm)) {
    const text = heading.replace(/\[([^\]]*)\]\([^)]*\)/g, "$1");
    const base = text
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, "")
      .replace(/\s/g, "-");
    const times = seen.get(base) ?? 0;
    seen.set(base, times + 1);
    slugs.add(times === 0 ? base : `${base}-${times}`);
  }
  return slugs;
}

/** The relative link targets of a Markdown file: `[text](target)` and `<img src="target">`. */
function relativeLinks(markdown: string): string[] {
  const text = prose(markdown);
  const targets = [
    ...[...text.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)].map((m) => m[1] ?? ""),
    ...[...text.matchAll(/<img\s[^>]*src="([^"]+)"/g)].map((m) => m[1] ?? ""),
  ];
  return targets.filter((target) => !/^[a-z][a-z0-9+.-]*:/i.test(target));
}

/** What is wrong with one link of `file`, or null when it resolves. */
function deadLink(file: string, target: string): string | null {
  const [path = "", anchor] = target.split("#");
  const resolved = path === "" ? file : join(dirname(file), decodeURIComponent(path));
  if (!existsSync(resolved)) return `${file}: ${target} (no file ${relative(".", resolved)})`;
  if (anchor === undefined || anchor === "") return null;
  if (!resolved.endsWith(".md")) return `${file}: ${target} (an anchor into a file that is not Markdown)`;
  return headingSlugs(readFileSync(resolved, "utf8")).has(anchor.toLowerCase())
    ? null
    : `${file}: ${target} (no heading #${anchor} in ${relative(".", resolved)})`;
}

describe("the README and docs/", () => {
  it("keeps the README at most 300 lines", () => {
    const lines = readFileSync("README.md", "utf8").trimEnd().split("\n").length;
    expect(lines).toBeLessThanOrEqual(README_MAX_LINES);
  });

  it("has no relative link in README.md or docs/**/*.md that names a missing file or heading", () => {
    const files = ["README.md", ...markdownFiles("docs")];
    const dead = files.flatMap((file) =>
      relativeLinks(readFileSync(file, "utf8"))
        .map((target) => deadLink(file, target))
        .filter((problem) => problem !== null),
    );
    expect(dead).toEqual([]);
  });

  it("finds the anchors GitHub makes, so a dead anchor is a real one", () => {
    const slugs = headingSlugs(
      "# Deploying aptix\n## The API: `POST /agent/v1/responses`\n## Keys, budgets and usage\n## Keys, budgets and usage\n```\n# not a heading\n```\n",
    );
    expect([...slugs]).toEqual([
      "deploying-aptix",
      "the-api-post-agentv1responses",
      "keys-budgets-and-usage",
      "keys-budgets-and-usage-1",
    ]);
  });
});
