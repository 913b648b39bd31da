// Vitest global setup (Node): the webhook receiver the `workers` project's deliveries go to (./receiver.ts).
import { startWebhookReceiver } from "./receiver.ts";

declare module "vitest" {
  export interface ProvidedContext {
    webhookReceiverUrl: string;
  }
}

export default async function setup(project: import("vitest/node").TestProject): Promise<() => Promise<void>> {
  const receiver = await startWebhookReceiver();
  project.provide("webhookReceiverUrl", receiver.url);
  return receiver.close;
}
