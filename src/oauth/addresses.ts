/**
 * Whether an IP address is a public unicast address — the only kind a client metadata
 * document may be fetched from (SSRF defence). Loopback is reported separately because
 * tests and local development may allow it.
 */
export type AddressKind = "public" | "loopback" | "private";

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
    (a === 192 && b === 0 && (c === 0 || c === 2)) || (a === 192 && b === 168) ||
    (a === 198 && (b === 18 || b === 19)) || (a === 198 && b === 51 && c === 100) ||
    (a === 203 && b === 0 && c === 113) || a >= 224;
  return blocked ? "private" : "public";
}

function _classifyV6(address: string): AddressKind {
  const groups = _expandV6(address.split("%")[0]!);
  if (groups === null) return "private";
  if (groups.every((g) => g === 0)) return "private";
  if (groups.slice(0, 7).every((g) => g === 0) && groups[7] === 1) return "loopback";
  // IPv4-mapped (::ffff:a.b.c.d) and NAT64 (64:ff9b::/96) carry an IPv4 address.
  const mapped = groups.slice(0, 5).every((g) => g === 0) && groups[5] === 0xffff;
  const nat64 = groups[0] === 0x64 && groups[1] === 0xff9b &&
    groups.slice(2, 6).every((g) => g === 0);
  if (mapped || nat64) {
    const [hi, lo] = [groups[6]!, groups[7]!];
    return _classifyV4(`${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`);
  }
  const first = groups[0]!;
  if ((first & 0xfe00) === 0xfc00) return "private"; // fc00::/7 unique local
  if ((first & 0xffc0) === 0xfe80) return "private"; // fe80::/10 link-local
  if ((first & 0xff00) === 0xff00) return "private"; // multicast
  if (first === 0x2001 && groups[1] === 0x0db8) return "private"; // documentation
  if (first === 0x0100 && groups.slice(1, 4).every((g) => g === 0)) return "private"; // discard
  if (groups.slice(0, 6).every((g) => g === 0)) return "private"; // IPv4-compatible, deprecated
  return "public";
}

function _expandV6(address: string): number[] | null {
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
  return all.map((g) => parseInt(g, 16));
}
