/**
 * The legacy handshake a real client makes with the gateway section's tiny upstream (initialize,
 * then notifications/initialized), through whichever client the caller posts with: the bench's
 * fetch, or the floor's own client on either runtime. Gives the session's id.
 */
export const LEGACY_VERSION = "2025-11-25";

/** Posts one JSON-RPC message to the upstream, in `session` when given. */
export type Post = (body: string, session?: string) => Promise<Response>;

export async function openLegacySession(post: Post, clientName: string): Promise<string> {
  const opened = await post(JSON.stringify({
    jsonrpc: "2.0",
    id: 0,
    method: "initialize",
    params: {
      protocolVersion: LEGACY_VERSION,
      capabilities: {},
      clientInfo: { name: clientName, version: "1" },
    },
  }));
  await opened.body?.cancel();
  const session = opened.headers.get("mcp-session-id");
  if (opened.status !== 200 || session === null) {
    throw new Error(`tiny upstream initialize: ${opened.status}, no session id`);
  }
  const initialized = await post(
    JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }),
    session,
  );
  await initialized.body?.cancel();
  if (initialized.status !== 202) {
    throw new Error(`tiny upstream notifications/initialized: ${initialized.status}`);
  }
  return session;
}
