// `deno task openapi`: regenerates static/openapi.json from the server's valibot schemas.
import { openApiText } from "./openapi.ts";

const target = new URL("../../static/openapi.json", import.meta.url);
await Deno.writeTextFile(target, openApiText());
console.log(`wrote ${target.pathname}`);
