// The real entry point as a child process, with exactly the permissions of `deno task start`.
import assert from "node:assert/strict";
import { freePorts } from "./harness.ts";

export const ROOT = new URL("../../", import.meta.url);

/** The Deno flags of the `start` task, read from deno.json so the test cannot drift from it. */
export async function startTaskFlags(): Promise<string[]> {
  const config = JSON.parse(await Deno.readTextFile(new URL("deno.json", ROOT)));
  const words: string[] = config.tasks.start.split(/\s+/);
  assert.deepEqual(words.slice(0, 2), ["deno", "run"]);
  assert.equal(words.at(-1), "main.ts");
  const flags = words.slice(2, -1);
  assert.ok(!flags.some((f) => f === "-A" || f.startsWith("--allow-all")), "never -A");
  return flags;
}

/** The three origins on free loopback ports. */
export function originsEnv(): {
  VESTIBULE_BASE_URL: string;
  VESTIBULE_AUTH_URL: string;
  VESTIBULE_API_URL: string;
} {
  const [base, auth, api] = freePorts(3);
  return {
    VESTIBULE_BASE_URL: `http://127.0.0.1:${base}`,
    VESTIBULE_AUTH_URL: `http://127.0.0.1:${auth}`,
    VESTIBULE_API_URL: `http://127.0.0.1:${api}`,
  };
}
