// The reference Server Card schema (tests/testdata/mcp-server-card/schema.json) through ajv, a
// JSON Schema 2020-12 validator nobody here wrote; test-only.
import { Ajv2020 } from "npm:ajv@8.20.0/dist/2020.js";
import * as formats from "npm:ajv-formats@3.0.1";

const schema = JSON.parse(
  await Deno.readTextFile(new URL("../testdata/mcp-server-card/schema.json", import.meta.url)),
);
const SCHEMA_ID = "server-card.schema.json";
const ajv = new Ajv2020({ allErrors: true, strict: false });
// ajv-formats is CommonJS: its function is the default export (`format: "uri"` needs it).
(formats.default as unknown as (ajv: Ajv2020) => void)(ajv);
ajv.addSchema(schema, SCHEMA_ID);
const validate = ajv.getSchema(`${SCHEMA_ID}#/$defs/ServerCard`)!;

/** The schema's complaints about `card`, as `path message` lines; none when it is valid. */
export function serverCardProblems(card: unknown): string[] {
  if (validate(card)) return [];
  return (validate.errors ?? []).map((e) => `${e.instancePath || "/"} ${e.message}`);
}
