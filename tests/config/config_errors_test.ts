// Every bad configuration value stops start-up with one ConfigError line that names the variable
// or flag and says what is wrong with it.
import assert from "node:assert/strict";
import { resolveConfig } from "../../src/config/config.ts";
import { ConfigError } from "../../src/config/settings.ts";

Deno.test("a bad value is one ConfigError line naming the variable or flag", async (t) => {
  const cases: [string, Record<string, string>, string[], RegExp][] = [
    [
      "not a URL",
      { VESTIBULE_BASE_URL: "localhost" },
      [],
      /^VESTIBULE_BASE_URL="localhost": must be an absolute URL$/,
    ],
    [
      "ftp",
      { VESTIBULE_AUTH_URL: "ftp://x.example" },
      [],
      /^VESTIBULE_AUTH_URL=.*must use http or https$/,
    ],
    [
      "path",
      { VESTIBULE_API_URL: "https://api.example.com/v1" },
      [],
      /^VESTIBULE_API_URL=.*without path/,
    ],
    [
      "http off loopback",
      { VESTIBULE_API_URL: "http://api.example.com" },
      [],
      /^VESTIBULE_API_URL=.*https unless/,
    ],
    ["listen", { VESTIBULE_LISTEN: "8000" }, [], /^VESTIBULE_LISTEN="8000": must be host:port/],
    ["port", { VESTIBULE_LISTEN: "127.0.0.1:70000" }, [], /^VESTIBULE_LISTEN=.*at most 65535$/],
    [
      "admin on a public port",
      { VESTIBULE_ADMIN_LISTEN: "127.0.0.1:8001" },
      [],
      /^VESTIBULE_ADMIN_LISTEN="127.0.0.1:8001": port 8001 serves the public origins/,
    ],
    [
      "admin on a listen port",
      { VESTIBULE_LISTEN: "0.0.0.0:9000", VESTIBULE_ADMIN_LISTEN: "10.0.0.5:9000" },
      [],
      /^VESTIBULE_ADMIN_LISTEN=.*port 9000 serves the public origins/,
    ],
    [
      "an operator API without the operator listener",
      { VESTIBULE_ADMIN_TOKEN_FILE: "data/admin-token" },
      [],
      /^VESTIBULE_ADMIN_TOKEN_FILE needs VESTIBULE_ADMIN_LISTEN: the operator API is served on the operator listener$/,
    ],
    [
      "two admin addresses",
      { VESTIBULE_ADMIN_LISTEN: "127.0.0.1:9100,127.0.0.1:9101" },
      [],
      /^VESTIBULE_ADMIN_LISTEN=.*must be one host:port$/,
    ],
    [
      "mail",
      { VESTIBULE_MAIL: "smtp" },
      [],
      /^VESTIBULE_MAIL="smtp": must be log, file:PATH, smtp:\/\/\[USER:PASSWORD@\]HOST\[:PORT\] or smtps:\/\/…$/,
    ],
    [
      "switch",
      { VESTIBULE_TRUST_PROXY: "maybe" },
      [],
      /^VESTIBULE_TRUST_PROXY="maybe": must be on\/off, yes\/no, true\/false, 1\/0$/,
    ],
    [
      "mcp response",
      { VESTIBULE_MCP_RESPONSE: "xml" },
      [],
      /^VESTIBULE_MCP_RESPONSE=.*json or sse$/,
    ],
    [
      "page size",
      { VESTIBULE_MCP_PAGE_SIZE: "0" },
      [],
      /^VESTIBULE_MCP_PAGE_SIZE="0": must be at least 1$/,
    ],
    [
      "trusted origin",
      { VESTIBULE_TRUSTED_ORIGINS: "https://ok.example, nope" },
      [],
      /^VESTIBULE_TRUSTED_ORIGINS=/,
    ],
    ["empty data", { VESTIBULE_DATA: "" }, [], /^VESTIBULE_DATA="": must not be empty$/],
    [
      "database URL without a database, password masked",
      { VESTIBULE_DATA: "postgres://app:s3cret@db.example" },
      [],
      /^VESTIBULE_DATA="postgres:\/\/app:\*\*\*@db\.example": must name a user, a host and a database: /,
    ],
    [
      "database URL with an unknown sslmode",
      { VESTIBULE_DATA: "postgresql://app:s3cret@db.example/vestibule?sslmode=prefer" },
      [],
      /^VESTIBULE_DATA="postgresql:\/\/app:\*\*\*@db\.example\/vestibule\?sslmode=prefer": takes one query parameter, sslmode=disable, require or verify-full$/,
    ],
    [
      "database password file without a database URL",
      { VESTIBULE_DATA_PASSWORD_FILE: "data/pg-password" },
      [],
      /^VESTIBULE_DATA_PASSWORD_FILE needs VESTIBULE_DATA=postgres:\/\/USER@HOST\/DATABASE$/,
    ],
    [
      "database pool size",
      { VESTIBULE_DATA_POOL_SIZE: "0" },
      [],
      /^VESTIBULE_DATA_POOL_SIZE="0": must be at least 1$/,
    ],
    [
      "connection cap",
      { VESTIBULE_MAX_CONNECTIONS: "0" },
      [],
      /^VESTIBULE_MAX_CONNECTIONS="0": must be at least 1$/,
    ],
    [
      "deadline unit",
      { VESTIBULE_READ_TIMEOUT: "10s" },
      [],
      /^VESTIBULE_READ_TIMEOUT="10s": must be a number of seconds$/,
    ],
    [
      "deadline too short",
      {},
      ["--idle-timeout=0.05"],
      /^--idle-timeout="0.05": must be at least 0.1$/,
    ],
    [
      "rate limit syntax",
      { VESTIBULE_RATE_LIMITS: "token=fast" },
      [],
      /^VESTIBULE_RATE_LIMITS="token=fast": must be on, off, or NAME=COUNT\[\/MINUTES\]\[:BURST\]/,
    ],
    [
      "rate limit name",
      { VESTIBULE_RATE_LIMITS: "tokens=5" },
      [],
      /^VESTIBULE_RATE_LIMITS="tokens=5": names a rate limit other than onboarding, registration,/,
    ],
    [
      "rate limit of zero",
      { VESTIBULE_RATE_LIMITS: "mail=0" },
      [],
      /^VESTIBULE_RATE_LIMITS="mail=0": every rate must be above 0/,
    ],
    ["flag value", {}, ["--base-url=ftp://x"], /^--base-url="ftp:\/\/x": must use http or https$/],
    [
      "unknown flag",
      {},
      ["--base-ur=http://localhost:1"],
      /^unknown flag --base-ur \(expected: --base-url\)$/,
    ],
    ["a bare flag that is no switch", {}, ["--data"], /^--data needs a value: --data=VALUE$/],
    [
      "a value after a space, not after =",
      {},
      ["--mail", "smtp://u:hunter2@mail.example.com"],
      /^unexpected argument "smtp:\/\/u:\*\*\*@mail.example.com": a flag takes its value after =, as in --mail=VALUE$/,
    ],
    [
      "identical origins",
      {
        VESTIBULE_BASE_URL: "https://example.com",
        VESTIBULE_AUTH_URL: "https://example.com",
        VESTIBULE_API_URL: "https://example.com",
      },
      [],
      /^VESTIBULE_BASE_URL="https:\/\/example.com" and VESTIBULE_AUTH_URL="https:\/\/example.com" share the host example.com:443: each of the three origins needs its own host name or port$/,
    ],
    [
      "origins on one host and port",
      { VESTIBULE_AUTH_URL: "http://localhost:8002" },
      [],
      /^VESTIBULE_AUTH_URL="http:\/\/localhost:8002" and VESTIBULE_API_URL="http:\/\/localhost:8002" share the host localhost:8002:/,
    ],
    [
      "origins differing only in scheme",
      { VESTIBULE_BASE_URL: "https://www.example.com", VESTIBULE_API_URL: "http://localhost:8001" },
      [],
      /and VESTIBULE_API_URL="http:\/\/localhost:8001" share the host localhost:8001:/,
    ],
  ];
  for (const [name, env, args, message] of cases) {
    await t.step(name, () => {
      assert.throws(() => resolveConfig(env, args), (error: unknown) => {
        assert.ok(error instanceof ConfigError);
        assert.match(error.message, message);
        assert.ok(!error.message.includes("\n"));
        return true;
      });
    });
  }
});
