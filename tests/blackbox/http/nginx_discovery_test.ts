// The discovery documents behind the documented nginx configuration (deploy/nginx.conf): its
// `upstream` and `location /` blocks as written, run by the real nginx in front of the server,
// pass the media types, CORS, caching, strong ETags and 304s through untouched. Skipped with a
// message when nginx is not installed (`apt-get install nginx-light`).
import assert from "node:assert/strict";
import { serve } from "../../../src/server.ts";
import { ROOT } from "../support/main_process.ts";
import { createTestApp } from "../support/harness.ts";
import { freePorts } from "../../../testkit/ports.ts";

const NGINX = ["/usr/sbin/nginx", "/usr/bin/nginx"].find((path) => {
  try {
    return Deno.statSync(path).isFile;
  } catch {
    return false;
  }
});

/** deploy/nginx.conf's blocks, for loopback ports and plain HTTP, as its comments say to. */
async function testConfig(dir: string, upstreamPort: number, ports: number[]): Promise<string> {
  const deployed = await Deno.readTextFile(new URL("deploy/nginx.conf", ROOT));
  const block = (opening: RegExp) => {
    const found = opening.exec(deployed);
    assert.ok(found, `deploy/nginx.conf has ${opening}`);
    // The blocks hold no braces of their own (nor in their comments).
    return deployed.slice(found.index, deployed.indexOf("}", found.index) + 1);
  };
  const upstream = block(/^upstream vestibule \{/m)
    .replace(/server 127\.0\.0\.1:\d+;/, `server 127.0.0.1:${upstreamPort};`);
  // The file's own advice for public URLs on a port other than 443.
  const location = block(/^\s*location \/ \{/m)
    .replace("proxy_set_header Host $host;", "proxy_set_header Host $http_host;");
  return `daemon off;
master_process off;
pid ${dir}/nginx.pid;
error_log stderr warn;
events {}
http {
  access_log off;
  # An operator's http {} that compresses every type (Debian's nginx.conf has gzip on): nginx
  # would make the ETags of what it compresses weak, unless the location turns it off.
  gzip on;
  gzip_types *;
  gzip_min_length 1;
  client_body_temp_path ${dir}/body;
  proxy_temp_path ${dir}/proxy;
  fastcgi_temp_path ${dir}/fastcgi;
  uwsgi_temp_path ${dir}/uwsgi;
  scgi_temp_path ${dir}/scgi;
  ${upstream}
  server {
    ${ports.map((port) => `listen 127.0.0.1:${port};`).join("\n    ")}
    ${location}
  }
}
`;
}

/** The headers a discovery answer carries, as a client reads them. */
function discoveryHeaders(response: Response): Record<string, string | null> {
  return Object.fromEntries(
    [
      "Content-Type",
      "Cache-Control",
      "ETag",
      "Access-Control-Allow-Origin",
      "Access-Control-Allow-Methods",
      "Access-Control-Allow-Headers",
      "Access-Control-Expose-Headers",
      "Content-Encoding",
    ].map((name) => [name, response.headers.get(name)]),
  );
}

Deno.test({
  name: "behind deploy/nginx.conf the catalog and the cards keep their headers, ETags and 304s",
  ignore: NGINX === undefined,
  async fn() {
    const [base, auth, api, listen] = freePorts(4);
    const app = await createTestApp({
      VESTIBULE_BASE_URL: `http://127.0.0.1:${base}`,
      VESTIBULE_AUTH_URL: `http://127.0.0.1:${auth}`,
      VESTIBULE_API_URL: `http://127.0.0.1:${api}`,
      VESTIBULE_LISTEN: `127.0.0.1:${listen}`,
      VESTIBULE_TRUST_PROXY: "on",
    });
    const server = serve(app.config, app.handler, (line) => app.logs.push(line));
    const dir = await Deno.makeTempDir();
    await Deno.writeTextFile(
      `${dir}/nginx.conf`,
      await testConfig(dir, listen!, [base!, auth!, api!]),
    );
    const nginx = new Deno.Command(NGINX!, {
      args: ["-p", dir, "-c", `${dir}/nginx.conf`],
      stdout: "null",
      stderr: "piped",
    }).spawn();
    try {
      // Ready once it answers (a readiness wait, not a timing assertion).
      for (let tries = 0;; tries++) {
        const up = await fetch(`${app.config.baseUrl}/health`).then(
          (r) => r.body?.cancel().then(() => true),
          () => false,
        );
        if (up) break;
        assert.ok(tries < 200, "nginx did not start");
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
      for (
        const [url, type] of [
          [`${app.config.baseUrl}/.well-known/ai-catalog.json`, "application/ai-catalog+json"],
          [`${app.config.authUrl}/mcp/server-card`, "application/mcp-server-card+json"],
          [`${app.config.apiUrl}/api/mcp/server-card`, "application/mcp-server-card+json"],
        ] as const
      ) {
        for (const encoding of ["identity", "gzip"]) {
          const headers = { Accept: type, "Accept-Encoding": encoding };
          const proxied = await fetch(url, { headers });
          // The server's own answer to the same request, in process (fetch cannot set Host).
          const own = await app.handler(
            new Request(url, { headers: { ...headers, Host: new URL(url).host } }),
            { clientAddress: "127.0.0.1" },
          );
          assert.equal(proxied.status, 200, url);
          assert.deepEqual(
            discoveryHeaders(proxied),
            discoveryHeaders(own),
            `${url} (${encoding})`,
          );
          assert.match(proxied.headers.get("ETag") ?? "", /^"[^"]+"$/, "still strong");
          assert.deepEqual(await proxied.json(), await own.json());
          const again = await fetch(url, {
            headers: { ...headers, "If-None-Match": proxied.headers.get("ETag")! },
          });
          await again.body?.cancel();
          assert.equal(again.status, 304, `${url} revalidated through nginx`);
        }
        const preflight = await fetch(url, {
          method: "OPTIONS",
          headers: { Origin: "https://agent.example", "Access-Control-Request-Method": "GET" },
        });
        await preflight.body?.cancel();
        assert.equal(preflight.status, 204);
        assert.equal(preflight.headers.get("Access-Control-Expose-Headers"), "ETag");
      }
    } finally {
      try {
        nginx.kill("SIGTERM");
      } catch { /* it had stopped already; its stderr says why */ }
      const { stderr } = await nginx.output().catch(() => ({ stderr: new Uint8Array() }));
      if (stderr.length > 0) console.warn(new TextDecoder().decode(stderr));
      await server.shutdown();
      await app.close();
      await Deno.remove(dir, { recursive: true });
    }
  },
});

if (NGINX === undefined) {
  console.warn("nginx_discovery_test: nginx not found; deploy/nginx.conf was not run");
}
