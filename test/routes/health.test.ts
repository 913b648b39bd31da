import { exports } from "cloudflare:workers";
import { expect, it } from "vitest";

it("answers /healthz without a key", async () => {
  const response = await exports.default.fetch("http://aptix.test/healthz");
  expect(response.status).toBe(200);
  expect(await response.json()).toEqual({ status: "ok" });
});
