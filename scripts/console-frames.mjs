// Writes public/js/frames.js, the console's list of the frames the server logs, from the wire's own schema
// (LOGGED_FRAME_TYPES in src/wire/frames.ts, derived from the LoggedFrame union): the module is bundled with esbuild
// (wrangler's bundler) and read here, so the list the console replays by can never drift from the server's.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { build } from "esbuild";

/** The generated module, formatted as the project's formatter writes it. */
function moduleText(types) {
  const items = types.map((type) => `  ${JSON.stringify(type)},`).join("\n");
  return `// @ts-check
// The frames the server writes to a session's event log before it sends them (a reconnect replays these).
// Generated from the server's schema (src/wire/frames.ts, LOGGED_FRAME_TYPES) by scripts/console-frames.mjs: do not
// edit; \`npm start\`, \`npm test\` and the deploy write it anew.

export const LOGGED_FRAME_TYPES = /** @type {const} */ ([
${items}
]);
`;
}

export async function writeConsoleFrames(root) {
  const bundled = await build({
    entryPoints: [join(root, "src/wire/frames.ts")],
    bundle: true,
    format: "esm",
    platform: "node",
    write: false,
    logLevel: "silent",
  });
  const code = bundled.outputFiles[0]?.text ?? "";
  const wire = await import(`data:text/javascript;base64,${Buffer.from(code).toString("base64")}`);
  if (!Array.isArray(wire.LOGGED_FRAME_TYPES) || wire.LOGGED_FRAME_TYPES.length === 0) {
    throw new Error("src/wire/frames.ts exports no LOGGED_FRAME_TYPES list.");
  }
  writeFileSync(join(root, "public/js/frames.js"), moduleText(wire.LOGGED_FRAME_TYPES));
}
