// A private PostgreSQL cluster for one test file: `initdb` in a temporary folder, the server on a
// free loopback port with TLS offered (a self-signed certificate for localhost), a login role with
// a password, and a new database per `database()`. Uses
// Debian's `postgresql` package (.ci/run installs it); a machine without it fails, never skips.
import { freePort } from "./ports.ts";

export interface PgCluster {
  readonly port: number;
  /** The role the server logs in as; it owns every database `database()` makes. */
  readonly user: string;
  readonly password: string;
  /** A new, empty database owned by `user`; its URL with the password in it. */
  database(): Promise<string>;
  /** Runs SQL as the superuser (over the cluster's own socket) and returns psql's output. */
  superuser(sql: string, database?: string): Promise<string>;
  /** SIGSTOP to the server and its backends: connections stay open, nothing answers. */
  freeze(): Promise<void>;
  /** SIGCONT to what `freeze` stopped. */
  thaw(): void;
  /** Stops the server at once (pg_ctl stop -m immediate), as a crash would; `stop` still cleans. */
  halt(): Promise<void>;
  stop(): Promise<void>;
}

/** The newest server binaries Debian installed, under /usr/lib/postgresql/VERSION/bin. */
async function _binDir(): Promise<string> {
  const versions: number[] = [];
  try {
    for await (const entry of Deno.readDir("/usr/lib/postgresql")) {
      if (/^\d+$/.test(entry.name)) versions.push(Number(entry.name));
    }
  } catch (error) {
    if (!(error instanceof Deno.errors.NotFound)) throw error;
  }
  const newest = versions.sort((a, b) => b - a)[0];
  if (newest === undefined) {
    throw new Error("PostgreSQL is not installed (apt-get install postgresql; .ci/run does it)");
  }
  return `/usr/lib/postgresql/${newest}/bin`;
}

/** PostgreSQL refuses to run as root: as root, each command runs as the postgres user. */
function _asOwner(bin: string, args: string[]): [string, string[]] {
  return Deno.uid() === 0 ? ["runuser", ["-u", "postgres", "--", bin, ...args]] : [bin, args];
}

async function _run(bin: string, args: string[], stdin?: string): Promise<string> {
  const [command, commandArgs] = _asOwner(bin, args);
  const child = new Deno.Command(command, {
    args: commandArgs,
    stdin: stdin === undefined ? "null" : "piped",
    stdout: "piped",
    stderr: "piped",
    cwd: "/",
  }).spawn();
  if (stdin !== undefined) {
    const writer = child.stdin.getWriter();
    await writer.write(new TextEncoder().encode(stdin));
    await writer.close();
  }
  const output = await child.output();
  const text = new TextDecoder().decode(output.stdout);
  if (!output.success) {
    throw new Error(`${bin} ${args.join(" ")}: ${new TextDecoder().decode(output.stderr)}${text}`);
  }
  return text;
}

async function _ownerUid(): Promise<number> {
  const output = await new Deno.Command("id", { args: ["-u", "postgres"], stdout: "piped" })
    .output();
  return Number(new TextDecoder().decode(output.stdout).trim());
}

export async function startPgCluster(): Promise<PgCluster> {
  const bin = await _binDir();
  const dir = await Deno.makeTempDir({ prefix: "vestibule-pg-" });
  if (Deno.uid() === 0) await Deno.chown(dir, await _ownerUid(), null);
  const data = `${dir}/data`;
  // Local socket connections trust the OS user (the superuser's door); TCP needs a password.
  await _run(`${bin}/initdb`, [
    "-D",
    data,
    "-U",
    "postgres",
    "--auth-local=trust",
    "--auth-host=scram-sha-256",
    "--no-sync",
    "-E",
    "UTF8",
    "--locale=C",
  ]);
  // The certificate PostgreSQL looks for in its data folder; its key must be the owner's alone.
  await _run("openssl", [
    "req",
    "-x509",
    "-newkey",
    "ec",
    "-pkeyopt",
    "ec_paramgen_curve:prime256v1",
    "-nodes",
    "-days",
    "2",
    "-subj",
    "/CN=localhost",
    "-keyout",
    `${data}/server.key`,
    "-out",
    `${data}/server.crt`,
  ]);
  await _run("chmod", ["600", `${data}/server.key`]);
  const port = freePort();
  // Durability is not under test here: fsync off keeps the suite fast on a busy machine.
  const options = [
    `-p ${port}`,
    "-c listen_addresses=127.0.0.1",
    `-c unix_socket_directories=${dir}`,
    "-c fsync=off",
    "-c synchronous_commit=off",
    "-c full_page_writes=off",
    "-c max_connections=200",
    "-c ssl=on",
  ].join(" ");
  await _run(`${bin}/pg_ctl`, [
    "-D",
    data,
    "-l",
    `${dir}/server.log`,
    "-o",
    options,
    "-w",
    "start",
  ]);
  const superuser = (sql: string, database = "postgres") =>
    _run(`${bin}/psql`, [
      "-h",
      dir,
      "-p",
      String(port),
      "-U",
      "postgres",
      "-d",
      database,
      "-v",
      "ON_ERROR_STOP=1",
      "-qAt",
    ], sql);
  const user = "vestibule";
  const password = crypto.randomUUID();
  await superuser(`CREATE ROLE ${user} LOGIN PASSWORD '${password}';`);
  let databases = 0;
  let frozen: number[] = [];
  let halted = false;
  const thaw = () => {
    for (const pid of frozen) Deno.kill(pid, "SIGCONT");
    frozen = [];
  };
  const halt = async () => {
    if (halted) return;
    halted = true;
    await _run(`${bin}/pg_ctl`, ["-D", data, "-m", "immediate", "-w", "stop"]);
  };
  return {
    port,
    user,
    password,
    async database() {
      const name = `store_${++databases}`;
      await superuser(`CREATE DATABASE ${name} OWNER ${user};`);
      // Since PostgreSQL 15 only the database owner may create in its public schema.
      await superuser(`ALTER SCHEMA public OWNER TO ${user};`, name);
      return `postgres://${user}:${password}@127.0.0.1:${port}/${name}`;
    },
    superuser,
    async freeze() {
      const postmaster = Number((await Deno.readTextFile(`${data}/postmaster.pid`)).split("\n")[0]);
      const children = await new Deno.Command("ps", {
        args: ["-o", "pid=", "--ppid", String(postmaster)],
        stdout: "piped",
      }).output();
      frozen = [
        postmaster,
        ...new TextDecoder().decode(children.stdout).split("\n")
          .map((line) => Number(line.trim())).filter((pid) => pid > 0),
      ];
      for (const pid of frozen) Deno.kill(pid, "SIGSTOP");
    },
    thaw,
    halt,
    async stop() {
      try {
        thaw();
        await halt();
      } finally {
        await Deno.remove(dir, { recursive: true });
      }
    },
  };
}
