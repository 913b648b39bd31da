// Types of scripts/llm-model-check.mjs, for its test.
export interface LlmVars {
  baseUrl: string;
  model: string;
}
export declare function parseDotVars(text: string): Record<string, string>;
export declare function tomlVars(text: string, env?: string): Record<string, string>;
export declare function flagVars(args: readonly string[]): Record<string, string>;
export declare function llmVars(
  args: readonly string[],
  options?: { cwd?: string; processEnv?: Record<string, string | undefined>; localVars?: Record<string, string> },
): LlmVars;
export declare function missingModelProblem(vars: LlmVars, command?: string): string | null;
export declare function exitUnlessModelNamed(
  args: readonly string[],
  command: string,
  localVars?: Readonly<Record<string, string>>,
): void;
