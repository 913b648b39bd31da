// npm run check:deploy's config checks (scripts/check-deploy.ts): a compatibility date, no placeholder ids outside
// the local top level, no credential in [vars]; and this repository's own wrangler.toml passes them.

import { describe, expect, it } from "vitest";
import { experimental_readRawConfig } from "wrangler";
import { ASSET_LIMITS, assetProblems, configProblems } from "../../scripts/check-deploy.ts";

const local = {
  compatibility_date: "2026-10-20",
  d1_databases: [{ binding: "DB", database_id: "00000000-0000-4000-8000-000000000000" }],
};

describe("check:deploy's config checks", () => {
  it("passes this repository's wrangler.toml (its placeholder id is the local top level's only)", () => {
    const { rawConfig } = experimental_readRawConfig({ config: "wrangler.toml" });
    expect(configProblems(rawConfig as Parameters<typeof configProblems>[0])).toEqual([]);
  });

  it("refuses a placeholder database id in a deploy environment", () => {
    const config = {
      ...local,
      env: { production: { d1_databases: [{ binding: "DB", database_id: "00000000-0000-4000-8000-000000000000" }] } },
    };
    expect(configProblems(config)).toEqual([
      "[env.production] has the placeholder id 00000000-0000-4000-8000-000000000000 for DB: put the real one (wrangler d1 create)",
    ]);
  });

  it("refuses a credential in [vars]", () => {
    expect(configProblems({ ...local, vars: { LLM_API_KEY: "sk-live-123", LLM_MODEL: "gpt-4o" } })).toEqual([
      "the top level sets LLM_API_KEY in [vars]: a credential belongs in a secret (wrangler secret put LLM_API_KEY)",
    ]);
  });

  it("refuses a config without a compatibility_date", () => {
    expect(configProblems({ d1_databases: [] })).toEqual(["the config has no compatibility_date"]);
  });
});

describe("the static assets check", () => {
  it("passes assets within the platform's limits", () => {
    expect(assetProblems([{ path: "public/index.html", bytes: 4_000 }])).toEqual([]);
  });

  it("refuses a file over 25 MiB, naming it", () => {
    expect(assetProblems([{ path: "public/vendor/huge.js", bytes: ASSET_LIMITS.fileBytes + 1 }])).toEqual([
      "the static asset public/vendor/huge.js is 25600.0 KiB, over the limit of 25600.0 KiB",
    ]);
  });

  it("refuses more files than a deployment may have", () => {
    const files = Array.from({ length: ASSET_LIMITS.files + 1 }, (_, i) => ({ path: `public/${i}.txt`, bytes: 1 }));
    expect(assetProblems(files)).toEqual(["the static assets are 20001 files, over the limit of 20000"]);
  });
});
