import { channelCommand } from "./channel.js";
import { importCommand } from "./import.js";
import { reextractCommand } from "./reextract.js";
import { reportCommand } from "./report.js";
import { runCommand } from "./run.js";
import { type CommandIO, segmentCommand } from "./segment.js";
import { topicsCommand } from "./topics.js";

const USAGE = `Usage: npm start -- <command> [options]

Commands:
  segment <file.jsonl|->   print the closed conversation segments of chat messages
  run                      run the whole pipeline locally on emulators and a simulated clock
  channel show|reset <id>  operator commands on a pipeline's channel state
  topics <channel>         a channel's extracted topics, most supported first, with evidence
  reextract <channel> <id> operator command: extract stored segments again
  import <file|->          store an agent transcript's turns as a conversation (and extract it)
  report --segments FILE   an HTML page of the segments, their cuts and topics

Run a command with --help for its options.`;

/** Dispatches a command line; resolves to the process exit code. */
export async function main(args: string[], io: CommandIO): Promise<number> {
  const [command, ...rest] = args;
  if (command === "segment") return segmentCommand(rest, io);
  if (command === "run") return runCommand(rest, io);
  if (command === "channel") return channelCommand(rest, io);
  if (command === "topics") return topicsCommand(rest, io);
  if (command === "reextract") return reextractCommand(rest, io);
  if (command === "import") return importCommand(rest, io);
  if (command === "report") return reportCommand(rest, io);
  if (command === undefined || command === "--help" || command === "-h" || command === "help") {
    io.stdout.write(`${USAGE}\n`);
    return command === undefined ? 2 : 0;
  }
  io.stderr.write(`unknown command ${JSON.stringify(command)}\n\n${USAGE}\n`);
  return 2;
}
