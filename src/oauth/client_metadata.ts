/**
 * Client metadata (RFC 7591 §2) as registration requests and client metadata documents
 * carry it, parsed once into what this server keeps. Unknown fields are ignored.
 */
import * as v from "valibot";
import { isNativeRedirectUri, redirectUriProblem } from "./redirect_uri.ts";
import type { ScopeCatalogue } from "./scopes.ts";

export type GrantType = "authorization_code" | "refresh_token";
export type AuthMethod = "none" | "client_secret_basic" | "client_secret_post";
/** OpenID Connect Registration §2; MCP 2026-07-28 asks every registering client to say. */
export type ApplicationType = "web" | "native";

export interface ClientMetadata {
  readonly clientName: string | null;
  readonly redirectUris: readonly string[];
  readonly grantTypes: readonly GrantType[];
  readonly tokenEndpointAuthMethod: AuthMethod;
  /** The registered `scope`, echoed back; requests are checked against the supported set. */
  readonly scope: string | null;
  /** `web` when the client does not say (OpenID Connect Registration §2). */
  readonly applicationType: ApplicationType;
}

const NameSchema = v.pipe(
  v.string("client_name must be a string"),
  v.trim(),
  v.minLength(1, "client_name must not be empty"),
  v.maxLength(100, "client_name must be at most 100 characters"),
  v.check(
    // deno-lint-ignore no-control-regex -- control characters are what we refuse
    (s) => !/[\u0000-\u001f\u007f]/.test(s),
    "client_name must not contain control characters",
  ),
);

const MetadataSchema = v.object({
  client_name: v.optional(NameSchema),
  redirect_uris: v.optional(
    v.pipe(
      v.array(v.string("each redirect URI must be a string"), "redirect_uris must be an array"),
      v.maxLength(10, "at most 10 redirect_uris"),
    ),
  ),
  grant_types: v.optional(
    v.array(
      v.picklist(
        ["authorization_code", "refresh_token"],
        "grant_types may only contain authorization_code and refresh_token",
      ),
      "grant_types must be an array",
    ),
  ),
  response_types: v.optional(
    v.array(
      v.literal("code", 'response_types may only contain "code"'),
      "response_types must be an array",
    ),
  ),
  token_endpoint_auth_method: v.optional(
    v.picklist(
      ["none", "client_secret_basic", "client_secret_post"],
      "token_endpoint_auth_method must be none, client_secret_basic or client_secret_post",
    ),
  ),
  scope: v.optional(v.pipe(v.string("scope must be a string"), v.maxLength(2000))),
  application_type: v.optional(
    v.picklist(["web", "native"], "application_type must be web or native"),
  ),
});

export type MetadataParse =
  | { ok: true; metadata: ClientMetadata }
  | { ok: false; code: "invalid_client_metadata" | "invalid_redirect_uri"; description: string };

/** `scopes`: the service's catalogue, which a `scope` may name only from. */
export function parseClientMetadata(input: unknown, scopes: ScopeCatalogue): MetadataParse {
  if (typeof input !== "object" || input === null || Array.isArray(input)) {
    return {
      ok: false,
      code: "invalid_client_metadata",
      description: "The metadata must be a JSON object",
    };
  }
  const parsed = v.safeParse(MetadataSchema, input);
  if (!parsed.success) {
    const issue = parsed.issues[0];
    const key = issue.path?.[0]?.key;
    const code = key === "redirect_uris" ? "invalid_redirect_uri" : "invalid_client_metadata";
    return { ok: false, code, description: issue.message };
  }
  const m = parsed.output;
  if (!m.redirect_uris || m.redirect_uris.length === 0) {
    return {
      ok: false,
      code: "invalid_redirect_uri",
      description: "redirect_uris must list at least one URI",
    };
  }
  for (const uri of m.redirect_uris) {
    const problem = redirectUriProblem(uri);
    if (problem) {
      return {
        ok: false,
        code: "invalid_redirect_uri",
        description: `redirect URI ${JSON.stringify(uri.slice(0, 200))} ${problem}`,
      };
    }
  }
  const applicationType = m.application_type ?? "web";
  // OpenID Connect Registration §2: a native client registers only private-use schemes and
  // loopback http; the server must check. (Its rule for web clients binds only the implicit
  // grant, which this server does not offer.)
  const foreign = applicationType === "native"
    ? m.redirect_uris.find((uri) => !isNativeRedirectUri(uri))
    : undefined;
  if (foreign !== undefined) {
    return {
      ok: false,
      code: "invalid_redirect_uri",
      description: `redirect URI ${
        JSON.stringify(foreign.slice(0, 200))
      } is not for a native application: with application_type native, use a private-use scheme or http on 127.0.0.1, [::1] or localhost`,
    };
  }
  const grantTypes: GrantType[] = [...new Set(m.grant_types ?? ["authorization_code" as const])];
  if (!grantTypes.includes("authorization_code")) {
    return {
      ok: false,
      code: "invalid_client_metadata",
      description: "grant_types must include authorization_code",
    };
  }
  if (m.scope !== undefined) {
    const parsed = scopes.parse(m.scope);
    if (!parsed.ok) {
      return {
        ok: false,
        code: "invalid_client_metadata",
        description: `scope ${JSON.stringify(parsed.unknown)} is not supported`,
      };
    }
  }
  return {
    ok: true,
    metadata: {
      clientName: m.client_name ?? null,
      redirectUris: [...new Set(m.redirect_uris)],
      grantTypes,
      tokenEndpointAuthMethod: m.token_endpoint_auth_method ?? "none",
      scope: m.scope ?? null,
      applicationType,
    },
  };
}
