// The rate limiting binding counts in windows aligned to the wall clock (a minute, from :00): a test that
// spends a key's calls and then expects a refusal starts well inside a window, so no rollover resets it.
export async function awayFromWindowEdge(periodSeconds = 60, marginSeconds = 8): Promise<void> {
  const intoWindow = (Date.now() / 1000) % periodSeconds;
  const left = periodSeconds - intoWindow;
  if (left < marginSeconds) await new Promise((resolve) => setTimeout(resolve, left * 1000 + 100));
}
