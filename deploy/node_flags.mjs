// The flags of Vestibule's Node.js processes, in one place: `npm start` and `npm run admin`
// (deploy/node_start.mjs), the single executable (deploy/compile_node.mjs) and the tests.

/** Reads of the code itself: Node checks each module it loads. The single executable holds its own. */
const CODE_READS = ["./main.ts", "./package.json", "./src/*", "./static/*", "./node_modules/*"];

/**
 * Node's permission model as the server and the admin commands need it, on Node.js `major`.
 * Node.js 25 added a network permission, denied unless granted: it is granted whole, as Deno's
 * `--allow-net` without a list (the hosts are the operator's settings). Node.js 24 has none, and
 * refuses the flag.
 */
export function permissionFlags(major, { codeReads = true } = {}) {
  return [
    "--permission",
    ...(codeReads ? CODE_READS : []).map((path) => `--allow-fs-read=${path}`),
    "--allow-fs-read=./data",
    "--allow-fs-read=./data/*",
    "--allow-fs-write=./data",
    "--allow-fs-write=./data/*",
    "--allow-child-process",
    // The SecurityWarning for --allow-child-process, printed on every start (docs/permissions.md).
    "--disable-warning=PERM0002",
    // --allow-net is experimental there, and says so on every start.
    ...(major >= 25 ? ["--allow-net", "--disable-warning=ExperimentalWarning"] : []),
  ];
}

/**
 * The server's heap. The old generation as deno.json's start task sets it; the young one four
 * times Deno's 4 MiB a half: with 4, Node.js spent about twice the CPU per request (its garbage
 * collection) for 30 MiB less at peak (docs/benchmarks.md "The V8 flags").
 */
export const HEAP_FLAGS = ["--max-semi-space-size=16", "--heap-growing-percent=20"];

/** The server's: its heap, its permissions, and its modules loaded already stripped. */
export function serverFlags(major) {
  return [
    ...HEAP_FLAGS,
    ...permissionFlags(major),
    "--require",
    "./src/runtime/stripped_modules.cjs",
  ];
}
