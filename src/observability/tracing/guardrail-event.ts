// A guardrail's decision as a span event (the turn's run span; the passthrough's request span): the guardrail, the
// point, the action and the kinds of thing it found, comma-joined. Never the text it matched.

export const guardrailEventName = "guardrail";

export function guardrailEventAttributes(decision: {
  guardrail: string;
  point: string;
  action: string;
  found: readonly string[];
}): Record<string, string> {
  return {
    "aptix.guardrail.name": decision.guardrail,
    "aptix.guardrail.point": decision.point,
    "aptix.guardrail.action": decision.action,
    "aptix.guardrail.found": decision.found.join(","),
  };
}
