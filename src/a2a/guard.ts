// Every A2A handler call behind one guard: an A2A error (the protocol's: task not found, malformed, ...) passes as it
// is, for the binding to answer in its shape; anything else is unexpected, logged with its stack, and answered as
// the protocol's internal error naming the request id, never with its own words.

import { A2AError } from "@a2a-js/sdk/errors";
import type { A2ARequestHandler } from "@a2a-js/sdk/server";
import type { JsonAdminLogger } from "../observability/admin-logger";

export function unexpected(logger: JsonAdminLogger, requestId: string, error: unknown): A2AError {
  if (error instanceof A2AError) return error;
  logger.addException("[a2a]", error);
  return new A2AError(`The server failed to handle this request. Quote request id ${requestId} when reporting it.`);
}

function isAsyncGenerator(value: unknown): value is AsyncGenerator<unknown> {
  return typeof value === "object" && value !== null && Symbol.asyncIterator in value && "next" in value;
}

async function* guardedStream<T>(stream: AsyncGenerator<T>, fail: (error: unknown) => A2AError): AsyncGenerator<T> {
  try {
    yield* stream;
  } catch (error) {
    throw fail(error);
  }
}

/** The handler with each method's failures passed through `unexpected`. */
export function guarded(handler: A2ARequestHandler, logger: JsonAdminLogger, requestId: string): A2ARequestHandler {
  const fail = (error: unknown) => unexpected(logger, requestId, error);
  return new Proxy(handler, {
    get(target, property, receiver) {
      const value: unknown = Reflect.get(target, property, receiver);
      if (typeof value !== "function") return value;
      return (...args: unknown[]) => {
        let result: unknown;
        try {
          result = value.apply(target, args);
        } catch (error) {
          throw fail(error);
        }
        if (isAsyncGenerator(result)) return guardedStream(result, fail);
        if (result instanceof Promise) return result.catch((error: unknown) => Promise.reject(fail(error)));
        return result;
      };
    },
  });
}
