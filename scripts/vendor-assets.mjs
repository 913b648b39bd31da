#!/usr/bin/env node
// Prepares what public/ needs besides its own files: copies the browser libraries the Worker serves as its own
// static assets (no CDN: the pages work offline) from node_modules into public/vendor/, and writes the console's
// frame list from the server's schema (scripts/console-frames.mjs); neither is in git. Run by `npm start`
// (scripts/start.mjs), `npm run dev` (its predev), `npm test`, the browser tests and the deploy, before wrangler or
// the type check reads public/.
import { copyFileSync, mkdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { writeConsoleFrames } from "./console-frames.mjs";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const ASSETS = [
  // The /docs page's OpenAPI UI (swagger-ui-dist, the Swagger UI project's own prebuilt bundle).
  ["node_modules/swagger-ui-dist/swagger-ui-bundle.js", "public/vendor/swagger-ui/swagger-ui-bundle.js"],
  ["node_modules/swagger-ui-dist/swagger-ui.css", "public/vendor/swagger-ui/swagger-ui.css"],
  ["node_modules/swagger-ui-dist/LICENSE", "public/vendor/swagger-ui/LICENSE.txt"],
  // The admin page's charts (uPlot: small, fast, canvas; its data is also shown as a table).
  ["node_modules/uplot/dist/uPlot.esm.js", "public/vendor/uplot/uPlot.esm.js"],
  ["node_modules/uplot/dist/uPlot.min.css", "public/vendor/uplot/uPlot.min.css"],
  ["node_modules/uplot/LICENSE", "public/vendor/uplot/LICENSE.txt"],
  // The console's Markdown: markdown-it (raw HTML off) and DOMPurify over what it makes.
  ["node_modules/markdown-it/dist/browser/markdown-it.esm.min.mjs", "public/vendor/markdown-it/markdown-it.min.mjs"],
  ["node_modules/markdown-it/LICENSE", "public/vendor/markdown-it/LICENSE.txt"],
  ["node_modules/dompurify/dist/purify.es.mjs", "public/vendor/dompurify/purify.es.mjs"],
  ["node_modules/dompurify/LICENSE", "public/vendor/dompurify/LICENSE.txt"],
  // Code highlighting (highlight.js's prebuilt ES module of its common languages), loaded with the first code block.
  ["node_modules/@highlightjs/cdn-assets/es/highlight.min.js", "public/vendor/highlight/highlight.min.js"],
  ["node_modules/@highlightjs/cdn-assets/styles/github.min.css", "public/vendor/highlight/github.min.css"],
  ["node_modules/@highlightjs/cdn-assets/styles/github-dark.min.css", "public/vendor/highlight/github-dark.min.css"],
  ["node_modules/@highlightjs/cdn-assets/LICENSE", "public/vendor/highlight/LICENSE.txt"],
  // Diagrams: mermaid's one-file build, loaded only when an answer contains a mermaid block.
  ["node_modules/mermaid/dist/mermaid.min.js", "public/vendor/mermaid/mermaid.min.js"],
  ["node_modules/mermaid/LICENSE", "public/vendor/mermaid/LICENSE.txt"],
];

for (const [from, to] of ASSETS) {
  mkdirSync(dirname(join(root, to)), { recursive: true });
  copyFileSync(join(root, from), join(root, to));
}

await writeConsoleFrames(root);
