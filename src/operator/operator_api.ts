/**
 * The operator API (`/v1/…` on the operator listener): the business's own systems report a
 * run's status, result and cost, a connection's state, and replace a business's catalogue.
 * Each operation is described once, in OPERATIONS, from which both the routes and the OpenAPI
 * document (operator_openapi.ts) are made. Every answer is JSON; every error is
 * `{"error": code, "message": words naming the field}`.
 */
import * as v from "valibot";
import { readBodyCapped } from "../http/body.ts";
import { HttpError } from "../http/errors.ts";
import type { Handler } from "../http/handler.ts";
import { jsonResponse } from "../http/responses.ts";
import { createRouter, type Method, pathParams } from "../http/router.ts";
import { describeIssues } from "../issue_words.ts";
import { constantTimeEqual } from "../secrets.ts";
import {
  CatalogueInputSchema,
  ConnectionUpdateSchema,
  OperatorIdSchema,
  type Outcome,
  RunUpdateSchema,
} from "./operator_bodies.ts";
import type { OperatorUpdates } from "./operator_updates.ts";

/** The largest request body: a whole catalogue at its limits fits (docs/integrating.md: The operator API). */
export const OPERATOR_MAX_BODY = 256 * 1024;

export const OPERATOR_ERROR_CODES = [
  "invalid_request",
  "unauthorized",
  "not_found",
  "method_not_allowed",
  "conflict",
  "payload_too_large",
  "unsupported_media_type",
] as const;
export const OperatorErrorSchema = v.object({
  error: v.picklist(OPERATOR_ERROR_CODES),
  message: v.pipe(v.string(), v.description("What is wrong, in plain words naming the field.")),
});
type ErrorCode = (typeof OPERATOR_ERROR_CODES)[number];

/** Request bodies by name, the OpenAPI document's component names. */
export const OPERATOR_BODIES = {
  WorkflowRunUpdate: RunUpdateSchema,
  ConnectionUpdate: ConnectionUpdateSchema,
  CatalogueReplacement: CatalogueInputSchema,
};

/** Answers by name: the stored records of records.ts, as operator_openapi.ts names them. */
export type OperatorAnswer = "WorkflowRun" | "Connection" | "Catalogue";

export interface Operation {
  readonly operationId: string;
  readonly method: Extract<Method, "GET" | "PATCH" | "PUT">;
  /** An OpenAPI path template; the router matches its `{name}` segments. */
  readonly path: string;
  readonly summary: string;
  readonly description: string;
  readonly body: keyof typeof OPERATOR_BODIES | null;
  readonly answer: OperatorAnswer;
  /** The 4xx answers besides 401 (every operation) and 400 (every operation with a body). */
  readonly refusals: readonly (404 | 409)[];
  run(
    updates: OperatorUpdates,
    params: Readonly<Record<string, string>>,
    body: unknown,
  ): Promise<Outcome<unknown>>;
}

const RUN_PATH = "/v1/businesses/{businessId}/workflow-runs/{runId}";

/** Every operation, in the order the OpenAPI document lists them. */
export const OPERATIONS: readonly Operation[] = [
  {
    operationId: "getWorkflowRun",
    method: "GET",
    path: RUN_PATH,
    summary: "Read a workflow run",
    description: "The run as the workspace tools show it to agents.",
    body: null,
    answer: "WorkflowRun",
    refusals: [404],
    run: (updates, p) => updates.getRun(p.businessId!, p.runId!),
  },
  {
    operationId: "updateWorkflowRun",
    method: "PATCH",
    path: RUN_PATH,
    summary: "Report a workflow run's status, result and cost",
    description:
      "Moves a run to `running`, `succeeded` or `failed`, with its result and cost when given " +
      "(omitted fields keep their value). `succeeded` and `failed` are final: changing a " +
      "finished run is 409, while repeating the same final report is answered 200 as before.",
    body: "WorkflowRunUpdate",
    answer: "WorkflowRun",
    refusals: [404, 409],
    run: (updates, p, body) =>
      updates.updateRun(p.businessId!, p.runId!, body as v.InferOutput<typeof RunUpdateSchema>),
  },
  {
    operationId: "updateConnection",
    method: "PATCH",
    path: "/v1/businesses/{businessId}/connections/{connectionId}",
    summary: "Report a connection's state",
    description:
      "Sets a connection's status (and its label, when given) as the business's systems see it.",
    body: "ConnectionUpdate",
    answer: "Connection",
    refusals: [404],
    run: (updates, p, body) =>
      updates.updateConnection(
        p.businessId!,
        p.connectionId!,
        body as v.InferOutput<typeof ConnectionUpdateSchema>,
      ),
  },
  {
    operationId: "replaceCatalogue",
    method: "PUT",
    path: "/v1/businesses/{businessId}/catalogue",
    summary: "Replace a business's catalogue",
    description:
      "Replaces the business's workflows, triggers, packs, subscription and invoices with " +
      "those sent, all in one commit or not at all: records not listed are removed, every " +
      "record is stamped `updatedAt`. Ids are unique per list, and each trigger names a " +
      "workflow of the same catalogue. Runs and connections are left as they are.",
    body: "CatalogueReplacement",
    answer: "Catalogue",
    refusals: [404, 409],
    run: (updates, p, body) =>
      updates.replaceCatalogue(p.businessId!, body as v.InferOutput<typeof CatalogueInputSchema>),
  },
];

