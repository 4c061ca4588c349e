/**
 * The operator API's OpenAPI 3.1.1 document (`GET /openapi.json` on the operator listener),
 * made from OPERATIONS and the very schemas that parse the bodies and shape the records, as the
 * public site's description is (src/content/openapi.ts).
 */
import * as v from "valibot";
import { toJsonSchema, toJsonSchemaDefs } from "@valibot/to-json-schema";
import {
  ConnectionSchema,
  InvoiceSchema,
  PackSchema,
  RunSchema,
  SubscriptionSchema,
  TriggerSchema,
  WorkflowSchema,
} from "../workspace/domain/records.ts";
import { OperatorIdSchema } from "./operator_bodies.ts";
import {
  OPERATIONS,
  OPERATOR_BODIES,
  OPERATOR_MAX_BODY,
  type OperatorAnswer,
  OperatorErrorSchema,
} from "./operator_api.ts";

const ANSWERS: Record<OperatorAnswer, v.GenericSchema> = {
  WorkflowRun: RunSchema,
  Connection: ConnectionSchema,
  Catalogue: v.object({
    workflows: v.array(WorkflowSchema),
    triggers: v.array(TriggerSchema),
    packs: v.array(PackSchema),
    billing: v.object({ subscription: SubscriptionSchema, invoices: v.array(InvoiceSchema) }),
  }),
};

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const json = (name: string) => ({ "application/json": { schema: ref(name) } });

const PARAMETERS: Record<string, string> = {
  businessId: "The business, as `deno task admin` lists it.",
  runId: "The run, as the `workflow_run.*` events and `list_workflow_runs` name it.",
  connectionId: "The connection, as `list_connections` names it.",
};

/** What a path parameter may be: the schema the server checks it with, without `$schema`. */
const { $schema: _dialect, ...ID_SCHEMA } = toJsonSchema(OperatorIdSchema, {
  target: "draft-2020-12",
});

function _error(description: string) {
  return { description, content: json("OperatorError") };
}

export function buildOperatorOpenApi(): Record<string, unknown> {
  const schemas = toJsonSchemaDefs(
    { ...OPERATOR_BODIES, ...ANSWERS, OperatorError: OperatorErrorSchema },
    {
      // Trimming and checks across fields (v.check) have no JSON Schema; the server still
      // applies them to every body, as the MCP tools' schemas do (src/mcp/registry.ts).
      errorMode: "ignore",
      target: "draft-2020-12",
      overrideRef: ({ referenceId }) => `#/components/schemas/${referenceId}`,
    },
  );
  const paths: Record<string, Record<string, unknown>> = {};
  for (const operation of OPERATIONS) {
    const names = [...operation.path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]!);
    const responses: Record<string, unknown> = {
      "200": {
        description: `The ${operation.answer} as stored now.`,
        content: json(operation.answer),
      },
    };
    if (operation.body !== null) {
      responses["400"] = _error("The body is not JSON, or a field is wrong; the message names it.");
    }
    responses["401"] = {
      description: "No bearer token, or not the operator token.",
      headers: {
        "WWW-Authenticate": {
          description: '`Bearer`, or `Bearer error="invalid_token"` for a wrong token.',
          required: true,
          schema: { type: "string" },
        },
      },
      content: json("OperatorError"),
    };
    responses["404"] = _error(
      "The operator API is off, or no such business" +
        (operation.path.includes("{runId}")
          ? " or run."
          : operation.path.includes("{connectionId}")
          ? " or connection."
          : "."),
    );
    if (operation.refusals.includes(409)) {
      responses["409"] = _error(
        operation.operationId === "updateWorkflowRun"
          ? "The run is finished (succeeded or failed) and the update would change it."
          : "The change does not fit in one commit; nothing was changed.",
      );
    }
    if (operation.body !== null) {
      responses["413"] = _error(`The body is over ${OPERATOR_MAX_BODY} bytes.`);
      responses["415"] = _error("The body is not `application/json`.");
    }
    (paths[operation.path] ??= {})[operation.method.toLowerCase()] = {
      operationId: operation.operationId,
      summary: operation.summary,
      description: operation.description,
      parameters: names.map((name) => ({
        name,
        in: "path",
        required: true,
        description: PARAMETERS[name],
        schema: ID_SCHEMA,
      })),
      ...(operation.body === null ? {} : {
        requestBody: { required: true, content: json(operation.body) },
      }),
      responses,
    };
  }
  return {
    openapi: "3.1.1",
    info: {
      title: "Vestibule operator API",
      version: "1.0.0",
      description:
        "How the business's own systems keep the workspace true: they report a workflow run's " +
        "status, result and cost, a connection's state, and replace a business's catalogue. " +
        "Agents then read exactly that through the workspace tools, with `updatedAt`. Served " +
        "on the operator listener (VESTIBULE_ADMIN_LISTEN) only; every change is audited as " +
        "the operator's.",
    },
    // Relative: the API is served where this document is (OpenAPI 3.1.1 §4.8.5.1).
    servers: [{ url: "/", description: "The operator listener" }],
    security: [{ operatorToken: [] }],
    paths,
    components: {
      schemas,
      securitySchemes: {
        operatorToken: {
          type: "http",
          scheme: "bearer",
          description:
            "The token in VESTIBULE_ADMIN_TOKEN_FILE, as `Authorization: Bearer <token>`.",
        },
      },
    },
  };
}
