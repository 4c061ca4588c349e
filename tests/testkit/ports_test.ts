import assert from "node:assert/strict";
import { _freePorts, _outgoingRangeStart, freePorts } from "../../testkit/ports.ts";

Deno.test("free ports lie below the outgoing connections' range, bindable and never handed out twice", () => {
  const start = _outgoingRangeStart();
  const ports = [...freePorts(200), ...freePorts(200)];
  assert.equal(new Set(ports).size, ports.length);
  for (const port of ports) {
    assert.ok(port >= 10_000 && port < start, `${port} is outside 10000..${start}`);
  }
  Deno.listen({ hostname: "127.0.0.1", port: ports[0]! }).close();
});

Deno.test("a port handed out already, or one someone listens on, is passed over", () => {
  const span = _outgoingRangeStart() - 10_000;
  const at = (port: number) => (port - 10_000 + 0.5) / span;
  const from = (port: number) => () => at(port++);
  const [first] = _freePorts(1, from(20_000));
  let port = first! + 1;
  let held: Deno.Listener | undefined;
  while (held === undefined) {
    try {
      held = Deno.listen({ hostname: "127.0.0.1", port });
    } catch (error) {
      if (!(error instanceof Deno.errors.AddrInUse)) throw error;
      port++;
    }
  }
  try {
    const after = from(port + 1);
    const draws = [at(first!), at(port)];
    let drawn = 0;
    const [chosen] = _freePorts(1, () => (drawn++, draws.shift() ?? after()));
    assert.ok(chosen! > port, `${chosen} after ${first} and ${port}`);
    assert.ok(drawn >= 3);
  } finally {
    held.close();
  }
});

Deno.test("the outgoing range's start is the kernel's where it says one", async () => {
  const said = await Deno.readTextFile("/proc/sys/net/ipv4/ip_local_port_range").catch(() => null);
  assert.equal(_outgoingRangeStart(), said === null ? 49_152 : Number(said.trim().split(/\s+/)[0]));
});
