// Reading MCP over the wire in tests, in process or over HTTP: server-sent events into the
// messages they carry, and tools/list followed page by page.
// deno-lint-ignore-file no-explicit-any -- messages are arbitrary JSON the tests pick apart

/** Each event's `data` lines, joined, parsed as one JSON-RPC message (spec §4 rule 5). */
export function parseSse(text: string): Record<string, any>[] {
  const messages: Record<string, any>[] = [];
  for (const block of text.replaceAll("\r\n", "\n").split("\n\n")) {
    const data = block.split("\n").filter((line) => line.startsWith("data:"))
      .map((line) => line.slice(5).replace(/^ /, ""));
    if (data.length > 0) messages.push(JSON.parse(data.join("\n")));
  }
  return messages;
}

/** A tools/list request for the page at `cursor` (the first page without one). */
export function toolsList(cursor: string | undefined, id: string | number = 1) {
  return {
    jsonrpc: "2.0",
    id,
    method: "tools/list",
    ...(cursor === undefined ? {} : { params: { cursor } }),
  };
}

/**
 * Every tool of an endpoint, following nextCursor to the end: `page` asks for the page at a
 * cursor (the first page without one) and returns that page's `result`.
 */
export async function listEveryTool(
  page: (cursor: string | undefined) => Promise<Record<string, any>>,
): Promise<{ tools: Record<string, any>[]; pages: number }> {
  const tools: Record<string, any>[] = [];
  let cursor: string | undefined;
  let pages = 0;
  do {
    const result = await page(cursor);
    tools.push(...result.tools);
    cursor = result.nextCursor;
    pages++;
  } while (cursor !== undefined);
  return { tools, pages };
}
