// Runs one of the client examples of docs/guides/connect-a-client.md against a running aptix and prints its answer:
//   npm exec -- node docs/guides/examples/run.ts openai
// APTIX_URL (default http://localhost:8787) and APTIX_KEY (default dev-key) say where and as whom. The project's
// Node 22 runs the TypeScript as it is (type stripping); no build step.
import type { Aptix } from "./aptix.ts";

const EXAMPLES = ["openai", "anthropic", "ai-sdk", "openai-agents", "mcp"];
const name = process.argv[2] ?? "";
if (!EXAMPLES.includes(name)) {
  console.error(`usage: npm exec -- node docs/guides/examples/run.ts <${EXAMPLES.join("|")}>`);
  process.exit(2);
}
const example = (await import(`./${name}.ts`)) as { main(aptix: Aptix): Promise<string> };
const url = (process.env.APTIX_URL ?? "http://localhost:8787").replace(/\/+$/, "");
console.log(await example.main({ url, key: process.env.APTIX_KEY ?? "dev-key" }));
