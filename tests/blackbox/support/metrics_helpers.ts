// Scraping the operator listener (VESTIBULE_ADMIN_LISTEN) in the black-box tests.
import assert from "node:assert/strict";
import { freePorts } from "./harness.ts";

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

/** The value of the sample written exactly `series` (name and labels), or undefined. */
export function sample(text: string, series: string): number | undefined {
  const line = text.split("\n").find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}
