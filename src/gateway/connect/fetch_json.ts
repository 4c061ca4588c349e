/**
 * One request to an upstream's OAuth servers, answered in JSON: redirects are never followed
 * (a redirect could lead past the SSRF check), the body is capped while it streams, and only
 * a JSON media type is read. The caller's signal is the whole time budget, body included.
 */
import { readCapped } from "../../http/body.ts";

export type JsonAnswer =
  | { readonly ok: true; readonly status: number; readonly body: unknown }
  /** `problem` completes a sentence about the request ("… answered 503"); `status` null: no answer. */
  | { readonly ok: false; readonly status: number | null; readonly problem: string };

export async function fetchJson(
  doFetch: typeof fetch,
  url: string,
  init: RequestInit & { readonly signal: AbortSignal },
  maxBytes: number,
): Promise<JsonAnswer> {
  const headers = new Headers(init.headers);
  headers.set("Accept", "application/json");
  let response: Response;
  try {
    response = await doFetch(url, { ...init, headers, redirect: "manual" });
  } catch (error) {
    const late = error instanceof DOMException && error.name === "TimeoutError";
    return { ok: false, status: null, problem: late ? "did not answer in time" : "is unreachable" };
  }
  const { status } = response;
  const type = response.headers.get("Content-Type")?.split(";")[0]?.trim().toLowerCase() ?? "";
  const fail = async (problem: string): Promise<JsonAnswer> => {
    await response.body?.cancel().catch(() => {});
    return { ok: false, status, problem };
  };
  if (status >= 300 && status < 400) return await fail("redirects, which are not followed");
  if (type !== "application/json" && !type.endsWith("+json")) {
    return await fail(`answered ${status} with ${type || "no media type"}, not JSON`);
  }
  const body = await readCapped(response, maxBytes);
  if (!body.ok) {
    return {
      ok: false,
      status,
      problem: body.problem === "too-large"
        ? `answered more than ${maxBytes} bytes`
        : "broke off its answer",
    };
  }
  try {
    return {
      ok: true,
      status,
      body: JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(body.bytes)),
    };
  } catch {
    return { ok: false, status, problem: "answered malformed JSON" };
  }
}
