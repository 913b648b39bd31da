// Bytes written to a client's stream: the events one step makes go out as one write, so a text delta is not held
// behind the events that open its block (each write to a response stream is a trip through the runtime).

export function joinBytes(parts: readonly Uint8Array[]): Uint8Array {
  if (parts.length === 1) return parts[0] as Uint8Array;
  const all = new Uint8Array(parts.reduce((n, p) => n + p.byteLength, 0));
  let at = 0;
  for (const part of parts) {
    all.set(part, at);
    at += part.byteLength;
  }
  return all;
}
