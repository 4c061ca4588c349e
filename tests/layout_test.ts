// The layout's two rules that a move can break without any behaviour changing: what runs (the
// server, the admin task, the benchmarks, testkit/) never imports from tests/, and the files of
// src/ import one way, with no circle, type-only imports included (docs/architecture.md).
import assert from "node:assert/strict";

const ROOT = new URL("../", import.meta.url);

interface InfoModule {
  readonly specifier: string;
  readonly dependencies?: readonly {
    readonly code?: { readonly specifier: string };
    readonly type?: { readonly specifier: string };
  }[];
}

/** Every local module the entry points reach, with the local modules each imports. */
async function importGraph(entries: readonly string[]): Promise<Map<string, Set<string>>> {
  const graph = new Map<string, Set<string>>();
  for (const entry of entries) {
    const info = await new Deno.Command(Deno.execPath(), {
      args: ["info", "--json", "--lock=tests/test.lock", entry],
      cwd: ROOT,
      stdout: "piped",
      stderr: "piped",
    }).output();
    assert.ok(info.success, new TextDecoder().decode(info.stderr));
    const { modules } = JSON.parse(new TextDecoder().decode(info.stdout)) as {
      modules: InfoModule[];
    };
    for (const module of modules) {
      const from = _local(module.specifier);
      if (from === null) continue;
      const to = graph.get(from) ?? new Set<string>();
      for (const dependency of module.dependencies ?? []) {
        for (const target of [dependency.code?.specifier, dependency.type?.specifier]) {
          const local = target === undefined ? null : _local(target);
          if (local !== null) to.add(local);
        }
      }
      graph.set(from, to);
    }
  }
  return graph;
}

function _local(specifier: string): string | null {
  return specifier.startsWith(ROOT.href) ? specifier.slice(ROOT.href.length) : null;
}

async function _entries(): Promise<string[]> {
  const entries = ["main.ts", "src/operator/cli/cli.ts", "src/content/openapi_task.ts"];
  for (const folder of ["bench", "testkit"]) {
    for await (const file of Deno.readDir(new URL(`${folder}/`, ROOT))) {
      if (file.isFile && file.name.endsWith(".ts")) entries.push(`${folder}/${file.name}`);
    }
  }
  return entries.sort();
}

Deno.test("the layout's import rules hold", async (t) => {
  const graph = await importGraph(await _entries());

  await t.step("nothing that runs imports from tests/", () => {
    const crossings = [...graph]
      .filter(([from]) => !from.startsWith("tests/"))
      .flatMap(([from, to]) =>
        [...to].filter((f) => f.startsWith("tests/")).map((f) => `${from} -> ${f}`)
      );
    assert.deepEqual(crossings, []);
  });

  await t.step("the files of src/ import one way, with no circle", () => {
    const circle = _findCircle(graph, (file) => file.startsWith("src/"));
    assert.equal(circle, null, `an import circle: ${circle?.join(" -> ")}`);
  });
});

Deno.test("the circle finder finds a circle and passes a tree", () => {
  const graph = (edges: Record<string, string[]>) =>
    new Map(Object.entries(edges).map(([from, to]) => [from, new Set(to)]));
  const all = () => true;
  assert.deepEqual(_findCircle(graph({ a: ["b"], b: ["c"], c: ["a"] }), all), ["a", "b", "c", "a"]);
  assert.equal(_findCircle(graph({ a: ["b", "c"], b: ["c"], c: [] }), all), null);
});

/** A path that comes back to where it started, among the files `within` keeps; null: none. */
function _findCircle(
  graph: ReadonlyMap<string, ReadonlySet<string>>,
  within: (file: string) => boolean,
): string[] | null {
  const done = new Set<string>();
  const path: string[] = [];
  const visit = (file: string): string[] | null => {
    const at = path.indexOf(file);
    if (at !== -1) return [...path.slice(at), file];
    if (done.has(file)) return null;
    path.push(file);
    for (const next of graph.get(file) ?? []) {
      if (!within(next)) continue;
      const circle = visit(next);
      if (circle !== null) return circle;
    }
    path.pop();
    done.add(file);
    return null;
  };
  for (const file of [...graph.keys()].filter(within).sort()) {
    const circle = visit(file);
    if (circle !== null) return circle;
  }
  return null;
}
