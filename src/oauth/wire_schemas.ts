/**
 * Wire formats of the OAuth surfaces that the OpenAPI description also publishes (spec §2).
 * The servers build their bodies against these types; `deno task openapi` turns the same
 * schemas into components, so the description cannot drift from what is sent.
 */
import * as v from "valibot";

/** An OAuth error body (RFC 6749 §5.2, RFC 6750 §3.1). */
export const OAuthErrorSchema = v.pipe(
  v.object({
    error: v.pipe(v.string(), v.description("Error code, e.g. invalid_token.")),
    error_description: v.optional(
      v.pipe(v.string(), v.description("Human-readable explanation for the developer.")),
    ),
  }),
  v.title("OAuthError"),
  v.description("OAuth 2.0 error response body."),
);
export type OAuthError = v.InferOutput<typeof OAuthErrorSchema>;

/** OAuth 2.0 protected-resource metadata (RFC 9728 §2) of the workspace resource. */
export const ProtectedResourceSchema = v.pipe(
  v.object({
    resource: v.pipe(
      v.string(),
      v.url(),
      v.description("Resource identifier: the {api_url} address, used as `resource` and `aud`."),
    ),
    authorization_servers: v.pipe(
      v.array(v.pipe(v.string(), v.url())),
      v.description("Issuer identifiers of the authorization servers for this resource."),
    ),
    scopes_supported: v.pipe(
      v.array(v.string()),
      v.description("Every scope the resource understands."),
    ),
    bearer_methods_supported: v.optional(
      v.pipe(v.array(v.string()), v.description("Ways to present a bearer token: header only.")),
    ),
    resource_name: v.optional(v.pipe(v.string(), v.description("Human-readable name."))),
    resource_documentation: v.optional(
      v.pipe(v.string(), v.url(), v.description("Developer documentation of the resource.")),
    ),
  }),
  v.title("ProtectedResource"),
  v.description("OAuth 2.0 protected-resource metadata (RFC 9728)."),
);
export type ProtectedResource = v.InferOutput<typeof ProtectedResourceSchema>;
