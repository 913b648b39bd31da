// Workspace paths: normalised first (percent-decoding, NFKC), then refused when they leave or confuse the
// workspace, or name a file that holds secrets (configurable).
import { describe, expect, it } from "vitest";
import { parseSettings } from "../../src/settings";
import { checkWorkspacePath } from "../../src/tools/workspace-path";

const refusal = (path: string, env: object = {}) => {
  const checked = checkWorkspacePath(path, parseSettings(env).workspace);
  return checked.ok ? `accepted as ${checked.path}` : checked.message;
};

describe("workspace paths", () => {
  it("accepts a relative path, normalising separators, '.' segments and percent-escapes", () => {
    expect(["src/index.ts", "./src//index.ts", "src\\index.ts", "docs/my%20notes.md"].map((p) => refusal(p))).toEqual([
      "accepted as src/index.ts",
      "accepted as src/index.ts",
      "accepted as src/index.ts",
      "accepted as docs/my notes.md",
    ]);
  });

  it("refuses '..' in every spelling: plain, percent-encoded, double-encoded, full-width, two-dot leader, backslashed", () => {
    const spellings = [
      "../../etc/passwd",
      "%2e%2e/%2e%2e/etc/passwd",
      "%252e%252e/etc/passwd",
      "\uff0e\uff0e/etc/passwd",
      "\u2025/etc/passwd",
      "src/..\\..\\secret",
      "a/.. /b",
      ".../x",
    ];
    for (const path of spellings) expect(refusal(path), path).toMatch(/leaves the workspace/);
  });

  it("refuses absolute, drive, UNC and file: paths, URIs and home directories", () => {
    expect(refusal("/etc/passwd")).toMatch(/is absolute/);
    expect(refusal("\\\\server\\share\\x")).toMatch(/is absolute/);
    expect(refusal("C:\\Windows\\win.ini")).toMatch(/names a drive/);
    expect(refusal("c:relative.txt")).toMatch(/names a drive/);
    expect(refusal("file:///etc/passwd")).toMatch(/is a URI/);
    expect(refusal("https://example.com/x")).toMatch(/is a URI/);
    expect(refusal("~/.bashrc")).toMatch(/home directory/);
    expect(refusal("%2Fetc%2Fpasswd")).toMatch(/is absolute/);
  });

  it("refuses NUL, control, invisible and direction-changing characters", () => {
    expect(refusal("a\u0000b.txt")).toMatch(/NUL/);
    expect(refusal("a%00b.txt")).toMatch(/NUL/);
    for (const path of ["a\nb.txt", "a\u0007.txt", "a\u200bb.txt", "evil\u202etxt.exe"]) {
      expect(refusal(path), JSON.stringify(path)).toMatch(/control or invisible characters/);
    }
  });

  it("refuses files that hold secrets by default, whatever their case or depth", () => {
    for (const path of [
      ".env",
      "app/.env.production",
      ".git/config",
      "sub/.GIT/HEAD",
      "keys/server.pem",
      ".ssh/id_rsa",
    ]) {
      expect(refusal(path), path).toMatch(/is protected/);
    }
    expect(refusal("src/environment.ts")).toBe("accepted as src/environment.ts");
  });

  it("takes its protected paths from WORKSPACE_PROTECTED_PATHS, and protects nothing when it is empty", () => {
    expect(refusal("secrets/prod.json", { WORKSPACE_PROTECTED_PATHS: "secrets/, *.json" })).toMatch(
      /matches 'secrets\/'/,
    );
    expect(refusal(".env", { WORKSPACE_PROTECTED_PATHS: "secrets/" })).toBe("accepted as .env");
    expect(refusal(".git/config", { WORKSPACE_PROTECTED_PATHS: "" })).toBe("accepted as .git/config");
  });

  it("refuses an empty path, the root, a malformed escape and an overlong path, quoting at most 100 characters", () => {
    expect(refusal("   ")).toBe("the path is empty");
    expect(refusal("./")).toMatch(/names the workspace root/);
    expect(refusal("%E0%A4%A.txt")).toMatch(/malformed percent-escape/);
    expect(refusal(`${"a/".repeat(600)}x`)).toBe("the path is longer than 1024 characters");
    expect(refusal(`/${"x".repeat(900)}`).length).toBeLessThan(200);
  });
});
