// What the model reads when a guardrail stops a tool call or withholds a tool's result: the guardrail's plain
// words (what it found, never the text), so the model can tell the person or try another way.
import { type GuardrailDecision, guardrailRefusal } from "../guardrails/guardrail-check";

/** The result of a call a `tool_call` guardrail blocked before it ran. */
export function blockedCallText(decision: GuardrailDecision): string {
  return `The call was not run. ${guardrailRefusal(decision).message}`;
}

/** What the model reads in place of a result a `tool_result` guardrail blocked. */
export function withheldResultText(decision: GuardrailDecision): string {
  return `The tool ran, but its result was withheld from you. ${guardrailRefusal(decision).message}`;
}
