import { channelCommand } from "./channel/channel.js";
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
import { topicsCommand } from "./topics/topics.js";

/** Every command, in the order `npm start -- --help` lists them. */
export const COMMANDS: readonly Command[] = [
  segmentCommand,
  disentangleCommand,
  runCommand,
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

Run a command with --help for its options.`;

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
  io.stderr.write(`unknown command ${JSON.stringify(name)}\n\n${USAGE}\n`);
  return EXIT.usage;
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
