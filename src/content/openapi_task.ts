// `deno task openapi`: regenerates static/openapi.json from the server's valibot schemas.
import { openApiText } from "./openapi.ts";
import { runtime } from "../runtime/current.ts";

const target = new URL("../../static/openapi.json", import.meta.url);
await runtime.writeTextFile(target, openApiText());
console.log(`wrote ${target.pathname}`);
