// `npm start` with a real upstream (LLM_BASE_URL) and no model of its own (LLM_MODEL unset or the placeholder `demo`)
// stops before wrangler dev with one line naming LLM_MODEL and how to list the provider's models (issue 41); the vars
// are read where wrangler dev reads them: --var, .dev.vars, .env (and the environment when wrangler is told to).
import { execFile } from "node:child_process";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { flagVars, llmVars, missingModelProblem } from "../../scripts/llm-model-check.mjs";

const dirs: string[] = [];
afterAll(async () => {
  await Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true })));
});

/** A project directory with a wrangler.toml and the given files beside it. */
async function project(files: Record<string, string>): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "aptix-model-check-"));
  dirs.push(dir);
  await writeFile(join(dir, "wrangler.toml"), 'name = "x"\n');
  for (const [name, text] of Object.entries(files)) await writeFile(join(dir, name), text);
  return dir;
}

/** How `node scripts/start.mjs <args>` ended (it must end before wrangler dev: nothing here starts one). */
function start(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile("node", ["scripts/start.mjs", ...args], { timeout: 30_000 }, (error, stdout, stderr) => {
      const code = error && typeof error.code === "number" ? error.code : error ? 1 : 0;
      resolve({ code, stdout, stderr });
    });
  });
}

describe("npm start with a real upstream and no model", () => {
  it("stops with exit code 2 and one line naming LLM_MODEL and how to list the models", async () => {
    const { code, stdout, stderr } = await start([
      "--var",
      "LLM_BASE_URL:https://llm.example/v1",
      "--var",
      "LLM_API_KEY:sk-x",
    ]);
    const lines = stderr.trim().split("\n");
    expect({ code, stdout, lines: lines.length }).toEqual({ code: 2, stdout: "", lines: 1 });
    expect(lines[0]).toContain("LLM_MODEL is not set");
    expect(lines[0]).toContain("https://llm.example/v1/models");
    expect(lines[0]).toContain("npm run doctor");
    expect(lines[0]).not.toContain("sk-x");
  });

  it("stops when LLM_MODEL is the placeholder demo", async () => {
    const { code, stderr } = await start(["--var", "LLM_BASE_URL:https://llm.example/v1", "--var", "LLM_MODEL:demo"]);
    expect(code).toBe(2);
    expect(stderr).toContain('LLM_MODEL is the placeholder "demo"');
  });
});

describe("where the check reads the vars", () => {
  it("passes an upstream with its model, and the offline demo (no upstream)", () => {
    expect(missingModelProblem({ baseUrl: "https://llm.example/v1", model: "gpt-4o-mini" })).toBeNull();
    expect(missingModelProblem({ baseUrl: "", model: "" })).toBeNull();
  });

  it("names LLM_BASE_URL without the credentials written into it", () => {
    const problem = missingModelProblem({ baseUrl: "https://user:s3cret-pass@llm.example/v1", model: "" }) ?? "";
    expect(problem).toContain("LLM_BASE_URL is set (https://llm.example/v1)");
    expect(problem).toContain("https://llm.example/v1/models");
    expect(problem).not.toContain("s3cret-pass");
  });

  it("reads .dev.vars, a --var winning over it", async () => {
    const cwd = await project({ ".dev.vars": 'LLM_BASE_URL="https://llm.example/v1"\nLLM_MODEL=demo\n' });
    expect(llmVars([], { cwd, processEnv: {} })).toEqual({ baseUrl: "https://llm.example/v1", model: "demo" });
    expect(llmVars(["--var", "LLM_MODEL:gpt-4o-mini"], { cwd, processEnv: {} }).model).toBe("gpt-4o-mini");
  });

  it("reads .env without .dev.vars, and the environment only when CLOUDFLARE_INCLUDE_PROCESS_ENV is true", async () => {
    const cwd = await project({ ".env": "LLM_BASE_URL=https://llm.example/v1\n" });
    const env = { LLM_MODEL: "gpt-4o-mini" };
    expect(llmVars([], { cwd, processEnv: env })).toEqual({ baseUrl: "https://llm.example/v1", model: "" });
    expect(llmVars([], { cwd, processEnv: { ...env, CLOUDFLARE_INCLUDE_PROCESS_ENV: "true" } }).model).toBe(
      "gpt-4o-mini",
    );
  });

  it("reads wrangler.toml's [vars], the files winning over it", async () => {
    const cwd = await project({ ".dev.vars": "LLM_MODEL=gpt-4o-mini\n" });
    await writeFile(
      join(cwd, "wrangler.toml"),
      'name = "x"\n[vars]\nLLM_BASE_URL = "https://llm.example/v1"\nLLM_MODEL = "demo"\n',
    );
    expect(llmVars([], { cwd, processEnv: {} })).toEqual({ baseUrl: "https://llm.example/v1", model: "gpt-4o-mini" });
  });
});

describe("the README's real-model example", () => {
  it("passes the check as written, and is refused without its LLM_MODEL", async () => {
    const readme = await readFile("README.md", "utf8");
    const block = /```\n([\s\S]*?)```/.exec(readme.slice(readme.indexOf("\n### A real model\n")))?.[1] ?? "";
    const args = (block.split("\n")[0] ?? "").replace(/^npm start -- /, "").split(" ");
    const cwd = await project({});
    expect(missingModelProblem(llmVars(args, { cwd, processEnv: {} }))).toBeNull();
    const withoutModel = args.filter(
      (arg, i) => !arg.startsWith("LLM_MODEL:") && !args[i + 1]?.startsWith("LLM_MODEL:"),
    );
    expect(Object.keys(flagVars(withoutModel)).sort()).toEqual(["LLM_API_KEY", "LLM_BASE_URL"]);
    expect(missingModelProblem(llmVars(withoutModel, { cwd, processEnv: {} }))).toContain("LLM_MODEL is not set");
  });
});
