// The server on Node.js as `npm start` runs it: its flags, and what the smoke tests ask of it.
import assert from "node:assert/strict";
import { serverFlags } from "../../../deploy/node_flags.mjs";
import { nodeMajor } from "../../../testkit/node_binary.ts";
import { ROOT } from "./main_process.ts";
import { INITIALIZE, rpc } from "./mcp_helpers.ts";

/**
 * The Node.js flags `npm start` runs the server with on `node` (package.json's start script runs
 * deploy/node_start.mjs, which takes them from deploy/node_flags.mjs); never without --permission,
 * and no write outside ./data.
 */
export async function npmStartFlags(node: string): Promise<string[]> {
  const manifest = JSON.parse(await Deno.readTextFile(new URL("package.json", ROOT)));
  assert.match(manifest.scripts.start, /^node (--\S+ )*deploy\/node_start\.mjs main\.ts$/);
  const flags: string[] = serverFlags(nodeMajor(node));
  assert.ok(flags.includes("--permission"), "npm start runs node with --permission");
  const writes = flags.filter((f) => f.startsWith("--allow-fs-write="));
  assert.deepEqual(writes, ["--allow-fs-write=./data", "--allow-fs-write=./data/*"]);
  return flags;
}

/** `npm start` in this checkout, less npm, with only `env` set: its launcher becomes the server. */
export function npmStartCommand(node: string, env: Record<string, string>): Promise<Deno.Command> {
  return npmScriptCommand(node, "start", env);
}

/**
 * package.json's `script` in this checkout, less npm, with `args` after it (as `npm run script --
 * args` passes them) and only `env` set: its launcher becomes the command.
 */
export async function npmScriptCommand(
  node: string,
  script: "start" | "admin",
  env: Record<string, string>,
  args: readonly string[] = [],
): Promise<Deno.Command> {
  const manifest = JSON.parse(await Deno.readTextFile(new URL("package.json", ROOT)));
  const [executable, ...scriptArgs] = (manifest.scripts[script] as string).split(/\s+/);
  assert.equal(executable, "node", `package.json's ${script} script runs node`);
  return new Deno.Command(node, {
    args: [...scriptArgs, ...args],
    cwd: ROOT,
    env,
    clearEnv: true,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  });
}

/** The discovery documents and the onboarding MCP endpoint answer on the three origins. */
export async function answersDiscoveryAndOnboarding(origins: Record<string, string>) {
  const resource = await fetch(
    `${origins.VESTIBULE_API_URL}/.well-known/oauth-protected-resource`,
  );
  assert.equal(resource.status, 200);
  const protectedResource = await resource.json();
  assert.equal(protectedResource.resource, origins.VESTIBULE_API_URL);
  assert.deepEqual(protectedResource.authorization_servers, [
    `${origins.VESTIBULE_AUTH_URL}/api/auth`,
  ]);
  const metadata = await fetch(
    `${origins.VESTIBULE_AUTH_URL}/.well-known/oauth-authorization-server/api/auth`,
  );
  assert.equal(metadata.status, 200);
  assert.equal((await metadata.json()).issuer, `${origins.VESTIBULE_AUTH_URL}/api/auth`);
  const developers = await fetch(`${origins.VESTIBULE_BASE_URL}/developers.json`);
  assert.equal(developers.status, 200);
  await developers.body?.cancel();

  const onboarding = `${origins.VESTIBULE_AUTH_URL}/mcp`;
  const initialized = await rpc(onboarding, INITIALIZE);
  assert.equal(initialized.result.serverInfo.name, "127.0.0.1/onboarding");
  // Discovery by domain: the catalog leads to the card, which names the same server.
  const catalog = await fetch(`${origins.VESTIBULE_BASE_URL}/.well-known/ai-catalog.json`);
  assert.equal(catalog.headers.get("Content-Type"), "application/ai-catalog+json");
  const [entry] = (await catalog.json()).entries;
  const card = await fetch(entry.url, { headers: { Accept: "application/mcp-server-card+json" } });
  assert.equal(card.headers.get("Access-Control-Expose-Headers"), "ETag");
  const { name, remotes } = await card.json();
  assert.equal(name, initialized.result.serverInfo.name);
  assert.equal(remotes[0].url, onboarding);
  const listed = await rpc(onboarding, { jsonrpc: "2.0", id: 1, method: "tools/list" });
  const names = listed.result.tools.map((tool: { name: string }) => tool.name);
  assert.ok(names.includes("get_connection_guide"), names.join(", "));
}
