// What `admin check` reports: one finding per line, ok, a warning, or a fault (what would break
// a deployment, and makes the command exit 1).
export interface Finding {
  readonly level: "ok" | "warn" | "fault";
  readonly what: string;
  readonly where: string;
}

export function formatFinding(f: Finding): string {
  return `${f.level.padEnd(5)} ${f.what} (${f.where})`;
}

export const ok = (what: string, where: string): Finding => ({ level: "ok", what, where });
export const warn = (what: string, where: string): Finding => ({ level: "warn", what, where });
export const fault = (what: string, where: string): Finding => ({ level: "fault", what, where });
