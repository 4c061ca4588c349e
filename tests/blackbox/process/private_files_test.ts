// What Vestibule writes holds secrets: the store (the signing key's private half) and the mail
// outbox (live sign-in links). A real start from a fresh copy, under the usual umask 022.
import assert from "node:assert/strict";
import {
  copyProject,
  mainCommand,
  originsEnv,
  startTaskFlags,
  startup,
} from "../support/main_process.ts";
import { denoOnly } from "../support/server_runtime.ts";

async function modeOf(path: string): Promise<string> {
  return ((await Deno.stat(path)).mode! & 0o777).toString(8);
}

Deno.test({
  name: "a fresh start makes data/ 0700 and the store and outbox 0600; a too-open one is refused",
  ignore: Deno.build.os === "windows" ||
    denoOnly(
      "checks the modes of the Deno KV file and its companions (node_binary_test checks the SQLite file's)",
    ),
  async fn(t) {
    const flags = await startTaskFlags();
    const dir = await copyProject();
    const env = { ...originsEnv(), VESTIBULE_MAIL: "file:data/outbox.jsonl" };
    const start = () => mainCommand(flags, env, { cwd: dir, umask: "022" });
    try {
      await t.step("a fresh clone without data/ starts, owner-only", async () => {
        const child = start().spawn();
        const stdout = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
        const stderr = new Response(child.stderr).text();
        let output = "";
        while (!output.includes('"message":"listening"')) {
          const { value, done } = await stdout.read();
          if (done) {
            const { code } = await child.status;
            assert.fail(`exited ${code} before listening:\n${output}${await stderr}`);
          }
          output += value;
        }
        try {
          // While it runs, SQLite keeps its -wal and -shm files beside the store.
          const paths = ["vestibule.kv", "vestibule.kv-wal", "vestibule.kv-shm", "outbox.jsonl"];
          const modes: Record<string, string> = { data: await modeOf(`${dir}/data`) };
          for (const name of paths) modes[name] = await modeOf(`${dir}/data/${name}`);
          assert.deepEqual(modes, {
            "data": "700",
            "vestibule.kv": "600",
            "vestibule.kv-wal": "600",
            "vestibule.kv-shm": "600",
            "outbox.jsonl": "600",
          });
        } finally {
          child.kill("SIGTERM");
          await stdout.cancel();
          assert.equal((await child.status).code, 0, await stderr);
        }
      });

      const cases = [
        {
          file: "data/vestibule.kv",
          line: 'vestibule: cannot open VESTIBULE_DATA="./data/vestibule.kv": ./data/vestibule.kv',
          fix: "./data/vestibule.kv",
        },
        {
          file: "data/vestibule.kv-wal",
          line: 'vestibule: cannot open VESTIBULE_DATA="./data/vestibule.kv": ' +
            "./data/vestibule.kv-wal",
          fix: "./data/vestibule.kv-wal",
        },
        {
          file: "data/outbox.jsonl",
          line: 'vestibule: cannot open VESTIBULE_MAIL="file:data/outbox.jsonl": data/outbox.jsonl',
          fix: "data/outbox.jsonl",
        },
      ];
      for (const c of cases) {
        await t.step(`start-up refuses ${c.file} readable by group and others`, async () => {
          const path = `${dir}/${c.file}`;
          const existed = await Deno.stat(path).then(() => true, () => false);
          if (existed) await Deno.chmod(path, 0o644);
          else await Deno.writeFile(path, new Uint8Array(), { mode: 0o644 });
          try {
            const outcome = await startup(start());
            assert.ok(!outcome.listened, "refused before listening");
            assert.equal(outcome.code, 2);
            assert.equal(
              outcome.stderr,
              `${c.line} is open to group or others (mode 0644); make it owner-only: ` +
                `chmod 600 ${c.fix}\n`,
            );
          } finally {
            if (existed) await Deno.chmod(path, 0o600);
            else await Deno.remove(path);
          }
        });
      }
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
});
