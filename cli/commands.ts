import { readFile } from "node:fs/promises";
import { channelCommand } from "./channel/channel.js";
import { channelsCommand } from "./channels.js";
import { digestCommand } from "./digest.js";
import { disentangleCommand } from "./disentangle/disentangle.js";
import { eraseCommand } from "./erase.js";
import { importCommand } from "./import/import.js";
import { importChatCommand } from "./import-chat/import-chat.js";
import { questionsCommand } from "./questions.js";
import { reextractCommand } from "./reextract.js";
import { reportCommand } from "./report/report.js";
import { runCommand } from "./run/run.js";
import { segmentCommand } from "./segment.js";
import { serveCommand } from "./serve/serve.js";
import type { Command } from "./shared/command.js";
import { EXIT } from "./shared/command.js";
import { terminalSafe } from "./shared/format.js";
import type { CommandIO } from "./shared/io.js";
import { nearNames } from "./shared/near-channels.js";
import { topicsCommand } from "./topics/topics.js";

/** Every command, in the order `npm start -- --help` lists them. */
export const COMMANDS: readonly Command[] = [
  segmentCommand,
  disentangleCommand,
  runCommand,
  channelsCommand,
  channelCommand,
  eraseCommand,
  topicsCommand,
  questionsCommand,
  digestCommand,
  reextractCommand,
  importCommand,
  importChatCommand,
  reportCommand,
  serveCommand,
];

const USAGE = `Usage: npm start -- <command> [options]

Commands:
${COMMANDS.map(({ summary: [synopsis, description] }) => `  ${synopsis.padEnd(24)} ${description}`).join("\n")}

Run a command with --help for its options; --version says which convoseg this is.`;

/** Dispatches a command line; resolves to the process exit code. */
export async function main(args: string[], streams: CommandIO): Promise<number> {
  const io = safeStreams(streams);
  const [name, ...rest] = args;
  const found = COMMANDS.find((c) => c.commandName === name);
  if (found) return found(rest, io);
  if (name === undefined || name === "--help" || name === "-h" || name === "help") {
    io.stdout.write(`${USAGE}\n`);
    return name === undefined ? EXIT.usage : EXIT.ok;
  }
  if (name === "--version" || name === "-v") {
    io.stdout.write(`convoseg ${await version()}\n`);
    return EXIT.ok;
  }
  const [near] = nearNames(
    name,
    COMMANDS.map((c) => c.commandName),
  );
  const hint = near === undefined ? "" : `; did you mean ${near}?`;
  io.stderr.write(`unknown command ${JSON.stringify(name)}${hint}\n\n${USAGE}\n`);
  return EXIT.usage;
}

/** The version in package.json, read when asked (beside this file's folder). */
async function version(): Promise<string> {
  const text = await readFile(new URL("../package.json", import.meta.url), "utf8");
  return (JSON.parse(text) as { version: string }).version;
}

/**
 * `io` with every write to stdout and stderr made {@link terminalSafe}: a model name, tag,
 * topic or channel from the data cannot move the cursor, clear the screen or reverse a line,
 * whichever command writes it.
 */
function safeStreams(io: CommandIO): CommandIO {
  return {
    ...io,
    stdout: { write: (text: string) => io.stdout.write(terminalSafe(text)) },
    stderr: {
      write: (text: string) => io.stderr.write(terminalSafe(text)),
      isTTY: io.stderr.isTTY,
    },
  };
}
