// URL-mode elicitation (MCP 2025-11-25 "Elicitation"; 2026-07-28 "Multi Round-Trip Requests"):
// a tool that needs the person to visit a page first throws UrlElicitationRequired. A caller that
// declared URL mode gets the revision's own words for it (2025-11-25: error -32042 with the
// link in `data.elicitations`; 2026-07-28: an `input_required` result asking `elicitation/create`
// with the link, and a `requestState` for the retry); any other caller gets the tool error it
// always got, whose text carries the plain link. Pure, but for the endpoint's hooks.
import * as v from "valibot";
import { INVALID_PARAMS, JsonRpcError } from "./errors.ts";
import { ToolError } from "./tool.ts";

/** Thrown by a tool: `message` is the tool error's text, `url` the page, `prompt` the ask. */
export class UrlElicitationRequired extends ToolError {
  override name = "UrlElicitationRequired";
  readonly url: string;
  readonly prompt: string;
  // Plain fields, not parameter properties: Node.js strips types but not that syntax.
  constructor(message: string, url: string, prompt: string) {
    super(message);
    this.url = url;
    this.prompt = prompt;
  }
}

/** The call a requestState is bound to. */
export interface ElicitedCall {
  readonly name: string;
  readonly arguments: Readonly<Record<string, unknown>>;
}

/** What an endpoint keeps for URL elicitation; without it nobody is asked. */
export interface UrlElicitations<A> {
  /** 2025-11-25: whether the caller's `initialize` declared URL mode, for its later requests. */
  remember(auth: A, url: boolean): Promise<void>;
  declared(auth: A): Promise<boolean>;
  /** 2026-07-28: an opaque, single-use state bound to the caller and this call. */
  issue(auth: A, call: ElicitedCall): Promise<string>;
  /** Null when `state` is good for this caller and call (it is used up now); else why not. */
  redeem(auth: A, call: ElicitedCall, state: string): Promise<string | null>;
}

/** The key of the one input request an `input_required` result of ours carries. */
export const CONNECT_INPUT = "connect";

const _UrlModeSchema = v.object({ elicitation: v.object({ url: v.looseObject({}) }) });

/** Whether client capabilities (either revision's shape) declare URL-mode elicitation. */
export function declaresUrlMode(capabilities: unknown): boolean {
  return v.is(_UrlModeSchema, capabilities);
}

const _RetrySchema = v.object({
  requestState: v.optional(v.string("params.requestState must be a string")),
  inputResponses: v.optional(
    v.record(v.string(), v.unknown(), "params.inputResponses must be an object"),
  ),
});

const NO_RETRY = Object.freeze({ state: undefined, declined: false });

/**
 * A 2026-07-28 retry's `requestState` (undefined: not a retry), and whether the person declined
 * or dismissed our ask (then they are not asked again in the same breath). Throws -32602.
 */
export function retryOf(
  params: Readonly<Record<string, unknown>>,
): { readonly state: string | undefined; readonly declined: boolean } {
  if (params["requestState"] === undefined && params["inputResponses"] === undefined) {
    return NO_RETRY;
  }
  const parsed = v.safeParse(_RetrySchema, {
    requestState: params["requestState"],
    inputResponses: params["inputResponses"],
  });
  if (!parsed.success) {
    throw new JsonRpcError(INVALID_PARAMS, `Invalid params: ${parsed.issues[0].message}`);
  }
  const answer = parsed.output.inputResponses?.[CONNECT_INPUT];
  const action = typeof answer === "object" && answer !== null
    ? (answer as Record<string, unknown>)["action"]
    : undefined;
  return {
    state: parsed.output.requestState,
    declined: action === "decline" || action === "cancel",
  };
}

/** The 2026-07-28 input request that sends the person to `error.url`. */
export function connectInputRequests(error: UrlElicitationRequired) {
  return {
    [CONNECT_INPUT]: {
      method: "elicitation/create",
      params: { mode: "url", message: error.prompt, url: error.url },
    },
  };
}

/** The 2025-11-25 error data: one URL elicitation, its id fresh (nothing is sent on it later). */
export function urlElicitationData(error: UrlElicitationRequired) {
  return {
    elicitations: [{
      mode: "url",
      elicitationId: crypto.randomUUID(),
      url: error.url,
      message: error.prompt,
    }],
  };
}
