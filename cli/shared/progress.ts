/** Where progress goes: standard error, or anything that writes text and may be a terminal. */
export interface ProgressStream {
  write(text: string): unknown;
  isTTY?: boolean;
}

export interface ProgressOptions {
  /** Nothing is shown for work that finishes within this many ms. */
  delayMs?: number;
  /** Least time between two updates: a terminal line is redrawn, a log gets a new line. */
  intervalMs?: number;
  clock?: () => number;
}

/**
 * A status line for long work. Quiet for short work (the first second by default); after that a
 * terminal gets one line redrawn in place, and a pipe or log gets a line every few seconds.
 * `update` takes a function so that the text is only built when it is shown.
 */
export class Progress {
  private readonly start: number;
  private readonly delayMs: number;
  private readonly intervalMs: number;
  private readonly clock: () => number;
  private lastShown = Number.NEGATIVE_INFINITY;
  private lastLogged: string | undefined;
  private shown = false;

  constructor(
    private readonly stream: ProgressStream,
    options: ProgressOptions = {},
  ) {
    this.clock = options.clock ?? (() => performance.now());
    this.delayMs = options.delayMs ?? 1000;
    this.intervalMs = options.intervalMs ?? (stream.isTTY ? 100 : 5000);
    this.start = this.clock();
  }

  update(status: () => string): void {
    const now = this.clock();
    if (now - this.start < this.delayMs || now - this.lastShown < this.intervalMs) return;
    this.lastShown = now;
    this.shown = true;
    if (this.stream.isTTY) {
      this.stream.write(`\r\x1b[2K${status()}`);
      return;
    }
    // A log gains nothing from the same line again (a slow start says "opening" once).
    const text = status();
    if (text !== this.lastLogged) this.stream.write(`${text}\n`);
    this.lastLogged = text;
  }

  /** Ends the status line, if one was shown, so that what follows starts on a clean line. */
  finish(): void {
    if (this.shown && this.stream.isTTY) this.stream.write("\r\x1b[2K");
    this.shown = false;
  }
}
