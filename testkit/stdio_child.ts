/**
 * The source of a stdio MCP server in a few lines, for tests that start one as a child
 * (`deno run --no-lock FILE`): it reads newline-delimited JSON-RPC from stdin and answers each
 * request through `answers`, a chain of `if (…) { … } else if (…) { … }` over `message` that may
 * call `reply(result)` or `write(message)`; any other method is -32601.
 */
export function stdioChildScript(answers: string): string {
  return `
const encoder = new TextEncoder();
const write = (message) => Deno.stdout.writeSync(encoder.encode(JSON.stringify(message) + "\\n"));
let buffer = "";
for await (const chunk of Deno.stdin.readable.pipeThrough(new TextDecoderStream())) {
  buffer += chunk;
  let end;
  while ((end = buffer.indexOf("\\n")) !== -1) {
    const message = JSON.parse(buffer.slice(0, end));
    buffer = buffer.slice(end + 1);
    const reply = (result) => write({ jsonrpc: "2.0", id: message.id, result });
    if (message.id === undefined) continue;
    ${answers.trim()} else {
      write({ jsonrpc: "2.0", id: message.id, error: { code: -32601, message: "Method not found" } });
    }
  }
}
`;
}
