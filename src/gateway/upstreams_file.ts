/**
 * Reads VESTIBULE_UPSTREAMS at start-up and on SIGHUP (upstreams_reload.ts): its shape (valibot),
 * then what one field cannot say alone (unique names, url or command, a tool both gated and
 * hidden, scopes an upstream may name), then the secrets of its header and environment files. Any
 * problem stops start-up, or refuses the reload, with one line naming the file and the field,
 * never a secret's text.
 */
import * as v from "valibot";
import { describeIssue } from "../issue_words.ts";
import { nearestName } from "../nearest_name.ts";
import { isScope } from "../oauth/scopes.ts";
import { jsonPath } from "../pages/parse_page.ts";
import { PrivateFileError, refuseOpenFile } from "../private_files.ts";
import { StartupError } from "../startup_error.ts";
import {
  MAX_SERVED_TOOL_NAME,
  type PersonAuth,
  servedToolName,
  type UpstreamConfig,
  type UpstreamsConfig,
  type UpstreamTransport,
} from "../config/upstreams.ts";
import { TOOL_NAME } from "../mcp/registry.ts";
import { MCP_PATHS } from "../mcp/servers.ts";
import { runtime } from "../runtime/current.ts";

export class UpstreamsFileError extends StartupError {
  override name = "UpstreamsFileError";
}

/** VESTIBULE_UPSTREAMS unset: no upstream, no upstream scope. */
export const NO_UPSTREAMS: UpstreamsConfig = Object.freeze({ upstreams: Object.freeze([]) });

/** MCP tool names (2025-11-25 "Tool Names"), whose whole name with the prefix fits 64. */
const NAME = /^[A-Za-z0-9-]+$/;
/** `name__tool` leaves at least 32 characters for the tool. */
const MAX_NAME = 30;
/** RFC 9110 §5.6.2: a field name is a token. */
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
/** The word of an `upstream.<name>.<word>` scope. */
const SCOPE_WORD = /^[a-z0-9-]+$/;
/** The catalog ids of the two servers of our own (mcp/servers.ts). */
const RESERVED_CATALOG_IDS: ReadonlySet<string> = new Set(Object.keys(MCP_PATHS));
const KIB = 1024;
const MIB = 1024 * KIB;

const said = (what: string) => (issue: v.BaseIssue<unknown>) =>
  `${JSON.stringify(issue.input)} ${what}`;

const Text = v.pipe(v.string(), v.minLength(1, said("must not be empty")));
const ToolName = v.pipe(
  v.string(),
  v.regex(TOOL_NAME, said("must be 1 to 128 letters, digits and _ . -")),
);
const Whole = (min: number, max: number) =>
  v.pipe(v.number(), v.integer(), v.minValue(min), v.maxValue(max));

/** A value read from an owner-only file. */
const FILE_ENTRIES = { file: Text };
const HEADER_ENTRIES = { file: v.optional(Text), value: v.optional(v.string()) };
const OAUTH_ENTRIES = {
  clientId: Text,
  clientSecret: v.optional(
    v.pipe(
      v.strictObject(HEADER_ENTRIES),
      v.check(
        (h) => (h.file === undefined) !== (h.value === undefined),
        'must be {"file": PATH} or {"value": TEXT}',
      ),
    ),
  ),
  scopes: v.optional(
    v.array(v.pipe(Text, v.regex(/^[\x21\x23-\x5b\x5d-\x7e]+$/, said("is not a scope")))),
  ),
};
/** The catalog's words are public: they are checked against the card's limits (100 chars). */
const CATALOG_ENTRIES = {
  id: v.pipe(
    v.string(),
    v.regex(/^[a-z0-9-]+$/, said("must be lower-case letters, digits and -")),
    v.maxLength(MAX_NAME, said(`must be at most ${MAX_NAME} characters`)),
    v.check((id) => !RESERVED_CATALOG_IDS.has(id), said("is the id of one of Vestibule's own")),
  ),
  title: v.pipe(Text, v.maxLength(100, said("must be at most 100 characters"))),
  description: v.pipe(Text, v.maxLength(100, said("must be at most 100 characters"))),
};
const RATE_ENTRIES = {
  perMinute: v.optional(Whole(1, 1_000_000)),
  burst: v.optional(Whole(1, 1_000_000)),
};

