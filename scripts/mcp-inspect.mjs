#!/usr/bin/env node
// npm run mcp:inspect -- <inspector CLI args>: the MCP inspector's command-line client against this server's /mcp,
// at APTIX_URL (default http://localhost:8787, the same variable as every example and `npm run ws`) with the key in
// APTIX_KEY (default dev-key), e.g. `npm run -s mcp:inspect -- --method tools/list`. Exits as the inspector does.
import { spawn } from "node:child_process";
import { dirname } from "node:path";
import { fileURLToPath } from "node:url";

const base = (process.env.APTIX_URL ?? "http://localhost:8787").replace(/\/+$/, "");
const key = process.env.APTIX_KEY ?? "dev-key";
const cli = fileURLToPath(
  new URL("../node_modules/@modelcontextprotocol/inspector-cli/build/index.js", import.meta.url),
);

const child = spawn(
  process.execPath,
  [cli, `${base}/mcp`, "--transport", "http", "--header", `Authorization: Bearer ${key}`, ...process.argv.slice(2)],
  // The CLI finds its own package.json relative to the working directory (its version names the client).
  { stdio: "inherit", cwd: dirname(cli) },
);
child.once("exit", (code, signal) => {
  if (signal) process.kill(process.pid, signal);
  else process.exit(code ?? 1);
});
