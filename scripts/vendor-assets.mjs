#!/usr/bin/env node
// Copies the browser libraries the Worker serves as its own static assets (no CDN: the pages work offline)
// from node_modules into public/vendor/ (not in git). Run by `npm run dev` (and so `npm start`), the browser
// tests and the deploy, before wrangler reads public/.
import { copyFileSync, mkdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

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
];

for (const [from, to] of ASSETS) {
  mkdirSync(dirname(join(root, to)), { recursive: true });
  copyFileSync(join(root, from), join(root, to));
}
