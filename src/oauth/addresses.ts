/**
 * Whether an IP address is a public unicast address — the only kind a URL learned from
 * outside (a client metadata document, an upstream's OAuth metadata) may be fetched from
 * (SSRF defence). Loopback is reported separately because tests and local development may
 * allow it.
 */
export type AddressKind = "public" | "loopback" | "private";

/** The runtime's DNS lookup: it ends when `signal` aborts. */
export type ResolveDns = (
  host: string,
  type: "A" | "AAAA",
  signal: AbortSignal,
) => Promise<string[]>;

/** Why a host is refused: it resolves to nothing, or to an address of that kind. */
export interface HostRefusal {
  /** The host as written, without an IPv6 literal's brackets. */
  readonly host: string;
  readonly kind: "unresolved" | "loopback" | "private";
}

/**
 * The one SSRF policy for hosts learned from outside: every address the host resolves to
 * must be public, or loopback when `allowLoopback`; null when it may be fetched from. An IP
 * literal is judged as written and `localhost` as 127.0.0.1, without a lookup. Residual
 * risk, accepted by every caller: DNS may change between this lookup and fetch's own.
 */
export async function refuseHost(
  hostname: string,
  allowLoopback: boolean,
  resolve: (host: string, type: "A" | "AAAA") => Promise<string[]>,
): Promise<HostRefusal | null> {
  const host = hostname.replace(/^\[|\]$/g, "");
  let addresses: string[];
  if (/^[\d.]+$/.test(host) || host.includes(":")) addresses = [host];
  else if (host === "localhost") addresses = ["127.0.0.1"];
  else {
    const found = await Promise.allSettled([resolve(host, "A"), resolve(host, "AAAA")]);
    addresses = found.flatMap((r) => (r.status === "fulfilled" ? r.value : []));
    if (addresses.length === 0) return { host, kind: "unresolved" };
  }
  for (const address of addresses) {
    const kind = classifyAddress(address);
    if (kind === "public" || (kind === "loopback" && allowLoopback)) continue;
    return { host, kind };
  }
  return null;
}

export function classifyAddress(address: string): AddressKind {
  const bare = address.replace(/^\[|\]$/g, "");
  if (bare.includes(":")) return _classifyV6(bare);
  return _classifyV4(bare);
}

function _classifyV4(address: string): AddressKind {
  const parts = address.split(".").map(Number);
  if (parts.length !== 4 || parts.some((p) => !Number.isInteger(p) || p < 0 || p > 255)) {
    return "private";
  }
  const [a, b, c] = parts as [number, number, number, number];
  if (a === 127) return "loopback";
  const blocked = a === 0 || a === 10 || (a === 100 && b >= 64 && b <= 127) ||
    (a === 169 && b === 254) || (a === 172 && b >= 16 && b <= 31) ||
    (a === 192 && b === 0 && (c === 0 || c === 2)) || (a === 192 && b === 88 && c === 99) ||
    (a === 192 && b === 168) ||
    (a === 198 && (b === 18 || b === 19)) || (a === 198 && b === 51 && c === 100) ||
    (a === 203 && b === 0 && c === 113) || a >= 224;
  return blocked ? "private" : "public";
}

function _classifyV6(address: string): AddressKind {
  const groups = _expandV6(address.split("%")[0]!);
  if (groups === null) return "private";
  if (groups.slice(0, 7).every((g) => g === 0) && groups[7] === 1) return "loopback";
  const embedding = _classifyEmbedding(groups);
  if (embedding !== null) return embedding;
  // Default deny: only global unicast (2000::/3, RFC 4291 §2.4) is public, less the ranges
  // of IANA's special-purpose registry inside it that are not globally reachable. Anything
  // else (site-local fec0::/10, unique local, link-local, multicast, unassigned) is not.
  const [g0, g1] = groups;
  if ((g0 & 0xe000) !== 0x2000) return "private";
  if (g0 === 0x2001 && g1 <= 0x01ff) return "private"; // 2001::/23 IETF protocol assignments
  if (g0 === 0x2001 && g1 === 0x0db8) return "private"; // 2001:db8::/32 documentation
  if (g0 === 0x3fff && g1 <= 0x0fff) return "private"; // 3fff::/20 documentation (RFC 9637)
  return "public";
}

