// Vitest global setup (Node): starts the scripted upstream once and hands its URL to the Workers pool.
import type { TestProject } from "vitest/node";
import { startScriptedAnthropic } from "./scripted-anthropic.ts";
import { startScriptedUpstream } from "./scripted-upstream.ts";

export const TEST_UPSTREAM_API_KEY = "sk-test-upstream-key";
/** The second upstream's own key: what a model route's `apiKeySecret` (UPSTREAM_B_KEY) names in the tests. */
export const TEST_UPSTREAM_B_API_KEY = "sk-test-upstream-b-key";
/** The scripted Anthropic upstream's key (`x-api-key`, or a bearer token as the official SDK sends it). */
export const TEST_ANTHROPIC_API_KEY = "sk-ant-test-upstream-key";

declare module "vitest" {
  export interface ProvidedContext {
    upstreamUrl: string;
    upstreamBUrl: string;
    anthropicUpstreamUrl: string;
  }
}

/**
 * Two scripted OpenAI-compatible upstreams (the one `default` forwards to, and a second one model routes send calls
 * to), and a scripted Anthropic Messages API upstream.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const upstream = await startScriptedUpstream({ apiKey: TEST_UPSTREAM_API_KEY });
  const upstreamB = await startScriptedUpstream({ apiKey: TEST_UPSTREAM_B_API_KEY });
  const anthropic = await startScriptedAnthropic({ apiKey: TEST_ANTHROPIC_API_KEY });
  project.provide("upstreamUrl", upstream.url);
  project.provide("upstreamBUrl", upstreamB.url);
  project.provide("anthropicUpstreamUrl", anthropic.url);
  return async () => {
    await Promise.all([upstream.close(), upstreamB.close(), anthropic.close()]);
  };
}
