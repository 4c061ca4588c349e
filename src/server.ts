import type { ListenAddress } from "./config.ts";
import { clientAddress } from "./http/client_address.ts";
import type { Handler } from "./http/handler.ts";

export interface RunningServer {
  /** The bound addresses, with the real port when 0 was asked for. */
  readonly addresses: readonly Deno.NetAddr[];
  /** Stops accepting, lets in-flight requests finish, and resolves when all listeners are closed. */
  shutdown(): Promise<void>;
}

/** Binds every listen address to the one handler; sites are told apart by Host. */
export function serve(
  listen: readonly ListenAddress[],
  handler: Handler,
  options: { readonly trustProxy: boolean },
): RunningServer {
  const servers = listen.map((address) =>
    Deno.serve({
      hostname: address.hostname,
      port: address.port,
      onListen: () => {},
    }, (request, info) => handler(request, new _LazyContext(request, info, options.trustProxy)))
  );
  return {
    addresses: servers.map((s) => s.addr),
    async shutdown() {
      await Promise.all(servers.map((s) => s.shutdown()));
    },
  };
}

/**
 * The client address, computed on first use: most routes (every public read) never look at it.
 * A class, because an object literal with a getter gets a hidden class of its own per request:
 * that doubled the heap and halved the MCP endpoint's requests/s (bench mcp).
 */
class _LazyContext {
  #address: string | undefined;
  readonly #request: Request;
  /** remoteAddr is itself computed on access. */
  readonly #info: Deno.ServeHandlerInfo;
  readonly #trustProxy: boolean;
  constructor(request: Request, info: Deno.ServeHandlerInfo, trustProxy: boolean) {
    this.#request = request;
    this.#info = info;
    this.#trustProxy = trustProxy;
  }
  get clientAddress(): string {
    return this.#address ??= clientAddress(this.#request, this.#info.remoteAddr, this.#trustProxy);
  }
}
