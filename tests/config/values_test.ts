// The switch words the code accepts are exactly those docs/configuration.md lists.
import assert from "node:assert/strict";
import { resolveConfig } from "../../src/config/config.ts";
import { ConfigError } from "../../src/config/settings.ts";
import { SWITCH_WORDS } from "../../src/config/values.ts";

/** The `on`/`off` pairs of the sentence "Switches accept …" in docs/configuration.md. */
async function documentedSwitchWords(): Promise<{ on: string[]; off: string[] }> {
  const doc = await Deno.readTextFile(new URL("../../docs/configuration.md", import.meta.url));
  const sentence = /Switches accept ([^.]*)\./.exec(doc.replace(/\s+/g, " "));
  assert.ok(sentence, 'docs/configuration.md has no sentence "Switches accept …"');
  const pairs = [...sentence[1]!.matchAll(/`([^`]+)`\/`([^`]+)`/g)];
  assert.ok(pairs.length > 0, `no \`on\`/\`off\` pairs in "${sentence[0]}"`);
  return { on: pairs.map((p) => p[1]!), off: pairs.map((p) => p[2]!) };
}

Deno.test("every switch word docs/configuration.md lists is accepted, and no other", async (t) => {
  const documented = await documentedSwitchWords();
  assert.deepEqual(documented, { on: [...SWITCH_WORDS.on], off: [...SWITCH_WORDS.off] });
  for (
    const [word, value] of [
      ...documented.on.map((word) => [word, true] as const),
      ...documented.off.map((word) => [word, false] as const),
    ]
  ) {
    await t.step(
      `${word} turns a switch ${value ? "on" : "off"}, as a variable and as a flag`,
      () => {
        assert.equal(resolveConfig({ VESTIBULE_TRUST_PROXY: word }).trustProxy, value);
        assert.equal(resolveConfig({}, [`--demo=${word}`]).demo, value);
        assert.equal(resolveConfig({ VESTIBULE_DEMO: word.toUpperCase() }).demo, value, "any case");
      },
    );
  }
});

Deno.test("a word that is no switch word is refused, naming the accepted ones", () => {
  assert.throws(
    () => resolveConfig({}, ["--demo=maybe"]),
    new ConfigError('--demo="maybe": must be on/off, yes/no, true/false, 1/0'),
  );
  assert.equal(resolveConfig({}, ["--demo"]).demo, true, "a bare switch is on");
});
