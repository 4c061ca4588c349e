// The agent connection guide: one source (static/auth/connection_guide.json) rendered as the
// plain text of {auth_url}/llms.txt, the page {auth_url}/agents and the get_connection_guide
// result, so the three can never disagree.
import * as v from "valibot";
import type { Config } from "../config/config.ts";
import { fillPlaceholders, readTemplate, STATIC_DIR, TemplateError } from "../content/templates.ts";
import { html, page, safeHref } from "../ui/html.ts";

const UrlSchema = v.pipe(v.string(), v.url());

export const ConnectionGuideSchema = v.strictObject({
  title: v.string(),
  summary: v.string(),
  workspaceMcpUrl: UrlSchema,
  protectedResourceMetadataUrl: UrlSchema,
  authorizationServerMetadataUrl: UrlSchema,
  issuer: UrlSchema,
  initialScope: v.literal("app.access"),
  steps: v.array(v.strictObject({ title: v.string(), text: v.string() })),
  rules: v.array(v.string()),
  links: v.strictObject({
    agents: UrlSchema,
    signUp: UrlSchema,
    connectionGuideText: UrlSchema,
    onboardingMcp: UrlSchema,
    developers: UrlSchema,
    agentInstructions: UrlSchema,
  }),
  nextAction: v.strictObject({
    action: v.string(),
    url: UrlSchema,
    scope: v.string(),
    description: v.string(),
  }),
});
export type ConnectionGuide = v.InferOutput<typeof ConnectionGuideSchema>;

type Origins = Pick<Config, "baseUrl" | "authUrl" | "apiUrl">;

const SOURCE = "auth/connection_guide.json";

/**
 * Reads the guide template once at start-up and fills in the configured origins; a guide
 * that cannot be read or parsed stops start-up with a TemplateError naming the file.
 */
export async function loadConnectionGuide(config: Origins): Promise<ConnectionGuide> {
  return _parse(await readTemplate(STATIC_DIR, SOURCE, config));
}

export function parseConnectionGuide(template: string, config: Origins): ConnectionGuide {
  return _parse(fillPlaceholders(template, config));
}

function _parse(text: string): ConnectionGuide {
  const fail = (reason: string) => new TemplateError(`static/${SOURCE}`, reason);
  let json: unknown;
  try {
    // The origins are validated URLs without quotes or backslashes, so they are safe in JSON.
    json = JSON.parse(text);
  } catch (error) {
    throw fail(`not JSON (${(error as Error).message})`);
  }
  const parsed = v.safeParse(ConnectionGuideSchema, json);
  if (!parsed.success) {
    const issue = parsed.issues[0];
    throw fail(`${v.getDotPath(issue) ?? "(root)"}: ${issue.message}`);
  }
  return parsed.output;
}

/** The plain-text guide ({auth_url}/llms.txt and the tool's text block). */
export function renderGuideText(guide: ConnectionGuide): string {
  const lines = [
    `# ${guide.title}`,
    "",
    guide.summary,
    "",
    `Workspace MCP endpoint: ${guide.workspaceMcpUrl}`,
    `Protected-resource metadata: ${guide.protectedResourceMetadataUrl}`,
    `Authorization-server metadata: ${guide.authorizationServerMetadataUrl}`,
    `Issuer: ${guide.issuer}`,
    `Scope to start with: ${guide.initialScope}`,
    "",
    "## Steps",
    "",
    ...guide.steps.map((step, i) => `${i + 1}. ${step.title}. ${step.text}`),
    "",
    "## Rules",
    "",
    ...guide.rules.map((rule) => `- ${rule}`),
    "",
    "## Links",
    "",
    `- Agent setup guide (HTML): ${guide.links.agents}`,
    `- Sign up: ${guide.links.signUp}`,
    `- This guide as text: ${guide.links.connectionGuideText}`,
    `- Onboarding MCP (no credentials): ${guide.links.onboardingMcp}`,
    `- Developer reference: ${guide.links.developers}`,
    `- Product guidance for agents: ${guide.links.agentInstructions}`,
    "",
    "## Next action",
    "",
    `${guide.nextAction.action}: ${guide.nextAction.description}`,
    "",
  ];
  return lines.join("\n");
}

/** The HTML guide ({auth_url}/agents). */
export function renderGuidePage(guide: ConnectionGuide): string {
  const link = (href: string, label: string) => {
    const safe = safeHref(href);
    return safe === null ? label : html`<a href="${safe}">${label}</a>`;
  };
  const body = html`
    <header>
      <p>${link(guide.links.developers, "Vestibule developer reference")}</p>
    </header>
    <main>
      <h1>${guide.title}</h1>
      <p>${guide.summary}</p>
      <h2>Where to connect</h2>
      <dl>
        <dt>Workspace MCP endpoint</dt>
        <dd><code>${guide.workspaceMcpUrl}</code></dd>
        <dt>Protected-resource metadata</dt>
        <dd>${link(guide.protectedResourceMetadataUrl, guide.protectedResourceMetadataUrl)}</dd>
        <dt>Authorization-server metadata</dt>
        <dd>${link(guide.authorizationServerMetadataUrl, guide.authorizationServerMetadataUrl)}</dd>
        <dt>Issuer</dt>
        <dd><code>${guide.issuer}</code></dd>
        <dt>Scope to start with</dt>
        <dd><code>${guide.initialScope}</code></dd>
      </dl>
      <h2>Steps</h2>
      <ol>${guide.steps.map((step) =>
        html`<li><strong>${step.title}.</strong> ${step.text}</li>`
      )}</ol>
      <h2>Rules</h2>
      <ul>${guide.rules.map((rule) => html`<li>${rule}</li>`)}</ul>
      <h2>Next action</h2>
      <p><code>${guide.nextAction.action}</code>: ${guide.nextAction.description}</p>
      <h2>Links</h2>
      <ul>
        <li>${link(guide.links.signUp, "Sign up")}</li>
        <li>${link(guide.links.connectionGuideText, "This guide as plain text")}</li>
        <li>${link(
          guide.links.onboardingMcp,
          "Onboarding MCP endpoint",
        )} (POST, no credentials)</li>
        <li>${link(guide.links.agentInstructions, "Product guidance for agents")}</li>
      </ul>
    </main>
  `;
  return page({ title: guide.title, body, stylesheet: "/assets/style.css" });
}
