// A timeout signal whose timer is cleared when the work ends: a pending AbortSignal.timeout() timer would
// keep a Durable Object busy (and unevictable) for the whole timeout after the work is done.

export interface Deadline {
  signal: AbortSignal;
  clear(): void;
}

export function deadline(ms: number, parent?: AbortSignal): Deadline {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(new DOMException(`Timed out after ${ms} ms`, "TimeoutError")), ms);
  const onParentAbort = () => controller.abort(parent?.reason);
  if (parent?.aborted) controller.abort(parent.reason);
  else parent?.addEventListener("abort", onParentAbort, { once: true });
  return {
    signal: controller.signal,
    clear() {
      clearTimeout(timer);
      parent?.removeEventListener("abort", onParentAbort);
    },
  };
}
