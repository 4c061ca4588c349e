/**
 * Why the server cannot start, said in one line (main.ts prints it after `vestibule: ` and
 * exits with status 2). Every error a start-up step expects (a bad setting, an unreadable
 * file, a store that will not open, a taken port) belongs to this family; anything else is a
 * bug and keeps its stack.
 */
export class StartupError extends Error {
  override name = "StartupError";

  /** The line printed; a family may put its topic first ("configuration error: …"). */
  get line(): string {
    return this.message;
  }
}
