/**
 * The operator API's bearer token (VESTIBULE_ADMIN_TOKEN_FILE), read once at start-up. Whoever
 * holds it can rewrite every business's records, so the file must be private and the token long
 * enough not to be guessed; anything else stops start-up with one line that never shows it.
 */
import { PrivateFileError, refuseOpenFile } from "../private_files.ts";
import { StartupError } from "../startup_error.ts";
import { runtime } from "../runtime/current.ts";

/** At least 32 characters: 192 bits or more of a random base64 token. */
export const MIN_ADMIN_TOKEN_LENGTH = 32;

/** RFC 6750 §2.1: the characters a Bearer credential (b64token) may carry in a header. */
const B64TOKEN = /^[A-Za-z0-9\-._~+/]+=*$/;

/** A token file start-up cannot use, in one line naming the variable. */
export class AdminTokenError extends StartupError {
  override name = "AdminTokenError";
}

/** The token, its one trailing line break removed; throws AdminTokenError. */
export async function readAdminToken(path: string): Promise<string> {
  const fail = (why: string) =>
    new AdminTokenError(`VESTIBULE_ADMIN_TOKEN_FILE=${JSON.stringify(path)}: ${why}`);
  let text: string;
  try {
    await refuseOpenFile(path);
    text = await runtime.readTextFile(path);
  } catch (error) {
    if (error instanceof PrivateFileError) throw fail(error.message);
    throw fail(`cannot read it: ${(error as Error).message}`);
  }
  const token = text.replace(/\r?\n$/, "");
  if (!B64TOKEN.test(token)) {
    throw fail(
      "must hold one token of letters, digits and -._~+/ (RFC 6750 b64token), on one line",
    );
  }
  if (token.length < MIN_ADMIN_TOKEN_LENGTH) {
    throw fail(
      `the token must be at least ${MIN_ADMIN_TOKEN_LENGTH} characters (it has ${token.length}); ` +
        "make one with: openssl rand -base64 32",
    );
  }
  return token;
}
