// The runtime on Deno.
import type { NetAddress, Runtime, ServeOnConnection, TcpListener } from "./runtime.ts";

export const denoRuntime: Runtime = {
  description: `Deno ${Deno.version.deno}`,
  args: Deno.args,
  env: (name) => Deno.env.get(name),
  envNames() {
    try {
      return Object.keys(Deno.env.toObject());
    } catch (error) {
      if (error instanceof Deno.errors.NotCapable) return null;
      throw error;
    }
  },
  exit: (code) => Deno.exit(code),
  stdout: Deno.stdout,
  stdin: () => Deno.stdin.readable,
  onSignal: (signal, listener) => Deno.addSignalListener(signal, listener),
  beforeExit(listener) {
    // The error events come before the runtime reports the error and exits; not prevented here.
    for (const event of ["unload", "error", "unhandledrejection"]) {
      globalThis.addEventListener(event, listener);
    }
  },
  readTextFile: (path) => Deno.readTextFile(path),
  writeTextFile: (path, text, options = {}) => Deno.writeTextFile(path, text, options),
  mkdir: (path, options) => Deno.mkdir(path, options),
  async touch(path, mode) {
    const file = await Deno.open(path, { append: true, create: true, mode });
    try {
      return (await file.stat()).mode;
    } finally {
      file.close();
    }
  },
  fileMode: async (path) => (await Deno.stat(path)).mode,
  isNotFound: (error) => error instanceof Deno.errors.NotFound,
  isNotPermitted: (error) =>
    error instanceof Deno.errors.NotCapable || error instanceof Deno.errors.PermissionDenied,
  isBrokenPipe: (error) => error instanceof Deno.errors.BrokenPipe,
  isClosed: (error) =>
    error instanceof Deno.errors.BadResource || error instanceof Deno.errors.Interrupted,
  isGranted: (name, path) => Deno.permissions.querySync({ name, path }).state === "granted",
  rss: () => Deno.memoryUsage().rss,
  // Deno binds at once, or throws.
  listen: (hostname, port): TcpListener =>
    Object.assign(Deno.listen({ hostname, port, transport: "tcp" }), { bound: Promise.resolve() }),
  async connect({ hostname, port, tls }) {
    if (tls === undefined) {
      const conn = await Deno.connect({ hostname, port });
      conn.setNoDelay(true);
      return conn;
    }
    const conn = await Deno.connectTls({
      hostname,
      port,
      alpnProtocols: ["http/1.1"],
      ...(tls.caCerts ? { caCerts: [...tls.caCerts] } : {}),
    });
    await conn.handshake();
    return conn;
  },
  spawn(command, { args, env, cwd }) {
    return new Deno.Command(command, {
      args: [...args],
      env: { ...env },
      clearEnv: true,
      ...(cwd === undefined ? {} : { cwd }),
      stdin: "piped",
      stdout: "piped",
      stderr: "piped",
    }).spawn();
  },
  resolveDns: (host, type, signal) => Deno.resolveDns(host, type, { signal }),
  unrefTimer: (timer) => Deno.unrefTimer(timer),
  serveOnConnection: _connectionServer(),
  servePlain(hostname, port, handler) {
    const server = Deno.serve(
      { hostname, port, onListen: () => {} },
      (request, info) => handler(request, info.remoteAddr as NetAddress),
    );
    return { addr: server.addr as NetAddress, shutdown: () => server.shutdown() };
  },
  dropVanishedSocketErrors() {
    const drop = (event: ErrorEvent) => {
      if (event.error instanceof Deno.errors.BadResource) event.preventDefault();
    };
    globalThis.addEventListener("error", drop);
    return () => globalThis.removeEventListener("error", drop);
  },
  // A specifier Deno cannot see before run time, so the first start does not fetch the package.
  importPackage: (name, version) => import(`npm:${name}@${version}`),
  openKv: (path) => Deno.openKv(path),
};

/**
 * Deno's per-connection server (the engine behind Deno.serve, hyper, which Deno's own node:http
 * is built on), not part of its public API: looked up once; a future Deno without it gets null.
 */
function _connectionServer(): ServeOnConnection | null {
  const deno = Deno as unknown as { internal?: symbol } & Record<symbol, unknown>;
  const internal = deno.internal === undefined ? undefined : deno[deno.internal];
  const serve = (internal as { serveHttpOnConnection?: unknown } | undefined)
    ?.serveHttpOnConnection;
  return typeof serve === "function" ? serve as ServeOnConnection : null;
}
