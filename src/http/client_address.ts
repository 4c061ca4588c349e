import type { NetAddress } from "../runtime/runtime.ts";

/**
 * The client's address. X-Forwarded-For is believed only behind a trusted proxy, and then
 * its right-most entry (the one our proxy appended) is taken: left entries are the client's word.
 */
export function clientAddress(
  request: Request,
  peer: NetAddress | { readonly transport: "unix" | "unixpacket"; readonly path: string },
  trustProxy: boolean,
): string {
  if (trustProxy) {
    const forwarded = request.headers.get("X-Forwarded-For");
    const last = forwarded?.split(",").map((s) => s.trim()).filter((s) => s !== "").at(-1);
    if (last) return last;
  }
  return peer.transport === "tcp" || peer.transport === "udp" ? peer.hostname : "local";
}
