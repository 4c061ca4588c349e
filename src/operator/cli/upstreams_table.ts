// `admin upstreams` for a person: one row per upstream, then each tool a business does not get
// as listed (held for an owner's approval, or left out). `--json` prints the whole description.
import { formatTable } from "./admin_output.ts";

/** What the table reads of `admin upstreams`'s description of one upstream. */
export interface DescribedUpstream {
  readonly name: string;
  readonly state: string;
  readonly problem?: string;
  readonly tools: readonly {
    readonly name: string;
    readonly gated: boolean;
    readonly hidden: boolean;
    readonly businesses?: readonly {
      readonly business: string;
      readonly state: string;
      readonly gateId?: string | null;
      readonly leftOut?: boolean;
      readonly problem?: string;
    }[];
  }[];
}

const HEADER = ["UPSTREAM", "STATE", "TOOLS", "GATED", "HIDDEN", "HELD", "LEFT OUT", "LAST ERROR"];

export function upstreamsTable(upstreams: readonly DescribedUpstream[]): string {
  if (upstreams.length === 0) return "The upstreams file names no upstream.";
  const held = (state: string) => state === "changed" || state === "new";
  const rows = upstreams.map((upstream) => {
    const { tools } = upstream;
    // Not listed: a count of nothing would read as "it lists no tools".
    const listed = upstream.state === "answers" || upstream.state === "held";
    const count = (test: (tool: DescribedUpstream["tools"][number]) => boolean) =>
      listed ? String(tools.filter(test).length) : "-";
    return [
      upstream.name,
      upstream.state,
      count(() => true),
      count((tool) => tool.gated),
      count((tool) => tool.hidden),
      count((tool) => tool.businesses?.some((b) => held(b.state)) ?? false),
      count((tool) => tool.businesses?.some((b) => b.state === "left out") ?? false),
      upstream.problem ?? "-",
    ];
  });
  const lines = [formatTable(HEADER, rows)];
  const heldLines: string[] = [];
  const leftOutLines: string[] = [];
  for (const tool of upstreams.flatMap((upstream) => upstream.tools)) {
    for (const b of tool.businesses ?? []) {
      if (held(b.state)) {
        const gate = b.gateId == null
          ? "no approval asked yet"
          : `${b.leftOut ? "left out of" : "awaiting"} approval ${b.gateId}`;
        heldLines.push(`  ${tool.name}  ${b.state} in ${b.business} (${gate})`);
      } else if (b.state === "left out") {
        leftOutLines.push(`  ${tool.name}  in ${b.business}: ${b.problem}`);
      }
    }
  }
  if (heldLines.length > 0) lines.push("", "Held for an owner's approval:", ...heldLines);
  if (leftOutLines.length > 0) {
    lines.push("", "Left out (no store can hold the definition):", ...leftOutLines);
  }
  return lines.join("\n");
}
