import { readBodyCapped } from "./body.ts";
import { HttpError } from "./errors.ts";

/**
 * Reads an `application/x-www-form-urlencoded` body: other content types are 415, bodies
 * over the cap 413 (src/http/body.ts), undecodable bytes 400. Every form of ours (the human
 * pages, consent, token and revocation requests) is a few short fields.
 */
export async function readFormParams(request: Request, maxBytes: number): Promise<URLSearchParams> {
  const type = request.headers.get("Content-Type")?.split(";")[0]?.trim().toLowerCase();
  if (type !== "application/x-www-form-urlencoded") {
    await request.body?.cancel();
    throw new HttpError(415, "Content-Type must be application/x-www-form-urlencoded");
  }
  const bytes = await readBodyCapped(request, maxBytes);
  try {
    return new URLSearchParams(new TextDecoder("utf-8", { fatal: true }).decode(bytes));
  } catch {
    throw new HttpError(400, "The body is not UTF-8");
  }
}

/** Our HTML forms are a few short fields; anything bigger is not one of them. */
const MAX_FORM_BYTES = 8 * 1024;

/**
 * A submitted HTML form as a plain record; a repeated field is 400: each field means one
 * value. `multi` names the fields that may repeat (checkboxes), collected apart.
 */
export async function readForm(request: Request): Promise<Record<string, string>> {
  return (await readFormWithLists(request, [])).fields;
}

export async function readFormWithLists<M extends string>(
  request: Request,
  multi: readonly M[],
  maxBytes: number = MAX_FORM_BYTES,
): Promise<{ fields: Record<string, string>; lists: Record<M, string[]> }> {
  const fields: Record<string, string> = Object.create(null);
  const lists = Object.fromEntries(multi.map((name) => [name, [] as string[]])) as Record<
    M,
    string[]
  >;
  for (const [name, value] of await readFormParams(request, maxBytes)) {
    if ((multi as readonly string[]).includes(name)) lists[name as M].push(value);
    else if (Object.hasOwn(fields, name)) {
      throw new HttpError(400, `Cannot read form: field "${name}" is repeated`);
    } else fields[name] = value;
  }
  return { fields, lists };
}
