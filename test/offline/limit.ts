// The offline project's per-key model call limit (MODEL_CALL_LIMITER, a minute): set by vitest.config.ts,
// reached by test/offline/model-call-limit.test.ts, and enough for the longest transcript of docs/.
export const OFFLINE_MODEL_CALL_LIMIT = 20;
