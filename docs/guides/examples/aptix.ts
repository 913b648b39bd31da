// What every client example needs to reach aptix: its base URL and a key (run.ts reads them from APTIX_URL and
// APTIX_KEY), and optionally the fetch to send requests with (the tests run the examples inside the Workers runtime).
export interface Aptix {
  /** The server, no trailing slash: http://localhost:8787 for `npm start`. */
  url: string;
  /** An API key with the `chat` scope: dev-key locally. */
  key: string;
  /** Leave it out to use the global fetch. */
  fetch?: typeof fetch;
}
