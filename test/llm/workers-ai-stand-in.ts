// A stand-in for the Workers AI binding, answering the shapes Cloudflare documents: it answers each `run` with
// the next output it was given (an object, an event stream, or an error to throw) and records what it was asked.
import type { WorkersAiBinding } from "../../src/llm/workers-ai";

export const MODEL = "@cf/meta/llama-3.3-70b-instruct-fp8-fast";
export const USAGE = { prompt_tokens: 9, completion_tokens: 4, total_tokens: 13 };

export function standIn(...outputs: (unknown | Error)[]) {
  const runs: { model: string; inputs: Record<string, unknown> }[] = [];
  const binding: WorkersAiBinding = {
    run: async (model, inputs) => {
      runs.push({ model, inputs });
      const next = outputs.shift();
      if (next instanceof Error) throw next;
      return next;
    },
  };
  return { binding, runs };
}

/** The bytes of an event stream the binding returns for `stream: true`. */
export function events(...data: (Record<string, unknown> | "[DONE]")[]): ReadableStream<Uint8Array> {
  const text = data.map((d) => `data: ${d === "[DONE]" ? d : JSON.stringify(d)}\n\n`).join("");
  return new Response(text).body ?? new ReadableStream();
}
