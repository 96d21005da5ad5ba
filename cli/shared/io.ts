/**
 * What every command runs with: its standard streams and its clock. A command is handed these
 * rather than reaching for `process`, so that tests can run it on strings and a fixed clock.
 */
import type { Readable } from "node:stream";
import type { ProgressStream } from "./progress.js";

export interface CommandIO {
  stdin: Readable;
  /** A terminal (`isTTY`) is given text for people: `digest` writes plain text to it. */
  stdout: ProgressStream;
  stderr: ProgressStream;
  /** The clock, epoch ms. */
  now: () => number;
}
