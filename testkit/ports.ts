// Loopback ports for servers that must be told their port before they start (an origin in the
// server's configuration, a callback URL). They are chosen below the kernel's range for outgoing
// connections: a port from that range, free when chosen, can become the local port of any
// connection opened before the server binds it, which CI saw as EADDRINUSE. Nor is a port handed
// out twice in one process, bound or not yet.

/** The lowest port handed out: above the registered services most machines run. */
const LOWEST = 10_000;
/** Fewer candidates than this below the outgoing range, and the kernel chooses instead. */
const ENOUGH = 1_000;
const handedOut = new Set<number>();
/** The kernel's setting, read once: it does not change while the tests run. */
let outgoingStart: number | undefined;

/** Ports nobody listens on now, none of them handed out before by this process. */
export function freePorts(count: number): number[] {
  return _freePorts(count, Math.random);
}

/** freePorts with the candidates drawn by `random` (in [0, 1), as Math.random). */
export function _freePorts(count: number, random: () => number): number[] {
  const end = outgoingStart ??= _outgoingRangeStart();
  const ports: number[] = [];
  while (ports.length < count) {
    const port = end - LOWEST < ENOUGH
      ? _kernelChosen()
      : LOWEST + Math.floor(random() * (end - LOWEST));
    if (handedOut.has(port) || !_bindable(port)) continue;
    handedOut.add(port);
    ports.push(port);
  }
  return ports;
}

/** One port, as freePorts. */
export function freePort(): number {
  return freePorts(1)[0]!;
}

/** Where Linux starts the local ports of outgoing connections; elsewhere IANA's dynamic range. */
export function _outgoingRangeStart(): number {
  try {
    const [low] = Deno.readTextFileSync("/proc/sys/net/ipv4/ip_local_port_range").trim()
      .split(/\s+/);
    const start = Number(low);
    if (Number.isInteger(start) && start > 0) return start;
  } catch (error) {
    if (!(error instanceof Deno.errors.NotFound)) throw error;
  }
  return 49_152;
}

function _kernelChosen(): number {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const { port } = listener.addr as Deno.NetAddr;
  listener.close();
  return port;
}

function _bindable(port: number): boolean {
  try {
    Deno.listen({ hostname: "127.0.0.1", port }).close();
    return true;
  } catch (error) {
    if (error instanceof Deno.errors.AddrInUse) return false;
    throw error;
  }
}
