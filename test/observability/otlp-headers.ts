// The headers the `traced` project's Worker is configured to send with each export (OTEL_EXPORTER_OTLP_HEADERS),
// for vitest.config.ts to set and for a test to find at the receiver. No imports: both sides use it.

/** What the receiver should see in each export's `authorization` header. */
export const TEST_OTLP_AUTHORIZATION = "Bearer otlp-test-token";

/** OTEL_EXPORTER_OTLP_HEADERS as the OpenTelemetry spec writes it: `key=value` pairs, values percent-encoded. */
export const TEST_OTLP_HEADERS = `authorization=${encodeURIComponent(TEST_OTLP_AUTHORIZATION)}`;
