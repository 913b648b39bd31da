// The data of each event of a server-sent event stream, as the benchmarks read answers (no library: the clock must
// see each event as its bytes arrive). Events without data, and `[DONE]`, are skipped.
export async function* sseData(body: ReadableStream<Uint8Array>): AsyncGenerator<string> {
  const decoder = new TextDecoder();
  const reader = body.getReader();
  let buffer = "";
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    buffer += decoder.decode(value, { stream: true });
    let end = buffer.indexOf("\n\n");
    while (end >= 0) {
      const data = buffer
        .slice(0, end)
        .split("\n")
        .filter((line) => line.startsWith("data: "))
        .map((line) => line.slice(6))
        .join("\n");
      buffer = buffer.slice(end + 2);
      end = buffer.indexOf("\n\n");
      if (data && data !== "[DONE]") yield data;
    }
  }
}
