// Parses the strict JSON tool-call format of the design document's Decision 1 out of a model's text.
import { z } from "zod";
import { fieldMessage, firstProblem } from "../zod-issues";

const JsonToolCall = z.strictObject({
  tool: z.string().regex(/^[a-zA-Z0-9_-]+$/, "must be a tool name"),
  parameters: z.record(z.string(), z.unknown()),
  terminate: z.boolean(),
});

export type ParsedModelText =
  | { kind: "text"; text: string }
  | { kind: "call"; tool: string; parametersJson: string; terminate: boolean }
  | { kind: "malformed"; problem: string };

/** A fenced ```json block, or the whole reply when it is one JSON-looking object. */
function candidate(text: string): string | null {
  const trimmed = text.trim();
  const fenced = /^```(?:json)?\s*\n([\s\S]*?)\n?```$/.exec(trimmed);
  if (fenced?.[1] !== undefined) return fenced[1].trim();
  if (trimmed.startsWith("{")) return trimmed;
  return null;
}

/**
 * A reply meant as a tool call (it is, or is fenced as, one JSON object) must be exactly
 * {"tool","parameters","terminate"}; anything else in that shape is malformed. Prose is an answer.
 */
export function parseModelText(text: string | null): ParsedModelText {
  const body = candidate(text ?? "");
  if (body === null) return { kind: "text", text: text ?? "" };
  let raw: unknown;
  try {
    raw = JSON.parse(body);
  } catch (error) {
    return {
      kind: "malformed",
      problem: `it is not valid JSON (${error instanceof Error ? error.message : "parse error"})`,
    };
  }
  const parsed = JsonToolCall.safeParse(raw);
  if (!parsed.success) {
    const problem = firstProblem(parsed.error);
    return { kind: "malformed", problem: fieldMessage(problem, "tool call").replace(/\.$/, "") };
  }
  return {
    kind: "call",
    tool: parsed.data.tool,
    parametersJson: JSON.stringify(parsed.data.parameters),
    terminate: parsed.data.terminate,
  };
}

export function correctionRequest(problem: string): string {
  return (
    `Your last reply looked like a tool call but could not be used: ${problem}. ` +
    'Reply with ONLY a JSON object of the form {"tool": "tool_name", "parameters": {...}, "terminate": false}, ' +
    "or answer the user in plain text without a JSON object."
  );
}
