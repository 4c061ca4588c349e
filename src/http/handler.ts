/** What every surface sees besides the request itself. */
export interface RequestContext {
  /** The client's address: the socket peer, or X-Forwarded-For when the proxy is trusted. */
  readonly clientAddress: string;
}

export type Handler = (request: Request, context: RequestContext) => Promise<Response>;