const UPSTREAM_ENTRIES = {
  name: v.pipe(
    v.string(),
    v.regex(NAME, said("must be letters, digits and -")),
    v.maxLength(MAX_NAME, said(`must be at most ${MAX_NAME} characters`)),
  ),
  title: v.optional(v.pipe(Text, v.maxLength(80, said("must be at most 80 characters")))),
  url: v.optional(
    v.pipe(
      v.string(),
      v.check(
        (s) => URL.canParse(s) && /^https?:$/.test(new URL(s).protocol),
        said("must be an http or https URL"),
      ),
    ),
  ),
  command: v.optional(Text),
  args: v.optional(v.array(v.string())),
  env: v.optional(
    v.record(
      v.string(),
      v.union([v.string(), v.strictObject(FILE_ENTRIES)], 'must be a string or {"file": PATH}'),
    ),
  ),
  cwd: v.optional(Text),
  headers: v.optional(
    v.record(
      v.pipe(v.string(), v.regex(HEADER_NAME, said("is not a header name"))),
      v.pipe(
        v.strictObject(HEADER_ENTRIES),
        v.check(
          (h) => (h.file === undefined) !== (h.value === undefined),
          'must be {"file": PATH} or {"value": TEXT}',
        ),
      ),
    ),
  ),
  gated: v.optional(v.array(ToolName)),
  hidden: v.optional(v.array(ToolName)),
  scopes: v.optional(v.record(ToolName, v.string())),
  ownerOnly: v.optional(v.boolean()),
  businesses: v.optional(v.array(Text)),
  timeoutSeconds: v.optional(Whole(1, 600)),
  maxResponseBytes: v.optional(Whole(KIB, 64 * MIB)),
  forwardIdentity: v.optional(v.boolean()),
  rateLimit: v.optional(v.strictObject(RATE_ENTRIES)),
  auth: v.optional(v.picklist(["person"], said('must be "person" (each person signs in to it)'))),
  oauth: v.optional(v.strictObject(OAUTH_ENTRIES)),
  catalog: v.optional(v.strictObject(CATALOG_ENTRIES)),
};

const FILE_ENTRIES_TOP = { upstreams: v.array(v.strictObject(UPSTREAM_ENTRIES)) };
const UpstreamsFileSchema = v.strictObject(FILE_ENTRIES_TOP);

type UpstreamEntry = v.InferOutput<typeof UpstreamsFileSchema>["upstreams"][number];

/** The fields an object at `parent` may have, for the hint after an unknown one. */
function _knownFields(parent: readonly unknown[]): readonly string[] {
  const last = parent.at(-1);
  const above = parent.at(-2);
  if (parent.length === 0) return Object.keys(FILE_ENTRIES_TOP);
  if (above === "upstreams") return Object.keys(UPSTREAM_ENTRIES);
  if (last === "rateLimit") return Object.keys(RATE_ENTRIES);
  if (last === "oauth") return Object.keys(OAUTH_ENTRIES);
  if (last === "catalog") return Object.keys(CATALOG_ENTRIES);
  if (above === "headers" || last === "clientSecret") return Object.keys(HEADER_ENTRIES);
  return Object.keys(FILE_ENTRIES);
}

/** Reads and checks the file; throws UpstreamsFileError. */
export async function loadUpstreams(path: string): Promise<UpstreamsConfig> {
  const fail = (why: string) => new UpstreamsFileError(`VESTIBULE_UPSTREAMS (${path}): ${why}`);
  let text: string;
  try {
    text = await runtime.readTextFile(path);
  } catch (error) {
    throw fail(`cannot read it: ${(error as Error).message}`);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw fail(_jsonProblem(text));
  }
  const parsed = v.safeParse(UpstreamsFileSchema, json);
  if (!parsed.success) {
    // A misspelt field explains the missing one it probably is: say it first.
    const unknown = parsed.issues.find((i) => i.type === "strict_object" && i.expected === "never");
    throw fail(_describe(unknown ?? parsed.issues[0]));
  }
  const entries = parsed.output.upstreams;
  const upstreams: UpstreamConfig[] = [];
  for (const [i, entry] of entries.entries()) {
    const at = `upstreams[${i}]`;
    const problem = _entryProblem(entry, at, entries.slice(0, i));
    if (problem !== null) throw fail(problem);
    const transport = await _transport(entry, at).catch((error) => {
      throw error instanceof _FileProblem ? fail(error.message) : error;
    });
    const auth = await _auth(entry, at).catch((error) => {
      throw error instanceof _FileProblem ? fail(error.message) : error;
    });
    upstreams.push(_upstream(entry, transport, auth));
  }
  return Object.freeze({ upstreams: Object.freeze(upstreams) });
}

/** `upstreams[1].name "a b" must be …`, or a field's plain words: `upstreams[0].url is missing`. */
function _describe(first: v.BaseIssue<unknown>): string {
  const issue = _mostSpecific(first);
  const keys = (issue.path ?? []).map((item) => item.key);
  const where = jsonPath(issue.path).replace(/^\$\.?/, "");
  const unknown = issue.type === "strict_object" && issue.expected === "never";
  const phrase = unknown
    ? `is not a known field (nearest: ${
      nearestName(String(keys.at(-1)), _knownFields(keys.slice(0, -1)))
    })`
    : describeIssue({ ...issue, path: undefined });
  return where === "" ? `the file ${phrase}` : `${where} ${phrase}`;
}

