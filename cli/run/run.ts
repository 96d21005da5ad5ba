/**
 * `npm start -- run`, the command: checks that its output files can be written, loads the input
 * (or generates the sample), runs it locally (run-locally.ts) and says how it went: the messages
 * not stored, the segments given up on, the summary (run-summary.ts) and the exit code. Its
 * usage and flags are run-options.ts.
 */
import { open } from "node:fs/promises";
import { sampleChat } from "../../local/sample.js";
import { type Command, command, EXIT } from "../shared/command.js";
import { type LoadedInput, loadInput } from "../shared/export-input.js";
import { describeFailure } from "../shared/failures.js";
import {
  escapeControls,
  formatCount,
  plural,
  warnIfMinItemsUnreachable,
} from "../shared/format.js";
import type { CommandIO } from "../shared/io.js";
import { runLocally } from "./run-locally.js";
import { parseRunArgs, RUN_OPTIONS, RUN_USAGE, type RunOptions } from "./run-options.js";
import { formatRunSummary, runEnding } from "./run-summary.js";

/** `run`: the whole pipeline on local emulators and a simulated clock. */
export const runCommand: Command = command({
  name: "run",
  usage: RUN_USAGE,
  options: RUN_OPTIONS,
  parse: parseRunArgs,
  run: async (options, io) => {
    warnIfMinItemsUnreachable(io, "run", options.minItems, options.maxSize);
    const unwritable = await firstUnwritable(options);
    if (unwritable !== undefined) {
      io.stderr.write(`run: ${unwritable}\n`);
      return EXIT.failed;
    }
    const loaded = await loadMessages(options, io);
    if (loaded === undefined) return EXIT.failed;
    let outcome: Awaited<ReturnType<typeof runLocally>>;
    try {
      outcome = await runLocally(loaded.messages, options, io);
    } catch (error) {
      io.stderr.write(`run: ${escapeControls(describeFailure(error))}\n`);
      return EXIT.failed;
    }
    const { summary, refused, conflicts, unchanged, gaveUp, stopped } = outcome;
    const { placeOf } = loaded;
    for (const { message, field, problem } of refused) {
      io.stderr.write(
        `${escapeControls(`${placeOf(message)}: ${field}: ${problem}`)} (not stored)\n`,
      );
    }
    for (const { message, fields } of conflicts.slice(0, SHOWN_CONFLICTS)) {
      io.stderr.write(
        `${escapeControls(`${placeOf(message)}: id ${JSON.stringify(message.id)} of channel ${JSON.stringify(message.channel)} is stored already with another ${fields.join(" and ")}`)} (not stored: the stored message is kept)\n`,
      );
    }
    if (unchanged > 0) {
      io.stderr.write(`run: ${plural(unchanged, "message")} were stored already, as sent\n`);
    }
    for (const segment of gaveUp) {
      const given = outcome.givenUp.get(segment.segmentId);
      const after = given?.permanent
        ? "at its first failure, which no retry could fix"
        : `after ${given?.attempts ?? options.extraction?.maxAttempts} attempts`;
      io.stderr.write(
        `gave up on segment ${segment.segmentId} (channel ${escapeControls(JSON.stringify(segment.channel))}, ${plural(segment.count, "message")}) ${after}${given === undefined ? "" : `: ${escapeControls(given.cause)}`}\n`,
      );
    }
    io.stdout.write(formatRunSummary(summary, options.verbose));
    const left = summary.extraction === null ? 0 : summary.segments - summary.extraction.extracted;
    if (stopped !== undefined) {
      io.stderr.write(
        `run: extraction stopped after ${stopped.failures} failures in a row: ${escapeControls(stopped.cause.what)}; ${plural(left, "segment")} of ${formatCount(summary.segments)} not extracted: ${escapeControls(stopped.cause.hint)}, then run the same command again.\n`,
      );
    } else if (left > 0) {
      io.stderr.write(`run: ${plural(left, "segment")} not extracted (see above)\n`);
    }
    if (conflicts.length > 0) {
      // Ids are the message's identity: a second file whose ids start again would otherwise
      // vanish into the first without a word.
      io.stderr.write(
        `run: ${plural(conflicts.length, "message")} were not stored: their ids (channel and id) are taken by stored messages with other content${conflicts.length > SHOWN_CONFLICTS ? ` (the first ${SHOWN_CONFLICTS} above)` : ""}; give each message an id of its own in its channel (or another --channel), or start the workspace anew with --fresh\n`,
      );
    }
    const ending = runEnding({
      skipped: loaded.skipped,
      notStored: refused.length,
      taken: conflicts.length,
      notExtracted: left,
    });
    for (const line of ending.lines) io.stderr.write(`${line}\n`);
    return ending.code;
  },
});

/** Conflicting messages shown one by one; the rest are counted. */
const SHOWN_CONFLICTS = 5;

/**
 * The first output file that cannot be written (said as the error to print), checked before the
 * run rather than after minutes of it: each is created (or emptied) now.
 */
async function firstUnwritable(options: RunOptions): Promise<string | undefined> {
  const files: [string, string | undefined][] = [
    ["--out", options.out],
    ["--candidates", options.extraction?.candidates],
    ["--report", options.report],
  ];
  for (const [flag, file] of files) {
    if (file === undefined) continue;
    try {
      await (await open(file, "w")).close();
    } catch (error) {
      return `cannot write ${flag} ${file}: ${(error as Error).message}`;
    }
  }
  return undefined;
}

/**
 * The input's messages (an export, or chat lines with bad lines reported like `segment`, and
 * lines ingestion would refuse: cli/shared/export-input.ts), or the generated sample.
 */
async function loadMessages(options: RunOptions, io: CommandIO): Promise<LoadedInput | undefined> {
  if (options.input === undefined) {
    return {
      messages: sampleChat({ settle: options.settle, perChannel: 150, topical: true }),
      placeOf: (message) => `message ${JSON.stringify(message.id)}`,
      skipped: 0,
    };
  }
  const { channel: defaultChannel, skipInvalid, timezone } = options;
  return loadInput("run", options.input, { defaultChannel, skipInvalid, timezone }, io);
}
