import type { Handler } from "./handler.ts";
import { headResponse, textResponse } from "./responses.ts";
import { pathOf } from "./url_path.ts";

export const METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"] as const;
export type Method = (typeof METHODS)[number];

/** Answers a method the path does not serve, given the path's Allow value. */
export type MethodNotAllowed = (request: Request, allow: string) => Response | Promise<Response>;

/**
 * Handlers of one path by method. HEAD comes from GET; OPTIONS, when not given, from the table.
 * `methodNotAllowed` replaces the router's 405 for this path (the MCP endpoints answer it with
 * a JSON-RPC body).
 */
export type MethodHandlers = Partial<Record<Method, Handler>> & {
  readonly methodNotAllowed?: MethodNotAllowed;
};

/**
 * Exact paths, plus patterns whose segments may be `*` or `{name}` (OpenAPI's path templates):
 * each matches one segment of one or more characters, so `/approvals/*` matches `/approvals/g1`
 * but neither `/approvals/` nor `/approvals/g1/x`. A handler reads the values with pathParams.
 */
export type RouteTable = Readonly<Record<string, MethodHandlers>>;

export interface RouterOptions {
  /** Answer for an unknown path; plain-text 404 by default. */
  readonly notFound?: Handler;
  /** Answer for a known path with another method, given the Allow value; plain 405 by default. */
  readonly methodNotAllowed?: MethodNotAllowed;
}

/** A path's handlers, looked up in a Map: a method named `constructor` finds nothing. */
interface _Route {
  /** The table's key, as the request log and the metrics name the route. */
  readonly pattern: string;
  readonly handlers: ReadonlyMap<string, Handler>;
  readonly allow: string;
  readonly methodNotAllowed: MethodNotAllowed | undefined;
}

/** The router's own 404: plain text, for clients that are not browsers. */
export const plainNotFound: Handler = () =>
  Promise.resolve(textResponse("Not found\n", { status: 404 }));

/** The router's own 405, with the path's Allow value. */
export const plainMethodNotAllowed: MethodNotAllowed = (_request, allow) =>
  textResponse("Method not allowed\n", { status: 405, headers: { Allow: allow } });

export function createRouter(table: RouteTable, options: RouterOptions = {}): Handler {
  const exact = new Map<string, _Route>();
  const patterns: [readonly string[], _Route][] = [];
  for (const [path, handlers] of Object.entries(table)) {
    const route: _Route = {
      pattern: path,
      handlers: new Map(METHODS.flatMap((m) => (handlers[m] ? [[m, handlers[m]!] as const] : []))),
      allow: allowedMethods(handlers),
      methodNotAllowed: handlers.methodNotAllowed,
    };
    const segments = path.split("/");
    if (segments.some(_isWildcard)) patterns.push([segments, route]);
    else exact.set(path, route);
  }
  const notFound = options.notFound ?? plainNotFound;
  const methodNotAllowed = options.methodNotAllowed ?? plainMethodNotAllowed;

  const lookup = (pathname: string): _Route | undefined => {
    const found = exact.get(pathname);
    if (found) return found;
    if (patterns.length === 0) return undefined;
    const segments = pathname.split("/");
    return patterns.find(([pattern]) => _matches(pattern, segments))?.[1];
  };

  // Not async: the common path hands the handler's own promise back, one microtask less.
  return (request, context) => {
    const route = lookup(pathOf(request.url));
    if (!route) return notFound(request, context);
    context.route = route.pattern;
    const method = request.method;
    const get = route.handlers.get("GET");
    if (method === "HEAD" && get) {
      return get(request, context).then(headResponse);
    }
    const handler = route.handlers.get(method);
    if (handler) return handler(request, context);
    return _refuse(request, route, route.methodNotAllowed ?? methodNotAllowed);
  };
}

async function _refuse(
  request: Request,
  route: _Route,
  methodNotAllowed: MethodNotAllowed,
): Promise<Response> {
  await request.body?.cancel();
  if (request.method === "OPTIONS") {
    return new Response(null, { status: 204, headers: { Allow: route.allow } });
  }
  return await methodNotAllowed(request, route.allow);
}

/** A pattern segment standing for any one segment: `*` or `{name}`. */
function _isWildcard(segment: string): boolean {
  return segment === "*" || /^\{[A-Za-z]+\}$/.test(segment);
}

function _matches(pattern: readonly string[], segments: readonly string[]): boolean {
  return pattern.length === segments.length &&
    pattern.every((part, i) => _isWildcard(part) ? segments[i] !== "" : part === segments[i]);
}

/**
 * The `{name}` values of a request's path under a route pattern the router matched it with,
 * percent-decoded; null when a value does not decode (`%zz`) or the path does not match.
 */
export function pathParams(pattern: string, url: string): Record<string, string> | null {
  const parts = pattern.split("/");
  const segments = pathOf(url).split("/");
  if (!_matches(parts, segments)) return null;
  const params: Record<string, string> = {};
  for (const [i, part] of parts.entries()) {
    if (!part.startsWith("{")) continue;
    try {
      params[part.slice(1, -1)] = decodeURIComponent(segments[i]!);
    } catch {
      return null;
    }
  }
  return params;
}

export function allowedMethods(handlers: MethodHandlers): string {
  const methods: string[] = METHODS.filter((m) => handlers[m]);
  if (handlers.GET) methods.splice(methods.indexOf("GET") + 1, 0, "HEAD");
  if (!handlers.OPTIONS) methods.push("OPTIONS");
  return methods.join(", ");
}
