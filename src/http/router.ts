import type { Handler } from "./handler.ts";
import { textResponse, withoutBody } from "./responses.ts";
import { pathOf } from "./url_path.ts";

export type Method = "GET" | "POST" | "PUT" | "PATCH" | "DELETE" | "OPTIONS";

/** Handlers of one path by method. HEAD comes from GET; OPTIONS, when not given, from the table. */
export type MethodHandlers = Partial<Record<Method, Handler>>;

/**
 * Exact paths, plus prefixes written `/approvals/*` (one or more further characters, no
 * further `/`). A handler that needs the rest of the path reads it from the URL.
 */
export type RouteTable = Readonly<Record<string, MethodHandlers>>;

export interface RouterOptions {
  /** Answer for an unknown path; plain-text 404 by default. */
  readonly notFound?: Handler;
  /** Answer for a known path with another method, given the Allow value; plain 405 by default. */
  readonly methodNotAllowed?: (request: Request, allow: string) => Response;
}

export function createRouter(table: RouteTable, options: RouterOptions = {}): Handler {
  const exact = new Map<string, MethodHandlers>();
  const prefixes: [string, MethodHandlers][] = [];
  for (const [path, handlers] of Object.entries(table)) {
    if (path.endsWith("/*")) prefixes.push([path.slice(0, -1), handlers]);
    else exact.set(path, handlers);
  }
  const notFound = options.notFound ??
    (() => Promise.resolve(textResponse("Not found\n", { status: 404 })));
  const methodNotAllowed = options.methodNotAllowed ??
    ((_request: Request, allow: string) =>
      textResponse("Method not allowed\n", { status: 405, headers: { Allow: allow } }));

  const lookup = (pathname: string): MethodHandlers | undefined => {
    const found = exact.get(pathname);
    if (found) return found;
    for (const [prefix, handlers] of prefixes) {
      const rest = pathname.slice(prefix.length);
      if (pathname.startsWith(prefix) && rest !== "" && !rest.includes("/")) return handlers;
    }
    return undefined;
  };

  // Not async: the common path hands the handler's own promise back, one microtask less.
  return (request, context) => {
    const handlers = lookup(pathOf(request.url));
    if (!handlers) return notFound(request, context);
    const method = request.method;
    if (method === "HEAD" && handlers.GET) {
      return handlers.GET(request, context).then((response) => withoutBody(response));
    }
    const handler = handlers[method as Method];
    if (handler) return handler(request, context);
    return _refuse(request, handlers, methodNotAllowed);
  };
}

async function _refuse(
  request: Request,
  handlers: MethodHandlers,
  methodNotAllowed: (request: Request, allow: string) => Response,
): Promise<Response> {
  const allow = allowedMethods(handlers);
  await request.body?.cancel();
  if (request.method === "OPTIONS") {
    return new Response(null, { status: 204, headers: { Allow: allow } });
  }
  return methodNotAllowed(request, allow);
}

export function allowedMethods(handlers: MethodHandlers): string {
  const methods = Object.keys(handlers);
  if (handlers.GET) methods.splice(methods.indexOf("GET") + 1, 0, "HEAD");
  if (!handlers.OPTIONS) methods.push("OPTIONS");
  return methods.join(", ");
}
