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
    }, (request, info) =>
      handler(request, {
        // Computed on first use: most routes (every public read) never look at it.
        get clientAddress() {
          return clientAddress(request, info.remoteAddr, options.trustProxy);
        },
      }))
  );
  return {
    addresses: servers.map((s) => s.addr),
    async shutdown() {
      await Promise.all(servers.map((s) => s.shutdown()));
    },
  };
}
