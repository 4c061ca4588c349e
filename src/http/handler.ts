/** What every surface sees besides the request itself. */
export interface RequestContext {
  /** The client's address: the socket peer, or X-Forwarded-For when the proxy is trusted. */
  readonly clientAddress: string;
  /**
   * The route pattern that matched (`/token`, `/approvals/*`), written by the path router for
   * the request log and the metrics: a field on the one per-request object, so telling it
   * costs no allocation. Unset when no route matched.
   */
  route?: string | undefined;
  /**
   * Aborted, its reason in words, when the server itself closes the request's connection (its
   * read deadline, or shutdown past its grace) rather than the client; absent where the server
   * cannot tell.
   */
  readonly ended?: AbortSignal | undefined;
}

export type Handler = (request: Request, context: RequestContext) => Promise<Response>;
