/**
 * The pages Vestibule ships for the operator to replace, by the SHA-256 (hex, as `sha256sum`
 * prints it) of their shipped bytes: a file still identical is a page nobody has written yet.
 * The other templates (developers.json, llms.txt, openapi.json, auth/connection_guide.json)
 * describe Vestibule's own protocol and are right as shipped. A test recomputes these from the
 * files, so editing one here means updating its fingerprint.
 */
import { sha256 } from "../secrets.ts";
import { STATIC_DIR, TemplateError } from "./templates.ts";
import { runtime } from "../runtime/current.ts";

export const SHIPPED_PLACEHOLDERS: Readonly<Record<string, string>> = {
  "pages/index.json": "417cf6aa175a6c0aa2cbb77dc6957723dad678c17ba7813604a9d77351db11ca",
  "legal/contact.html": "d0ddd72922450577e6053119d7ffff791389d95999cd2af6bc64f57d05574366",
  "legal/privacy.html": "7eb61b63c264ada65729e920a1841149159a0683bebb66dc082645e013b2bd60",
  "legal/terms.html": "4a354ab8308355f820744da8f5f2e3f9c2610838bd72fd2f4a1fbe19aded786c",
};

/** The SHA-256 of a file's text, hex. */
export async function fingerprint(text: string): Promise<string> {
  // Not Uint8Array.prototype.toHex: Node.js 24 has not got it.
  return Array.from(await sha256(text), (b) => b.toString(16).padStart(2, "0")).join("");
}

/** The shipped placeholders still as shipped in `staticDir`, as `static/legal/terms.html`. */
export async function placeholdersLeft(staticDir: URL = STATIC_DIR): Promise<string[]> {
  const left: string[] = [];
  for (const [name, shipped] of Object.entries(SHIPPED_PLACEHOLDERS)) {
    let text: string;
    try {
      text = await runtime.readTextFile(new URL(name, staticDir));
    } catch (error) {
      throw new TemplateError(`static/${name}`, `cannot read (${(error as Error).message})`);
    }
    if (await fingerprint(text) === shipped) left.push(`static/${name}`);
  }
  return left;
}

/** The start-up warning and the doctor's fault for one placeholder left. */
export function placeholderProblem(file: string): string {
  return `${file} is Vestibule's shipped placeholder: write your own`;
}
