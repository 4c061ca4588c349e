// Scraping the operator listener (VESTIBULE_ADMIN_LISTEN) in the black-box tests.
import assert from "node:assert/strict";
import { freePorts } from "../../../testkit/ports.ts";

/** The variable that turns the operator listener on, at a free loopback port. */
export function adminEnv(): Record<string, string> {
  return { VESTIBULE_ADMIN_LISTEN: `127.0.0.1:${freePorts(1)[0]}` };
}

export async function scrape(adminUrl: string | null): Promise<string> {
  const response = await fetch(`${adminUrl}/metrics`);
  assert.equal(response.status, 200);
  assert.equal(response.headers.get("Content-Type"), "text/plain; version=0.0.4; charset=utf-8");
  return await response.text();
}

/** Whether Prometheus' `promtool` is installed (the metrics checks need it; .ci/run installs it). */
export const PROMTOOL = await _runs("promtool");

/** Whether `command --version` runs: a command that is not installed throws as it is spawned. */
async function _runs(command: string): Promise<boolean> {
  try {
    return (await new Deno.Command(command, { args: ["--version"] }).output()).success;
  } catch {
    return false;
  }
}

/** Asserts that `promtool check metrics` accepts the exposition without a word. */
export async function assertPromtoolAccepts(text: string): Promise<void> {
  const check = new Deno.Command("promtool", {
    args: ["check", "metrics"],
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const writer = check.stdin.getWriter();
  await writer.write(new TextEncoder().encode(text));
  await writer.close();
  const out = await check.output();
  const said = new TextDecoder().decode(out.stdout) + new TextDecoder().decode(out.stderr);
  assert.equal(out.code, 0, said);
  assert.equal(said.trim(), "", said);
}

/** The value of the sample written exactly `series` (name and labels), or undefined. */
export function sample(text: string, series: string): number | undefined {
  const line = text.split("\n").find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}
