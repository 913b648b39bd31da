// The address `wrangler dev` is asked to serve on (the --ip and --port given to `npm start` or `npm run dev`, else
// wrangler's localhost:8787) and the check that nothing listens there yet: on a taken default port wrangler would
// quietly serve on 8788 beside the server already there, and on a taken --port it fails with a stack trace.
import { lookup } from "node:dns/promises";
import { createServer } from "node:net";
import { parseArgs } from "node:util";

export const DEFAULT_IP = "localhost";
export const DEFAULT_PORT = 8787;

/**
 * The --ip and --port among wrangler dev's arguments, in either form (`--port 9000`, `--port=9000`; the last wins).
 * Returns a problem to print instead when --port is not a port number.
 */
export function requestedAddress(args) {
  const { values } = parseArgs({
    args,
    strict: false,
    allowPositionals: true,
    options: { ip: { type: "string" }, port: { type: "string" } },
  });
  const ip = typeof values.ip === "string" ? values.ip : DEFAULT_IP;
  if (values.port === undefined) return { ip, port: DEFAULT_PORT };
  const port = typeof values.port === "string" && /^\d+$/.test(values.port) ? Number(values.port) : Number.NaN;
  if (!(port >= 1 && port <= 65_535)) {
    return { problem: `--port needs a port number (1 to 65535), not ${JSON.stringify(values.port)}` };
  }
  return { ip, port };
}

/** Whether a server could listen on every address `ip` names (as wrangler checks a port: by listening on it). */
export async function isPortFree(ip, port) {
  const host = ip === "*" ? "0.0.0.0" : ip.replace(/^\[(.*)\]$/, "$1");
  const addresses = await lookup(host, { all: true });
  for (const { address } of addresses) {
    if (!(await canListen(address, port))) return false;
  }
  return true;
}

function canListen(address, port) {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", (error) => {
      if (error.code === "EADDRINUSE") resolve(false);
      // An address this machine does not have (::1 without IPv6) is not where wrangler will listen.
      else if (error.code === "EADDRNOTAVAIL") resolve(true);
      else reject(error);
    });
    server.listen({ host: address, port, exclusive: true }, () => server.close(() => resolve(true)));
  });
}

/**
 * The message for a port already taken, naming it and how to pick another (`command` is how the user started this:
 * `npm start` or `npm run dev`), with the next free port as the example.
 */
export async function busyPortMessage({ ip, port, command }) {
  let example = "N";
  for (let next = port + 1; next <= Math.min(port + 20, 65_535); next++) {
    if (await isPortFree(ip, next)) {
      example = String(next);
      break;
    }
  }
  return [
    `${command}: port ${port} on ${ip} is already in use, most likely by another aptix-edge \`npm start\` (or another \`wrangler dev\`) still running.`,
    `Stop that one, or serve this one on another port: ${command} -- --port ${example}`,
  ].join("\n");
}

/**
 * Ends this process with a message when wrangler dev's arguments name no valid port (exit 2) or a port already in use
 * (exit 1). `command` is how the user started this, for the message: `npm start` or `npm run dev`.
 */
export async function exitUnlessPortFree(args, command) {
  const address = requestedAddress(args);
  if ("problem" in address) {
    console.error(`${command}: ${address.problem}`);
    process.exit(2);
  }
  if (!(await isPortFree(address.ip, address.port))) {
    console.error(await busyPortMessage({ ...address, command }));
    process.exit(1);
  }
}
