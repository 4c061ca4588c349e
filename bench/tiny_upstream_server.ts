// The gateway section's upstream in its own process: testkit/tiny_upstream.ts on the port in
// argv[0], legacy era with sessions (as common servers are), JSON answers.
import { startTinyUpstream } from "../testkit/tiny_upstream.ts";

const upstream = startTinyUpstream({ port: Number(Deno.args[0]), era: "legacy", answer: "json" });
Deno.addSignalListener("SIGTERM", async () => {
  await upstream.close();
  Deno.exit(0);
});