/**
 * An IPv6 form that carries IPv4 addresses is judged by them, since a packet to it can end
 * up at them (the worst one wins); null for an address that embeds none.
 */
function _classifyEmbedding(groups: Groups): AddressKind | null {
  const [g0, g1, g2, g3, g4, g5, g6, g7] = groups;
  const v4 = (hi: number, lo: number) =>
    _classifyV4(`${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`);
  const zeroTo64 = g0 === 0 && g1 === 0 && g2 === 0 && g3 === 0;
  const zeroTo96 = zeroTo64 && g4 === 0;
  // ::ffff:0:0/96 IPv4-mapped (RFC 4291 §2.5.5.2); 64:ff9b::/96 NAT64 (RFC 6052 §2.1).
  if (zeroTo96 && g5 === 0xffff) return v4(g6, g7);
  if (g0 === 0x64 && g1 === 0xff9b && g2 === 0 && g3 === 0 && g4 === 0 && g5 === 0) {
    return v4(g6, g7);
  }
  // 64:ff9b:1::/48 local-use NAT64 (RFC 8215): not globally reachable, and where the IPv4
  // address sits depends on the operator's prefix length.
  if (g0 === 0x64 && g1 === 0xff9b && g2 === 1) return "private";
  // ::/96 IPv4-compatible (RFC 4291 §2.5.5.1): deprecated and no longer routed, so a public
  // IPv4 address does not make it public.
  // ::ffff:0:0:0/96 IPv4-translated (RFC 2765 §2.1, dropped by RFC 6145): the same.
  if ((zeroTo96 && g5 === 0) || (zeroTo64 && g4 === 0xffff && g5 === 0)) {
    return v4(g6, g7) === "loopback" ? "loopback" : "private";
  }
  // 2002::/16 6to4 (RFC 3056 §2): the IPv4 address is bits 16–47.
  if (g0 === 0x2002) return v4(g1, g2);
  // 2001::/32 Teredo (RFC 4380 §4): the server's IPv4 address is bits 32–63, the client's
  // is bits 96–127 with every bit inverted.
  if (g0 === 0x2001 && g1 === 0) return _worst(v4(g2, g3), v4(~g6 & 0xffff, ~g7 & 0xffff));
  return null;
}

const _SEVERITY: readonly AddressKind[] = ["public", "loopback", "private"];

function _worst(a: AddressKind, b: AddressKind): AddressKind {
  return _SEVERITY.indexOf(a) >= _SEVERITY.indexOf(b) ? a : b;
}

/** The eight 16-bit groups of an IPv6 address. */
type Groups = [number, number, number, number, number, number, number, number];

function _expandV6(address: string): Groups | null {
  let text = address;
  const v4 = text.match(/(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/);
  if (v4) {
    const [a, b, c, d] = v4.slice(1).map(Number) as [number, number, number, number];
    if ([a, b, c, d].some((n) => n > 255)) return null;
    text = text.slice(0, v4.index) +
      `${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const halves = text.split("::");
  if (halves.length > 2) return null;
  const parse = (part: string) => (part === "" ? [] : part.split(":"));
  const head = parse(halves[0]!);
  const tail = halves.length === 2 ? parse(halves[1]!) : [];
  const missing = 8 - head.length - tail.length;
  if (halves.length === 1 ? missing !== 0 : missing < 1) return null;
  const all = [...head, ...Array(halves.length === 2 ? missing : 0).fill("0"), ...tail];
  if (all.some((g) => !/^[0-9a-f]{1,4}$/i.test(g))) return null;
  return all.map((g) => parseInt(g, 16)) as Groups;
}
