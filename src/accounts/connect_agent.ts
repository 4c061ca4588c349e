// "Connect your agent" on /account: the workspace MCP address a person gives their agent, and
// how the common clients take it. The text is there without script; the copy buttons appear only
// when static/scripts/copy.js runs (the page's CSP allows our own script files, nothing inline).
import { type Html, html } from "../ui/html.ts";

/** How the /account page loads the copy buttons' script. */
export const COPY_SCRIPT = html`<script src="/assets/copy.js" defer></script>`;

/** The name the snippets give the server in the client's configuration. */
const SERVER_NAME = "vestibule";

interface Snippet {
  readonly id: string;
  readonly client: string;
  /** Where the snippet goes, in words. */
  readonly where: Html | string;
  readonly text: string;
}

/**
 * The formats as each client documents them: VS Code's `servers` with `"type": "http"`, Claude
 * Code's `claude mcp add --transport http <name> <url>`, Cursor's `mcpServers` with `url`, and
 * Claude Desktop, whose file takes only local commands, through `npx mcp-remote <url>`.
 */
function _snippets(mcpUrl: string): readonly Snippet[] {
  const json = (value: unknown) => JSON.stringify(value, null, 2);
  return [
    {
      id: "snippet-claude-code",
      client: "Claude Code",
      where: "Run in a terminal:",
      text: `claude mcp add --transport http ${SERVER_NAME} ${mcpUrl}`,
    },
    {
      id: "snippet-vscode",
      client: "VS Code",
      where: html`In <code>.vscode/mcp.json</code>:`,
      text: json({ servers: { [SERVER_NAME]: { type: "http", url: mcpUrl } } }),
    },
    {
      id: "snippet-cursor",
      client: "Cursor",
      where: html`In <code>.cursor/mcp.json</code> (or <code>~/.cursor/mcp.json</code>):`,
      text: json({ mcpServers: { [SERVER_NAME]: { url: mcpUrl } } }),
    },
    {
      id: "snippet-claude-desktop",
      client: "Claude Desktop",
      where: html`In <code>claude_desktop_config.json</code> (needs Node.js):`,
      text: json({
        mcpServers: { [SERVER_NAME]: { command: "npx", args: ["-y", "mcp-remote", mcpUrl] } },
      }),
    },
  ];
}

function _copyButton(target: string, what: string): Html {
  return html`
    <button type="button" class="button secondary copy" data-copy="${target}"
      data-what="${what}" aria-label="Copy ${what}" hidden>Copy</button>
  `;
}

/** The section itself; `apiUrl` is {api_url}. */
export function connectAgentSection(apiUrl: string): Html {
  const mcpUrl = `${apiUrl}/api/mcp`;
  return html`
    <section class="card" id="connect-agent" aria-labelledby="connect-agent-title">
      <h2 id="connect-agent-title">Connect your agent</h2>
      <p>Give your agent this address. The first time it connects, a page opens here: you sign
        in, choose the business and tick what the agent may do; steps that need an owner's
        approval wait on <a href="/approvals">Approvals</a> until an owner decides.</p>
      <p class="copyable"><span>Workspace MCP address:</span>
        <code id="mcp-url">${mcpUrl}</code> ${_copyButton("mcp-url", "the MCP address")}</p>
      ${// One client open (a one-liner), the others a click away: the page stays short.
      _snippets(mcpUrl).map((s, i) =>
        html`
          <details class="snippet" ${i === 0 ? "open" : ""}>
            <summary>${s.client}</summary>
            <p class="copyable"><span>${s.where}</span> ${_copyButton(
              s.id,
              `the ${s.client} configuration`,
            )}</p>
            <pre><code id="${s.id}">${s.text}</code></pre>
          </details>
        `
      )}
      <p id="copy-status" class="muted" role="status"></p>
    </section>
  `;
}