/**
 * A union's issue wraps each option's, whose paths start at the union: the deepest explains
 * best, and an unknown field before the missing one it probably misspells.
 */
function _mostSpecific(issue: v.BaseIssue<unknown>): v.BaseIssue<unknown> {
  const inner = (issue.issues ?? []).filter((i) => (i.path?.length ?? 0) > 0)
    .map((i) => ({ ...i, path: [...(issue.path ?? []), ...i.path!] as typeof i.path }));
  const best = inner.find((i) => i.type === "strict_object" && i.expected === "never") ?? inner[0];
  return best === undefined ? issue : _mostSpecific(best);
}

/** What the schema cannot check field by field, or null. */
function _entryProblem(
  entry: UpstreamEntry,
  at: string,
  before: readonly UpstreamEntry[],
): string | null {
  const name = entry.name;
  const taken = before.findIndex((other) => other.name.toLowerCase() === name.toLowerCase());
  if (taken !== -1) {
    return `${at}.name ${JSON.stringify(name)} repeats upstreams[${taken}].name (names are ` +
      "compared ignoring case)";
  }
  const listed = entry.catalog?.id;
  const twin = before.findIndex((other) => listed !== undefined && other.catalog?.id === listed);
  if (twin !== -1) {
    return `${at}.catalog.id ${JSON.stringify(listed)} repeats upstreams[${twin}].catalog.id`;
  }
  if (entry.url !== undefined && entry.command !== undefined) {
    return `${at} has both url and command: give exactly one`;
  }
  if (entry.url === undefined && entry.command === undefined) {
    return `${at} needs url (an HTTP server) or command (a child process)`;
  }
  const wrong = entry.url !== undefined
    ? (["args", "env", "cwd"] as const).find((field) => entry[field] !== undefined)
    : entry.headers !== undefined
    ? "headers"
    : undefined;
  if (wrong !== undefined) {
    return `${at}.${wrong} goes only with ${entry.url !== undefined ? "command" : "url"}`;
  }
  if (entry.auth !== undefined && entry.url === undefined) {
    return `${at}.auth goes only with url: a child process has no one to sign in to`;
  }
  if (entry.oauth !== undefined && entry.auth === undefined) {
    return `${at}.oauth goes only with "auth": "person"`;
  }
  const authorization = Object.keys(entry.headers ?? {}).find((h) =>
    h.toLowerCase() === "authorization"
  );
  if (entry.auth !== undefined && authorization !== undefined) {
    return `${at}.headers${_key(authorization)} cannot go with "auth": "person": ` +
      "each person's own token is sent";
  }
  const tools: [string, string][] = [
    ...(entry.gated ?? []).map((tool, j) => [`${at}.gated[${j}]`, tool] as [string, string]),
    ...(entry.hidden ?? []).map((tool, j) => [`${at}.hidden[${j}]`, tool] as [string, string]),
    ...Object.keys(entry.scopes ?? {}).map((tool) =>
      [`${at}.scopes${_key(tool)}`, tool] as [string, string]
    ),
  ];
  for (const [where, tool] of tools) {
    const served = servedToolName(name, tool);
    if (served.length > MAX_SERVED_TOOL_NAME) {
      return `${where} ${JSON.stringify(tool)} is too long: ${served} has ${served.length} ` +
        `characters, more than ${MAX_SERVED_TOOL_NAME}`;
    }
  }
  const gated = new Set(entry.gated ?? []);
  const both = (entry.hidden ?? []).findIndex((tool) => gated.has(tool));
  if (both !== -1) {
    return `${at}.hidden[${both}] ${JSON.stringify(entry.hidden![both])} is also gated: ` +
      "a hidden tool is never called, so it cannot be gated";
  }
  for (const [tool, scope] of Object.entries(entry.scopes ?? {})) {
    if (!_isUpstreamScopeFor(name, scope) && !isScope(scope)) {
      return `${at}.scopes${_key(tool)} ${JSON.stringify(scope)} is not a scope it may use: ` +
        `a spec scope (app.access, …), upstream.${name} or upstream.${name}.WORD ` +
        "(WORD: a-z, 0-9 and -)";
    }
  }
  return null;
}

/** `upstream.<name>` or `upstream.<name>.<word>` of the upstream `name`. */
function _isUpstreamScopeFor(name: string, scope: string): boolean {
  const own = `upstream.${name}`;
  return scope === own ||
    scope.startsWith(`${own}.`) && SCOPE_WORD.test(scope.slice(own.length + 1));
}

function _key(key: string): string {
  return jsonPath([{ key } as v.IssuePathItem]).slice(1);
}

class _FileProblem extends Error {}

