import { readFormParams } from "../http/form.ts";
import { HttpError } from "../http/errors.ts";
import { OAuthError } from "./oauth_error.ts";

/** Token and revocation requests are a few short parameters. */
export const MAX_TOKEN_REQUEST_BYTES = 16 * 1024;

/**
 * Reads an `application/x-www-form-urlencoded` body (RFC 6749 §3.2) into a record.
 * A repeated parameter is `invalid_request` (RFC 6749 §3.1); so is anything unreadable.
 */
export async function readOAuthForm(request: Request): Promise<Record<string, string>> {
  try {
    return parseUniqueParams(await readFormParams(request, MAX_TOKEN_REQUEST_BYTES));
  } catch (error) {
    if (!(error instanceof HttpError)) throw error;
    // 413 keeps its status; a wrong media type or undecodable body is a plain bad request.
    throw new OAuthError(
      "invalid_request",
      error.message,
      error.status === 413 ? 413 : 400,
      error.headers,
    );
  }
}

/** Parameters as a record; a repeated one is `invalid_request` (`invalid_target` for resource). */
export function parseUniqueParams(params: URLSearchParams): Record<string, string> {
  const fields: Record<string, string> = Object.create(null);
  for (const [name, value] of params) {
    if (Object.hasOwn(fields, name)) {
      // RFC 8707 allows several resources; we serve one, so a second is the wrong target.
      if (name === "resource") {
        throw new OAuthError("invalid_target", "resource must be given at most once");
      }
      throw new OAuthError("invalid_request", `Parameter "${name}" is repeated`);
    }
    fields[name] = value;
  }
  return fields;
}
