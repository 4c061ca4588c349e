// The one place that picks the runtime: Deno where `Deno` is defined, Node.js otherwise. Loaded
// dynamically so each runtime reads only its own implementation.
import type { Runtime } from "./runtime.ts";

export const runtime: Runtime = "Deno" in globalThis
  ? (await import("./deno.ts")).denoRuntime
  : (await import("./node.ts")).nodeRuntime;