async function _transport(entry: UpstreamEntry, at: string): Promise<UpstreamTransport> {
  if (entry.url !== undefined) {
    const headers: Record<string, string> = {};
    for (const [name, header] of Object.entries(entry.headers ?? {})) {
      headers[name] = header.file === undefined
        ? header.value!
        : await _secret(header.file, `${at}.headers${_key(name)}.file`, true);
    }
    return { kind: "http", url: entry.url, headers: Object.freeze(headers) };
  }
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(entry.env ?? {})) {
    env[name] = typeof value === "string"
      ? value
      : await _secret(value.file, `${at}.env${_key(name)}.file`, false);
  }
  return {
    kind: "stdio",
    command: entry.command!,
    args: Object.freeze([...(entry.args ?? [])]),
    env: Object.freeze(env),
    cwd: entry.cwd ?? null,
  };
}

/**
 * A secret's file, owner-only like the webhook secret (whoever reads it holds the upstream's
 * credential); one trailing line break is dropped, and a header's value is one line.
 */
async function _secret(path: string, where: string, oneLine: boolean): Promise<string> {
  const problem = (why: string) => new _FileProblem(`${where} ${JSON.stringify(path)} ${why}`);
  let text: string;
  try {
    await refuseOpenFile(path);
    text = await runtime.readTextFile(path);
  } catch (error) {
    if (error instanceof PrivateFileError) throw new _FileProblem(`${where}: ${error.message}`);
    if (runtime.isNotFound(error)) throw problem("does not exist");
    throw problem(`cannot be read: ${(error as Error).message}`);
  }
  const secret = text.replace(/\r?\n$/, "");
  if (secret === "") throw problem("is empty");
  if (oneLine && /[\r\n\0]/.test(secret)) throw problem("must hold one line (a header's value)");
  return secret;
}

async function _auth(entry: UpstreamEntry, at: string): Promise<PersonAuth | null> {
  if (entry.auth === undefined) return null;
  const oauth = entry.oauth;
  const secret = oauth?.clientSecret;
  return Object.freeze({
    client: oauth === undefined ? null : Object.freeze({
      id: oauth.clientId,
      secret: secret === undefined
        ? null
        : secret.file === undefined
        ? secret.value!
        : await _secret(secret.file, `${at}.oauth.clientSecret.file`, true),
    }),
    scopes: oauth?.scopes === undefined ? null : Object.freeze([...oauth.scopes]),
  });
}

function _upstream(
  entry: UpstreamEntry,
  transport: UpstreamTransport,
  auth: PersonAuth | null,
): UpstreamConfig {
  return Object.freeze({
    name: entry.name,
    title: entry.title ?? entry.name,
    transport: Object.freeze(transport),
    gated: new Set(entry.gated ?? []),
    hidden: new Set(entry.hidden ?? []),
    toolScopes: new Map(Object.entries(entry.scopes ?? {})),
    ownerOnly: entry.ownerOnly ?? false,
    businesses: entry.businesses === undefined ? null : Object.freeze([...entry.businesses]),
    timeoutMs: (entry.timeoutSeconds ?? 30) * 1000,
    maxResponseBytes: entry.maxResponseBytes ?? 4 * MIB,
    forwardIdentity: entry.forwardIdentity ?? false,
    rateLimit: Object.freeze({
      perMinute: entry.rateLimit?.perMinute ?? 120,
      burst: entry.rateLimit?.burst ?? 60,
    }),
    auth,
    ...(entry.catalog === undefined ? {} : { catalog: Object.freeze({ ...entry.catalog }) }),
  });
}

/**
 * Where JSON.parse stopped, as line and column, without quoting the text (it may hold a
 * value the operator would not print): the shortest prefix that is wrong, not merely
 * unfinished, ends at the culprit. Found by halving, since a wrong prefix stays wrong.
 */
function _jsonProblem(text: string): string {
  const wrong = (length: number) => {
    try {
      JSON.parse(text.slice(0, length));
      return false;
    } catch (error) {
      const message = (error as Error).message;
      const at = /at position (\d+)/.exec(message);
      if (at !== null) return Number(at[1]) < length;
      return !message.startsWith("Unexpected end of JSON input");
    }
  };
  let low = 0;
  let high = text.length;
  if (!wrong(high)) {
    return `not valid JSON: it ends too early (${_lineColumn(text, text.length)})`;
  }
  // wrong(high) holds, wrong(low) does not.
  while (high - low > 1) {
    const middle = Math.floor((low + high) / 2);
    if (wrong(middle)) high = middle;
    else low = middle;
  }
  return `not valid JSON at ${_lineColumn(text, high - 1)}`;
}

function _lineColumn(text: string, offset: number): string {
  const before = text.slice(0, offset);
  const line = before.split("\n").length;
  return `line ${line}, column ${offset - before.lastIndexOf("\n")}`;
}
