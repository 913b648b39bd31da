// The documented heuristic behind `prompt_injection` when no classifier route is named: text (mostly a tool's result)
// that speaks to the assistant rather than about its subject. Each rule has a name, reported as the category found;
// docs/guardrails.md lists them. A heuristic misses paraphrases; a route names a real classifier.
import type { Classification } from "./classification";

export const INJECTION_RULES: readonly (readonly [name: string, pattern: RegExp])[] = [
  // "Ignore all previous instructions", "disregard the rules above", "forget your guidelines".
  [
    "ignore_instructions",
    /\b(?:ignore|disregard|forget|override|bypass)\b[^.\n]{0,40}?\b(?:previous|prior|above|earlier|preceding|all|any|your|the|system)\b[^.\n]{0,30}?\b(?:instructions?|prompts?|rules|directions|guidelines|directives|constraints)\b/iu,
  ],
  // "You are now DAN", "from now on you will", "pretend to be an unrestricted AI".
  [
    "role_change",
    /\b(?:you are now|from now on,? you (?:are|will|must)|pretend (?:to be|you are)|act as (?:an? )?(?:unrestricted|unfiltered|jailbroken|different)|enter (?:developer|god|jailbreak) mode)\b/iu,
  ],
  // "Reveal your system prompt", "print the instructions above", "what were you told before this".
  [
    "prompt_exfiltration",
    /\b(?:reveal|show|print|repeat|output|leak|dump|tell me|what (?:is|are|were))\b[^.\n]{0,30}?\b(?:system prompt|system message|hidden instructions|initial instructions|original instructions|your instructions|instructions above)\b/iu,
  ],
  // Chat-template and role markers hidden in data: `<|im_start|>system`, `[INST]`, `<system>`, "### System:".
  [
    "role_tags",
    /<\|(?:im_start|im_end|system|assistant|user|begin_of_text|start_header_id)\|>|\[\/?INST\]|<\/?(?:system|assistant)>|^\s*#{1,4}\s*(?:system|assistant)\s*:/imu,
  ],
  // "New instructions:", "Do not tell the user", "send the conversation to https://...".
  [
    "hidden_instructions",
    /\b(?:new|updated|real|actual) instructions\s*:|\bdo not (?:tell|inform|mention (?:this )?to|let) the user\b|\b(?:send|post|forward|exfiltrate)\b[^.\n]{0,40}?\b(?:conversation|chat history|api keys?|credentials|secrets)\b[^.\n]{0,20}?\bto\b/iu,
  ],
];

export function promptInjectionHeuristic(text: string): Classification {
  const categories = INJECTION_RULES.filter(([, pattern]) => pattern.test(text)).map(([name]) => name);
  return { flagged: categories.length > 0, categories, classifier: "heuristic" };
}
