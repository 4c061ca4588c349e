/** Spec §2 Health: the one body /health sends. It attests only that this process answers. */
import * as v from "valibot";

export const HealthSchema = v.pipe(
  v.strictObject({ ok: v.literal(true), service: v.literal("www") }),
  v.description("The website process responds. Says nothing of merchant connections or workflows."),
);
export type Health = v.InferOutput<typeof HealthSchema>;

export const HEALTH: Health = Object.freeze({ ok: true, service: "www" });
