// What a classifier (src/guardrails/guardrail-classifier.ts) or the prompt-injection heuristic answers about a text:
// its own module, so the heuristic and the classifier that calls it do not import each other.

export interface Classification {
  flagged: boolean;
  /** Llama Guard's categories (`S1`), or the heuristic's rules, that fired. */
  categories: string[];
  /** Which classifier answered: `llama-guard:<model>`, `route:<name>`, `heuristic`, `offline-stand-in`. */
  classifier: string;
}
