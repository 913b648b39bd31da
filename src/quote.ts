// Quoting what a user wrote in a message back to them: bounded, so a 100 kB name never becomes a 100 kB error.

/** The longest piece of user input an error message quotes. */
export const QUOTE_MAX_CHARS = 100;

/** `'value'`, cut to `max` characters with a note of how much was left out. */
export function quoted(value: string, max = QUOTE_MAX_CHARS): string {
  if (value.length <= max) return `'${value}'`;
  return `'${value.slice(0, max)}…' (${value.length} characters)`;
}
