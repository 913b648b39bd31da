// Vitest global setup (Node): starts the scripted upstream once and hands its URL to the Workers pool.
import type { TestProject } from "vitest/node";
import { startScriptedUpstream } from "./scripted-upstream.ts";

export const TEST_UPSTREAM_API_KEY = "sk-test-upstream-key";

declare module "vitest" {
  export interface ProvidedContext {
    upstreamUrl: string;
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const upstream = await startScriptedUpstream({ apiKey: TEST_UPSTREAM_API_KEY });
  project.provide("upstreamUrl", upstream.url);
  return () => upstream.close();
}
