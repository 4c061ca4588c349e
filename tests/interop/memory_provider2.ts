// The OAuth client provider the MCP SDK v2 interop tests hand to the SDK: what a real agent
// keeps between runs, in memory, and where it would send the human.
import type {
  OAuthClientMetadata,
  OAuthClientProvider,
  OAuthDiscoveryState,
  StoredOAuthClientInformation,
  StoredOAuthTokens,
} from "npm:@modelcontextprotocol/client@2.4.0";

/** What a real agent keeps between runs, in memory; records where it would send the human. */
export class MemoryProvider2 implements OAuthClientProvider {
  #client: StoredOAuthClientInformation | undefined;
  #tokens: StoredOAuthTokens | undefined;
  #discovery: OAuthDiscoveryState | undefined;
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
      client_name: "SDK v2 interop agent",
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
  saveClientInformation(info: StoredOAuthClientInformation) {
    this.#client = info;
  }
  tokens() {
    return this.#tokens;
  }
  saveTokens(tokens: StoredOAuthTokens) {
    this.#tokens = tokens;
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
  saveDiscoveryState(state: OAuthDiscoveryState) {
    this.#discovery = state;
  }
  discoveryState() {
    return this.#discovery;
  }
}
