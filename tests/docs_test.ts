// The repository explains itself: README.md and docs/ name no file outside it (a clone has
// nothing beside it), every relative Markdown link among them resolves, anchor included, and every
// file or folder of the repository they name (`src/…`, `tests/…`, …) exists.
import assert from "node:assert/strict";

const ROOT = new URL("../", import.meta.url);

async function _documents(): Promise<URL[]> {
  const docs: URL[] = [new URL("README.md", ROOT)];
  for await (const entry of Deno.readDir(new URL("docs/", ROOT))) {
    if (entry.isFile && entry.name.endsWith(".md")) docs.push(new URL(`docs/${entry.name}`, ROOT));
  }
  return docs.sort((a, b) => a.href.localeCompare(b.href));
}

const _name = (url: URL) => url.href.slice(ROOT.href.length);

/** The lines outside fenced code blocks. */
function _prose(text: string): string[] {
  let fenced = false;
  return text.split("\n").filter((line) => {
    if (/^\s*```/.test(line)) fenced = !fenced;
    return !fenced && !/^\s*```/.test(line);
  });
}

/** GitHub's heading anchors: lower case, punctuation dropped, spaces to `-`, repeats numbered. */
function _anchors(text: string): Set<string> {
  const seen = new Map<string, number>();
  const anchors = new Set<string>();
  for (const line of _prose(text)) {
    const heading = /^#{1,6}\s+(.*?)\s*$/.exec(line);
    if (!heading) continue;
    const slug = heading[1]!.toLowerCase().replace(/[^\p{L}\p{N} _-]/gu, "").replaceAll(" ", "-");
    const count = seen.get(slug) ?? 0;
    seen.set(slug, count + 1);
    anchors.add(count === 0 ? slug : `${slug}-${count}`);
  }
  return anchors;
}

Deno.test("README and docs/ name no file outside the repository", async (t) => {
  for (const doc of await _documents()) {
    await t.step(_name(doc), async () => {
      const text = await Deno.readTextFile(doc);
      // Any `../…` path, in a link, a code span or plain text.
      for (const [, path] of text.matchAll(/(?:^|[\s`(<"'])(\.\.\/[^\s`)>"']*)/g)) {
        const target = new URL(path!, doc);
        assert.ok(target.href.startsWith(ROOT.href), `${path} lies outside the repository`);
      }
    });
  }
});

Deno.test("every relative link in README and docs/ resolves, anchor included", async (t) => {
  for (const doc of await _documents()) {
    await t.step(_name(doc), async () => {
      const text = await Deno.readTextFile(doc);
      for (const line of _prose(text)) {
        // Inline links `[text](href)` and reference definitions `[name]: href`.
        const hrefs = [
          ...[...line.matchAll(/\]\(([^)\s]+)\)/g)].map((m) => m[1]!),
          ...[...line.matchAll(/^\s*\[[^\]]+\]:\s*(\S+)/g)].map((m) => m[1]!),
        ];
        for (const href of hrefs) {
          if (/^[a-z][a-z0-9+.-]*:/i.test(href)) continue; // https:, mailto:: not ours to check
          const target = new URL(href, doc);
          const file = new URL(target.pathname, target);
          let linked: string;
          try {
            linked = await Deno.readTextFile(file);
          } catch {
            assert.fail(`${href}: no such file in the repository`);
          }
          const anchor = decodeURIComponent(target.hash.slice(1));
          if (anchor !== "") {
            assert.ok(
              _anchors(linked).has(anchor),
              `${href}: no heading with the anchor #${anchor}`,
            );
          }
        }
      }
    });
  }
});

/** The folders whose paths the docs name, relative to the repository root. */
const TRACKED = ["src", "tests", "bench", "deploy", "examples", "static"];

/** Entries of .gitignore anchored at the root (`/tests/screenshots/`): made by runs, not cloned. */
async function _ignored(): Promise<string[]> {
  const text = await Deno.readTextFile(new URL(".gitignore", ROOT));
  return text.split("\n").filter((line) => line.startsWith("/")).map((line) => line.slice(1));
}

/** Whether `path` (relative to the root, `*` matching within one name) names something there. */
async function _exists(path: string): Promise<boolean> {
  const parts = path.split("/").filter((part) => part !== "");
  let candidates = [""];
  for (const part of parts) {
    const next: string[] = [];
    for (const dir of candidates) {
      if (!part.includes("*")) {
        next.push(`${dir}${part}/`);
        continue;
      }
      const pattern = new RegExp(`^${part.split("*").map(RegExp.escape).join(".*")}$`);
      try {
        for await (const entry of Deno.readDir(new URL(dir, ROOT))) {
          if (pattern.test(entry.name)) next.push(`${dir}${entry.name}/`);
        }
      } catch {
        // Not a folder: nothing below it.
      }
    }
    candidates = next;
  }
  for (const candidate of candidates) {
    try {
      await Deno.stat(new URL(candidate.slice(0, -1), ROOT));
      return true;
    } catch {
      // Try the next match.
    }
  }
  return false;
}

Deno.test("every src/ (and tests/, bench/, …) path named in README and docs/ exists", async (t) => {
  const ignored = await _ignored();
  const named = new RegExp(`(?<![\\w./-])((?:${TRACKED.join("|")})/[\\w.*/-]*)`, "g");
  for (const doc of await _documents()) {
    await t.step(_name(doc), async () => {
      const text = await Deno.readTextFile(doc);
      const missing: string[] = [];
      for (const [, found] of text.matchAll(named)) {
        const path = found!.replace(/[.,]+$/, ""); // a path ending a sentence
        if (ignored.some((prefix) => path.startsWith(prefix))) continue;
        if (!(await _exists(path))) missing.push(path);
      }
      assert.deepEqual(missing, [], `${_name(doc)} names paths the repository does not have`);
    });
  }
});