const NO_STORE = { "Cache-Control": "no-store" };

export function operatorError(
  status: number,
  error: ErrorCode,
  message: string,
  headers: Record<string, string> = {},
): Response {
  return jsonResponse({ error, message }, { status, headers: { ...NO_STORE, ...headers } });
}

/**
 * The `/v1/…` handler. `token` null: the API is off (no VESTIBULE_ADMIN_TOKEN_FILE), and every
 * route says so with a 404.
 */
export function createOperatorApi(deps: {
  readonly token: string | null;
  readonly updates: OperatorUpdates;
}): Handler {
  const { token, updates } = deps;
  const table: Record<string, Partial<Record<Method, Handler>>> = {};
  for (const operation of OPERATIONS) {
    (table[operation.path] ??= {})[operation.method] = (request) =>
      _serve(operation, updates, request);
  }
  const router = createRouter(table, {
    notFound: (request) =>
      Promise.resolve(
        operatorError(404, "not_found", `no operation at ${new URL(request.url).pathname}`),
      ),
    methodNotAllowed: (request, allow) =>
      operatorError(405, "method_not_allowed", `${request.method} is not allowed here`, {
        Allow: allow,
      }),
  });
  return async (request, context) => {
    if (token === null) {
      await request.body?.cancel();
      return operatorError(
        404,
        "not_found",
        "the operator API is off: set VESTIBULE_ADMIN_TOKEN_FILE to turn it on",
      );
    }
    // RFC 6750 §2.1 (the scheme is case-insensitive, RFC 9110 §11.1); §3.1 for the challenge.
    const sent = /^Bearer +(\S+)$/i.exec(request.headers.get("Authorization") ?? "")?.[1];
    if (sent === undefined || !constantTimeEqual(sent, token)) {
      await request.body?.cancel();
      return operatorError(
        401,
        "unauthorized",
        sent === undefined
          ? "send the operator token as Authorization: Bearer <token>"
          : "the bearer token is not the operator token",
        { "WWW-Authenticate": sent === undefined ? "Bearer" : 'Bearer error="invalid_token"' },
      );
    }
    return await router(request, context);
  };
}

async function _serve(
  operation: Operation,
  updates: OperatorUpdates,
  request: Request,
): Promise<Response> {
  const params = pathParams(operation.path, request.url);
  if (params === null) {
    await request.body?.cancel();
    return operatorError(
      404,
      "not_found",
      "the path names nothing: a segment is not percent-encoded UTF-8",
    );
  }
  for (const [name, value] of Object.entries(params)) {
    if (!v.is(OperatorIdSchema, value)) {
      await request.body?.cancel();
      return operatorError(
        404,
        "not_found",
        `"${name}" names nothing: ids are 1 to 64 letters, digits and . _ : ~ -`,
      );
    }
  }
  let body: unknown = undefined;
  if (operation.body !== null) {
    const read = await _readJson(request);
    if (read instanceof Response) return read;
    if (typeof read !== "object" || read === null || Array.isArray(read)) {
      return operatorError(400, "invalid_request", "the body must be a JSON object");
    }
    const parsed = v.safeParse(OPERATOR_BODIES[operation.body], read, { abortEarly: false });
    if (!parsed.success) return operatorError(400, "invalid_request", _describe(parsed.issues));
    body = parsed.output;
  }
  const outcome = await operation.run(updates, params, body);
  if (!outcome.ok) return operatorError(outcome.status, outcome.error, outcome.message);
  return jsonResponse(outcome.value, { headers: NO_STORE });
}

/** At most five issues, each naming its field, in plain words where valibot's are not. */
function _describe(issues: readonly v.BaseIssue<unknown>[]): string {
  const shown = issues.slice(0, 5).map((issue) => ({
    ...issue,
    message: issue.expected === "never"
      ? "is not a field of this body"
      : issue.input === undefined && issue.path !== undefined
      ? "is required"
      : issue.message,
  }));
  const more = issues.length - shown.length;
  return describeIssues(shown) + (more > 0 ? `; and ${more} more` : "");
}

/** The body as JSON, or the answer refusing it (415, 413, 400). */
async function _readJson(request: Request): Promise<unknown | Response> {
  const type = request.headers.get("Content-Type")?.split(";")[0]?.trim().toLowerCase();
  if (type !== "application/json") {
    await request.body?.cancel();
    return operatorError(415, "unsupported_media_type", "send the body as application/json");
  }
  let bytes;
  try {
    bytes = await readBodyCapped(request, OPERATOR_MAX_BODY);
  } catch (error) {
    if (!(error instanceof HttpError)) throw error;
    const code = error.status === 413 ? "payload_too_large" : "invalid_request";
    return operatorError(error.status, code, error.message, { ...error.headers });
  }
  try {
    return JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(bytes));
  } catch {
    return operatorError(400, "invalid_request", "the body is not valid UTF-8 JSON");
  }
}
