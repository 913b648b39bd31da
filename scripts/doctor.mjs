#!/usr/bin/env node
// npm run doctor [-- --url URL --key KEY --timeout MS | --port N --ip HOST]: asks a running server for GET
// /admin/health (every model route checked live: the upstream answers, the key is accepted, the model exists, tools
// are accepted) and prints it as a table, each failure in the upstream's own words. The server is the local one
// `npm start` serves (its --ip and --port, as scripts/dev-port.mjs reads them; localhost:8787 by default) with
// `dev-key`, or APTIX_URL and APTIX_KEY, or --url and --key. Exit 0 when every check passes, 1 when one fails, 2
// when the server cannot be asked.
import { parseArgs } from "node:util";
import { requestedAddress } from "./dev-port.mjs";

const LOCAL_KEY = "dev-key";

/** The server and key to ask, from the arguments and the environment. */
export function target(args, env = process.env) {
  const { values } = parseArgs({
    args,
    strict: false,
    allowPositionals: true,
    options: { url: { type: "string" }, key: { type: "string" }, timeout: { type: "string" } },
  });
  const address = requestedAddress(args);
  if ("problem" in address) return { problem: address.problem };
  const host = address.ip === "*" || address.ip === "0.0.0.0" ? "localhost" : address.ip;
  const url = (typeof values.url === "string" ? values.url : (env.APTIX_URL ?? `http://${host}:${address.port}`))
    .trim()
    .replace(/\/+$/, "");
  const key = typeof values.key === "string" ? values.key : (env.APTIX_KEY ?? LOCAL_KEY);
  const timeout = typeof values.timeout === "string" ? values.timeout : undefined;
  if (timeout !== undefined && !/^\d+$/.test(timeout))
    return { problem: `--timeout needs milliseconds, not ${timeout}` };
  return { url, key, timeout };
}

const pad = (text, width) => text + " ".repeat(Math.max(0, width - text.length));

/** The health answer as lines of text: a route a line, then its checks, indented. */
export function formatHealth(health) {
  const lines = [];
  const nameWidth = Math.max(...health.routes.map((r) => r.route.length), 5);
  const providerWidth = Math.max(...health.routes.map((r) => r.provider.length), 8);
  for (const route of health.routes) {
    lines.push(
      `${route.ok ? "ok  " : "FAIL"}  ${pad(route.route, nameWidth)}  ${pad(route.provider, providerWidth)}  ${route.model}`,
    );
    for (const check of route.checks) {
      const status = check.status === null ? "" : ` (${check.status})`;
      lines.push(`        ${check.ok ? "ok  " : "FAIL"}  ${pad(check.name, 9)}  ${check.message}${status}`);
    }
  }
  const failing = health.routes.filter((r) => !r.ok).length;
  lines.push(
    failing === 0
      ? `Every route passes (${health.routes.length}).`
      : `${failing} of ${health.routes.length} routes fail a check: the lines marked FAIL say what the upstream answered. Details: docs/guides/use-a-real-model.md.`,
  );
  return lines.join("\n");
}

/** Asks the server and prints; returns the exit code. */
export async function doctor(args, env = process.env) {
  const asked = target(args, env);
  if ("problem" in asked) {
    console.error(`npm run doctor: ${asked.problem}`);
    return 2;
  }
  const query = asked.timeout ? `?timeoutMs=${asked.timeout}` : "";
  let response;
  try {
    response = await fetch(`${asked.url}/admin/health${query}`, {
      headers: { authorization: `Bearer ${asked.key}` },
      signal: AbortSignal.timeout(120_000),
    });
  } catch (error) {
    console.error(
      `npm run doctor: nothing answers at ${asked.url} (${error.cause?.code ?? error.message}): start the server first (npm start), or name it with --url.`,
    );
    return 2;
  }
  const text = await response.text();
  let body;
  try {
    body = JSON.parse(text);
  } catch {
    console.error(
      `npm run doctor: ${asked.url}/admin/health answered ${response.status} without JSON: is it aptix-edge?`,
    );
    return 2;
  }
  if (!response.ok) {
    console.error(
      `npm run doctor: ${asked.url}/admin/health answered ${response.status}: ${body.error?.message ?? text}`,
    );
    return 2;
  }
  console.log(formatHealth(body));
  return body.routes.every((r) => r.ok) ? 0 : 1;
}

if (import.meta.url === `file://${process.argv[1]}`) process.exit(await doctor(process.argv.slice(2)));
