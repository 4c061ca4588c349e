import assert from "node:assert/strict";
import { RETRY, retryCommit } from "../../src/store/commit_retry.ts";

/** An attempt that loses `losses` commits, then returns "won"; counts its runs. */
function losing(losses: number) {
  const runs = { count: 0 };
  const attempt = () => {
    runs.count++;
    return Promise.resolve(runs.count > losses ? "won" : RETRY);
  };
  return { runs, attempt };
}

Deno.test("an unbounded retry runs the attempt again until its commit wins", async () => {
  const { runs, attempt } = losing(50);
  assert.equal(await retryCommit(attempt), "won");
  assert.equal(runs.count, 51);
});

Deno.test("a retry returns the first attempt's answer without running it again", async () => {
  const { runs, attempt } = losing(0);
  assert.equal(await retryCommit(attempt, { attempts: 3, exhausted: () => "gave up" }), "won");
  assert.equal(runs.count, 1);
});

Deno.test("a bounded retry wins on its last attempt", async () => {
  const { runs, attempt } = losing(2);
  assert.equal(await retryCommit(attempt, { attempts: 3, exhausted: () => "gave up" }), "won");
  assert.equal(runs.count, 3);
});

Deno.test("a bounded retry stops at its bound and answers what exhausted gives", async () => {
  const { runs, attempt } = losing(10);
  assert.equal(await retryCommit(attempt, { attempts: 3, exhausted: () => "gave up" }), "gave up");
  assert.equal(runs.count, 3);
});

Deno.test("a bounded retry throws what exhausted throws once every attempt lost", async () => {
  const { runs, attempt } = losing(10);
  await assert.rejects(
    retryCommit(attempt, {
      attempts: 5,
      exhausted: () => {
        throw new Error("the store keeps changing");
      },
    }),
    { message: "the store keeps changing" },
  );
  assert.equal(runs.count, 5);
});

Deno.test("an attempt's own throw ends the retry at once", async () => {
  let runs = 0;
  await assert.rejects(
    retryCommit(() => {
      runs++;
      return Promise.reject(new Error("the code was already used"));
    }, { attempts: 5, exhausted: () => "gave up" }),
    { message: "the code was already used" },
  );
  assert.equal(runs, 1);
});
