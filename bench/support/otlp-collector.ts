// The tracing benchmark's collector: the tests' OTLP/HTTP receiver (test/observability/otlp-receiver.ts), run in a
// process of its own as a real collector is, so decoding the exports never shares the event loop that times the
// requests. Prints its URL, then answers `GET /stats` on the same port's sibling (URL + 1 line) with what it got.
import { createServer } from "node:http";
import { startOtlpReceiver } from "../../test/observability/otlp-receiver.ts";

const receiver = await startOtlpReceiver();
const stats = createServer((req, res) => {
  if (req.url === "/clear") receiver.clear();
  const spans = receiver.spans();
  res
    .writeHead(200, { "content-type": "application/json" })
    .end(JSON.stringify({ spans: spans.length, traces: new Set(spans.map((s) => s.traceId)).size }));
});
stats.listen(0, "127.0.0.1", () => {
  const address = stats.address();
  const port = typeof address === "object" && address ? address.port : 0;
  console.log(JSON.stringify({ url: receiver.url, stats: `http://127.0.0.1:${port}` }));
});
