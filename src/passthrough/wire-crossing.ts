// Which wire a model route speaks, and how a passthrough request crosses to a route of the other wire (issue 28):
// the upstream path there, the client's body translated (src/translate/), and the answer translated back. One
// table of crossings, by the client's wire and path; a request on a route of its own wire is relayed as it is.
import type { z } from "zod";
import { ApiError } from "../errors";
import { parseWith } from "../http";
import type { ModelRoute } from "../routing/model-routes";
import { ChatRequestIn, messagesToChatRequest, ok, refuse, type Translated } from "../translate/anthropic-to-chat";
import { chatRequestToMessages } from "../translate/chat-to-anthropic";
import { MessagesRequest } from "../wire/anthropic";
import { messageAnswerAsChat } from "./answer-as-chat";
import { chatAnswerAsMessage } from "./answer-as-message";
import { jsonObjectOf, type PassthroughRequest, type Wire } from "./request-body";

/** The wire of a route's upstream: Anthropic's Messages API for `anthropic`, OpenAI's for every other provider. */
export function wireOf(route: Pick<ModelRoute, "provider">): Wire {
  return route.provider === "anthropic" ? "anthropic" : "openai";
}

interface Crossing {
  /** The upstream path on the route's wire (what follows /v1). */
  path: string;
  /** The client's body in the route's wire; a refusal names what that wire cannot carry. */
  request(request: PassthroughRequest): Translated<unknown>;
  /** The route's answer (JSON, the relayed stream, or an error answer) in the client's wire. */
  answer(answer: Response, request: PassthroughRequest): Promise<Response>;
}

/** The client's body parsed with `schema`, or a refusal naming the field at fault. */
function parsed<S extends z.ZodType>(bytes: ArrayBuffer, schema: S): Translated<z.output<S>> {
  try {
    return ok(parseWith(schema, jsonObjectOf(bytes), "request body"));
  } catch (error) {
    if (error instanceof ApiError) return refuse(error.param ?? "body", error.message);
    throw error;
  }
}

const CROSSINGS: Record<Wire, Record<string, Crossing>> = {
  anthropic: {
    "/messages": {
      path: "/chat/completions",
      request: ({ bytes, messages }) => {
        const body = messages ? ok(messages) : parsed(bytes, MessagesRequest);
        return body.ok ? messagesToChatRequest(body.value) : body;
      },
      answer: chatAnswerAsMessage,
    },
  },
  openai: {
    "/chat/completions": {
      path: "/messages",
      request: ({ bytes }) => {
        const body = parsed(bytes, ChatRequestIn);
        return body.ok ? chatRequestToMessages(body.value) : body;
      },
      answer: messageAnswerAsChat,
    },
  },
};

/** What a route is sent: the path after /v1 on its upstream, and the body in its wire. */
export interface WireBody {
  path: string;
  bytes: ArrayBuffer | Uint8Array;
}

const encoder = new TextEncoder();

/**
 * One request's body for the routes of each wire: its own bytes on its own wire, translated (once, when a route of
 * the other wire is first tried) on the other. A client path with no crossing (embeddings on an `anthropic` route)
 * has no body there: such a route cannot serve it.
 */
export class WireBodies {
  private crossed: Translated<WireBody> | undefined;

  constructor(
    private readonly path: string,
    private readonly request: PassthroughRequest,
  ) {}

  private crossing(): Crossing | null {
    const crossings = CROSSINGS[this.request.wire];
    return Object.hasOwn(crossings, this.path) ? (crossings[this.path] ?? null) : null;
  }

  /** The body for a route of `wire`, a refusal of the translation, or null when the client's path cannot cross. */
  for(wire: Wire): Translated<WireBody> | null {
    if (wire === this.request.wire) return ok({ path: this.path, bytes: this.request.bytes });
    const crossing = this.crossing();
    if (!crossing) return null;
    if (this.crossed) return this.crossed;
    const translated = crossing.request(this.request);
    this.crossed = translated.ok
      ? ok({ path: crossing.path, bytes: encoder.encode(JSON.stringify(translated.value)) })
      : translated;
    return this.crossed;
  }

  /** An answer from a route of `wire` in the client's wire. */
  answer(answer: Response, wire: Wire): Promise<Response> {
    const crossing = this.crossing();
    if (wire === this.request.wire || !crossing) return Promise.resolve(answer);
    return crossing.answer(answer, this.request);
  }
}
