// What keeps the server running on Node.js as well as Deno, checked on the source so that a
// slip fails here, not only where a Node.js binary is at hand: only src/runtime/ speaks to Deno
// (Deno KV's key type aside), and no class uses parameter properties, which Node.js's type
// stripping refuses.
import assert from "node:assert/strict";

const ROOT = new URL("../", import.meta.url);

async function* _sources(folder: URL): AsyncGenerator<{ path: string; text: string }> {
  for await (const entry of Deno.readDir(folder)) {
    const url = new URL(entry.name + (entry.isDirectory ? "/" : ""), folder);
    if (entry.isDirectory) yield* _sources(url);
    else if (entry.name.endsWith(".ts")) {
      yield { path: url.pathname.slice(ROOT.pathname.length), text: await Deno.readTextFile(url) };
    }
  }
}

/** The code of a file without its comments (line and block), so that prose may name Deno. */
function _code(text: string): string {
  return text.replace(/\/\*[\s\S]*?\*\//g, "").replace(/(^|[^:"'`])\/\/.*$/gm, "$1");
}

const DENO_USE = /\bDeno\.(?!Kv\w*\b)\w+/;
/** A parameter of a constructor that starts with a modifier: `readonly url: string`. */
const PARAMETER_PROPERTY =
  /constructor\s*\((?:[^)]*,)?\s*(?:(?:readonly|private|public|protected|override)\s+)+\w+\s*[?:]/;

Deno.test("only src/runtime/ speaks to Deno, and no class has parameter properties", async () => {
  const found: string[] = [];
  const files = [{ path: "main.ts", text: await Deno.readTextFile(new URL("main.ts", ROOT)) }];
  for await (const file of _sources(new URL("src/", ROOT))) files.push(file);
  for (const { path, text } of files) {
    const code = _code(text);
    if (!path.startsWith("src/runtime/") && DENO_USE.test(code)) {
      found.push(`${path}: ${code.match(DENO_USE)![0]}`);
    }
    if (PARAMETER_PROPERTY.test(code)) found.push(`${path}: a parameter property`);
  }
  assert.deepEqual(found, []);
});

Deno.test("the checks find what they look for", () => {
  assert.ok(DENO_USE.test(_code("const x = Deno.env.get('A');")));
  assert.ok(!DENO_USE.test(_code("// Deno.serve answers\nconst k = key as Deno.KvKey;")));
  assert.ok(PARAMETER_PROPERTY.test("constructor(message: string, readonly url: string) {"));
  assert.ok(PARAMETER_PROPERTY.test("constructor(private readonly kind: string) {"));
  assert.ok(!PARAMETER_PROPERTY.test("constructor(message: string, url: string) {"));
  assert.ok(!PARAMETER_PROPERTY.test("constructor(scopes: readonly string[] = []) {"));
});
