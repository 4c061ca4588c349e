import assert from "node:assert/strict";
import * as v from "valibot";
import { createToolRegistry, describeTool } from "../../src/mcp/registry.ts";
import { defineTool } from "../../src/mcp/tool.ts";
import { echoTool, TEST_TOOLS } from "./fixtures.ts";

const annotations = { readOnlyHint: true };

Deno.test("tool registry", async (t) => {
  await t.step("descriptions follow catalogue order and carry no $schema", () => {
    const registry = createToolRegistry(TEST_TOOLS, { pageSize: 20 });
    assert.deepEqual(registry.descriptions.map((d) => d.name), TEST_TOOLS.map((tool) => tool.name));
    for (const description of registry.descriptions) {
      assert.equal("$schema" in description.inputSchema, false);
      assert.equal("$schema" in (description.outputSchema ?? {}), false);
    }
  });

  await t.step("one page when the catalogue fits, without nextCursor", () => {
    const registry = createToolRegistry(TEST_TOOLS, { pageSize: TEST_TOOLS.length });
    const page = registry.page(undefined)!;
    assert.equal(page.tools.length, TEST_TOOLS.length);
    assert.equal("nextCursor" in page, false);
    assert.deepEqual(registry.pages, [page]);
  });

  await t.step("find returns the tool by name", () => {
    const registry = createToolRegistry(TEST_TOOLS, { pageSize: 2 });
    assert.equal(registry.find("echo"), echoTool);
    assert.equal(registry.find("ECHO"), undefined);
  });

  const bad = [
    {
      name: "a duplicate name",
      tools: [echoTool, echoTool],
      error: /defined twice/,
    },
    {
      name: "an invalid name",
      tools: [{ ...echoTool, name: "has space" }],
      error: /is invalid/,
    },
    {
      name: "a non-object input schema",
      tools: [defineTool({ ...echoTool, input: v.string() as never })],
      error: /echo input schema must be an object schema/,
    },
  ];
  for (const c of bad) {
    await t.step(`${c.name} is refused at start-up`, () => {
      assert.throws(() => createToolRegistry(c.tools, { pageSize: 2 }), c.error);
    });
  }

  await t.step("a check valibot cannot express is left out of the JSON Schema", () => {
    const tool = defineTool<void, { n: number }, { n: number }>({
      name: "even",
      title: "Even",
      description: "Takes an even number.",
      input: v.object({ n: v.pipe(v.number(), v.check((n) => n % 2 === 0, "must be even")) }),
      output: v.object({ n: v.number() }),
      annotations,
      handler: (args) => Promise.resolve(args),
    });
    assert.deepEqual(describeTool(tool).inputSchema, {
      type: "object",
      properties: { n: { type: "number" } },
      required: ["n"],
    });
  });

  await t.step("schemas are JSON Schema 2020-12, the default dialect (no $schema)", () => {
    const tool = defineTool<void, { at: [number, number] }, { at: [number, number] }>({
      name: "point",
      title: "Point",
      description: "Takes a coordinate pair.",
      input: v.object({ at: v.tuple([v.number(), v.number()]) }),
      output: v.object({ at: v.tuple([v.number(), v.number()]) }),
      annotations,
      handler: (args) => Promise.resolve(args),
    });
    const at = {
      type: "array",
      prefixItems: [{ type: "number" }, { type: "number" }],
      minItems: 2,
    };
    const expected = { type: "object", properties: { at }, required: ["at"] };
    assert.deepEqual(describeTool(tool).inputSchema, expected);
    assert.deepEqual(describeTool(tool).outputSchema, expected);
  });
});
