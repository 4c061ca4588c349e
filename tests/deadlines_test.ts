// The process's deadlines (src/deadlines.ts): one timer for all of them, each fired once, never
// early and at most one tick late, none after it is cleared; and with the runtime's own timers,
// the timer keeps no process alive.
import assert from "node:assert/strict";
import { createDeadlines, RESOLUTION_MS, type TimerClock } from "../src/deadlines.ts";

/** A clock the test moves by hand, with the timers set on it. */
function manualClock() {
  let now = 0;
  let next = 1;
  const timers = new Map<number, { at: number; fire: () => void }>();
  const clock: TimerClock = {
    now: () => now,
    set(fire, ms) {
      timers.set(next, { at: now + ms, fire });
      return next++;
    },
    clear: (timer) => void timers.delete(timer as number),
  };
  /** Moves the clock to `to`, ringing each timer due on the way, earliest first. */
  const advance = (to: number) => {
    for (;;) {
      const due = [...timers].filter(([, t]) => t.at <= to).sort((a, b) => a[1].at - b[1].at)[0];
      if (due === undefined) break;
      timers.delete(due[0]);
      now = due[1].at;
      due[1].fire();
    }
    now = to;
  };
  return { clock, advance, armed: () => timers.size };
}

Deno.test("a deadline fires once, not before it is due and at most one tick after", () => {
  const { clock, advance } = manualClock();
  const deadlines = createDeadlines(clock);
  const fired: [string, number][] = [];
  advance(3);
  deadlines.after(25, () => fired.push(["a", clock.now()]));
  deadlines.after(5, () => fired.push(["b", clock.now()]));
  deadlines.after(25, () => fired.push(["c", clock.now()]));
  advance(7);
  assert.equal(fired.length, 0, "b is due at 8");
  advance(100);
  assert.deepEqual(fired.map(([name]) => name), ["b", "a", "c"]);
  for (const [name, at] of fired) {
    const due = name === "b" ? 8 : 28;
    assert.ok(at >= due && at < due + RESOLUTION_MS, `${name} at ${at}, due ${due}`);
  }
});

Deno.test("a cleared deadline never fires; the others still do", () => {
  const { clock, advance } = manualClock();
  const deadlines = createDeadlines(clock);
  const fired: string[] = [];
  const fire = (name: string) => () => fired.push(name);
  const a = deadlines.after(50, fire("a"));
  deadlines.after(50, fire("b"));
  const c = deadlines.after(10, fire("c"));
  a.clear();
  c.clear();
  c.clear();
  advance(1_000);
  assert.deepEqual(fired, ["b"]);
});

Deno.test("one timer, set again only for a deadline earlier than the one it waits for", () => {
  const { clock, advance, armed } = manualClock();
  let sets = 0;
  const counted: TimerClock = { ...clock, set: (fire, ms) => (sets++, clock.set(fire, ms)) };
  const deadlines = createDeadlines(counted);
  const fired: string[] = [];
  for (let i = 0; i < 100; i++) deadlines.after(30_000, () => fired.push("late")).clear();
  assert.equal(sets, 1, "cleared deadlines leave the timer as it was");
  deadlines.after(20, () => fired.push("early"));
  assert.equal(sets, 2);
  assert.equal(armed(), 1);
  advance(40);
  assert.deepEqual(fired, ["early"]);
  // The timer that rang found nothing else due: none is armed until a new deadline comes.
  advance(40_000);
  assert.equal(armed(), 0);
  deadlines.after(5, () => fired.push("again"));
  advance(40_100);
  assert.deepEqual(fired, ["early", "again"]);
});

Deno.test("a deadline cleared by another due in the same tick does not fire", () => {
  const { clock, advance } = manualClock();
  const deadlines = createDeadlines(clock);
  const fired: string[] = [];
  const b: { clear(): void }[] = [];
  deadlines.after(10, () => {
    fired.push("a");
    b[0]!.clear();
  });
  b.push(deadlines.after(10, () => fired.push("b")));
  advance(1_000);
  assert.deepEqual(fired, ["a"]);
});

Deno.test("a deadline set when another fires is kept", () => {
  const { clock, advance } = manualClock();
  const deadlines = createDeadlines(clock);
  const fired: string[] = [];
  deadlines.after(10, () => {
    fired.push("first");
    deadlines.after(10, () => fired.push("second"));
  });
  advance(1_000);
  assert.deepEqual(fired, ["first", "second"]);
});

Deno.test("the runtime's timer holds no process open", async () => {
  // A child that sets a far deadline and returns: it ends at once.
  const started = performance.now();
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "eval",
      `import { deadlines } from "${new URL("../src/deadlines.ts", import.meta.url).href}";
       deadlines.after(60_000, () => console.log("fired"));`,
    ],
    stdout: "piped",
  });
  const { code, stdout } = await child.output();
  assert.equal(code, 0);
  assert.equal(new TextDecoder().decode(stdout), "");
  assert.ok(performance.now() - started < 30_000);
});
