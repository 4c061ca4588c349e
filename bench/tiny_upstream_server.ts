// The gateway section's upstream in its own process: testkit/tiny_upstream.ts on the port in
// argv[0], legacy era with sessions (as common servers are), answering with JSON, or with an
// event stream when argv[1] is `sse` (the official SDK's default).
import { startTinyUpstream } from "../testkit/tiny_upstream.ts";

const upstream = startTinyUpstream({
  port: Number(Deno.args[0]),
  era: "legacy",
  answer: Deno.args[1] === "sse" ? "sse" : "json",
});
Deno.addSignalListener("SIGTERM", async () => {
  await upstream.close();
  Deno.exit(0);
});
