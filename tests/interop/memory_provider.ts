// The OAuth client provider the MCP SDK interop tests hand to the SDK: what a real agent keeps
// between runs, in memory, and where it would send the human.
import type { OAuthClientProvider } from "npm:@modelcontextprotocol/sdk@^1.32.2/client/auth.js";
import type {
  OAuthClientInformationMixed,
  OAuthClientMetadata,
  OAuthTokens,
} from "npm:@modelcontextprotocol/sdk@^1.32.2/shared/auth.js";

export class MemoryProvider implements OAuthClientProvider {
  #client: OAuthClientInformationMixed | undefined;
  #tokens: OAuthTokens | undefined;
  #verifier = "";
  states: string[] = [];
  authorizationUrls: URL[] = [];
  readonly redirectUrl: string;
  readonly grantTypes: readonly string[];

  constructor(redirectUrl: string, grantTypes: readonly string[] = ["authorization_code"]) {
    this.redirectUrl = redirectUrl;
    this.grantTypes = grantTypes;
  }

  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: "SDK interop agent",
      redirect_uris: [this.redirectUrl],
      grant_types: [...this.grantTypes],
      response_types: ["code"],
      token_endpoint_auth_method: "none",
    };
  }
  state() {
    const state = crypto.randomUUID();
    this.states.push(state);
    return state;
  }
  clientInformation() {
    return this.#client;
  }
  saveClientInformation(info: OAuthClientInformationMixed) {
    this.#client = info;
  }
  tokens() {
    return this.#tokens;
  }
  saveTokens(tokens: OAuthTokens) {
    this.#tokens = tokens;
  }
  /**
   * The SDK calls this when the server says stored credentials are no longer valid (on
   * `invalid_grant` from a refresh: "tokens"), then authorizes afresh.
   */
  invalidateCredentials(scope: "all" | "client" | "tokens" | "verifier" | "discovery") {
    if (scope === "all" || scope === "client") this.#client = undefined;
    if (scope === "all" || scope === "tokens") this.#tokens = undefined;
    if (scope === "all" || scope === "verifier") this.#verifier = "";
  }
  redirectToAuthorization(url: URL) {
    this.authorizationUrls.push(url);
  }
  saveCodeVerifier(verifier: string) {
    this.#verifier = verifier;
  }
  codeVerifier() {
    return this.#verifier;
  }
}
