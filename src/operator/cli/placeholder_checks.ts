// `admin check` on the pages Vestibule ships for the operator to replace (content/placeholders.ts).
// On loopback origins (a fresh checkout, a developer's machine) one left is a warning: nobody else
// reads it. Served on a public origin, it is a fault: people would read our placeholder as the
// operator's terms, privacy notice or contact.
import { isLoopbackHost } from "../../config/values.ts";
import { placeholderProblem, placeholdersLeft } from "../../content/placeholders.ts";
import { TemplateError } from "../../content/templates.ts";
import { fault, type Finding, ok, warn } from "./findings.ts";

/** Each shipped page still as shipped, for the public site at `baseUrl`. */
export async function placeholderChecks(
  baseUrl: string,
  staticDir: URL | undefined,
): Promise<Finding[]> {
  const where = "static/";
  try {
    const left = await placeholdersLeft(...(staticDir ? [staticDir] : []));
    if (left.length === 0) return [ok("every shipped placeholder page has been written", where)];
    const local = isLoopbackHost(new URL(baseUrl).hostname);
    return left.map((file) =>
      local
        ? warn(`${placeholderProblem(file)} before serving a public origin`, file)
        : fault(placeholderProblem(file), file)
    );
  } catch (error) {
    if (!(error instanceof TemplateError)) throw error;
    return [fault(`the server would refuse to start: ${error.message}`, where)];
  }
}
