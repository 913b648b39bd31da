// The name of a Worker secret or var that holds a credential (an MCP server's token, a model route's key): the
// registry stores the name, never the credential. One rule for every such field.
import { z } from "zod";
import { SettingsVars } from "./settings";

export const SECRET_NAME_PATTERN = /^[A-Z][A-Z0-9_]{0,63}$/;

export const SecretName = z
  .string()
  .regex(SECRET_NAME_PATTERN, "must be the NAME of a Worker secret or var (A-Z, 0-9, '_'), never the credential")
  // aptix's own settings are not credentials to hand out (LLM_API_KEY is the default route's, by its own var).
  .refine((name) => !(name in SettingsVars.shape), "names one of aptix's own settings; use a secret of its own");

/** The value of the secret (or var) `name` in `env`; null when it is not set or empty. */
export function secretValue(env: object, name: string): string | null {
  const value: unknown = Reflect.get(env, name);
  return typeof value === "string" && value !== "" ? value : null;
}
