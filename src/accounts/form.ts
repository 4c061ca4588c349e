import { readBodyCapped } from "../http/body.ts";
import { HttpError } from "../http/errors.ts";

/** Our forms are a few short fields; anything bigger is not one of them. */
const MAX_FORM_BYTES = 8 * 1024;

/**
 * A submitted HTML form as a plain record. Refuses other content types (415), bodies over
 * the cap (413), undecodable bytes and repeated fields (400): each field means one value.
 */
export async function readForm(request: Request): Promise<Record<string, string>> {
  const type = request.headers.get("Content-Type")?.split(";")[0]?.trim().toLowerCase();
  if (type !== "application/x-www-form-urlencoded") {
    await request.body?.cancel();
    throw new HttpError(
      415,
      "Cannot read form: Content-Type must be application/x-www-form-urlencoded",
    );
  }
  const bytes = await readBodyCapped(request, MAX_FORM_BYTES);
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    throw new HttpError(400, "Cannot read form: the body is not UTF-8");
  }
  const fields: Record<string, string> = Object.create(null);
  for (const [name, value] of new URLSearchParams(text)) {
    if (Object.hasOwn(fields, name)) {
      throw new HttpError(400, `Cannot read form: field "${name}" is repeated`);
    }
    fields[name] = value;
  }
  return fields;
}
