import { readFile } from "node:fs/promises";
import type { Command } from "./shared/command.js";
import { EXIT } from "./shared/exit.js";
import { terminalSafe } from "./shared/format.js";
import type { CommandIO } from "./shared/io.js";
import { nearNames } from "./shared/near-names.js";

/** A command as the list knows it: its line in `--help`, and its module, loaded when run. */
interface CommandEntry {
  readonly name: string;
  /** Its line in `npm start -- --help`: a short synopsis, and what it does. */
  readonly summary: readonly [synopsis: string, description: string];
  readonly load: () => Promise<Command>;
}

/**
 * Every command, in the order `npm start -- --help` lists them. Loaded on demand: a command
 * loads its own module (and the SDKs it needs) only, and `--help` none.
 */
export const COMMANDS: readonly CommandEntry[] = [
  {
    name: "segment",
    summary: ["segment <file.jsonl|->", "print the closed conversation segments of chat messages"],
    load: async () => (await import("./segment.js")).segmentCommand,
  },
  {
    name: "disentangle",
    summary: ["disentangle <file|->", "each chat message's parent and conversation, inferred"],
    load: async () => (await import("./disentangle/disentangle.js")).disentangleCommand,
  },
  {
    name: "run",
    summary: ["run", "run the whole pipeline locally on emulators and a simulated clock"],
    load: async () => (await import("./run/run.js")).runCommand,
  },
  {
    name: "channels",
    summary: ["channels", "the channels a workspace holds: names, ids, messages, times"],
    load: async () => (await import("./channels.js")).channelsCommand,
  },
  {
    name: "channel",
    summary: [
      "channel show|reset|delete <id>",
      "operator commands on a pipeline's channel state; delete removes a channel",
    ],
    load: async () => (await import("./channel/channel.js")).channelCommand,
  },
  {
    name: "erase",
    summary: [
      "erase --user-id ID | --user NAME",
      "erase a person's messages and what was derived from them",
    ],
    load: async () => (await import("./erase.js")).eraseCommand,
  },
  {
    name: "topics",
    summary: [
      "topics <channel>",
      "a channel's extracted topics, most supported first, with evidence",
    ],
    load: async () => (await import("./topics/topics.js")).topicsCommand,
  },
  {
    name: "questions",
    summary: ["questions <channel>", "a channel's questions, oldest unanswered first, and answers"],
    load: async () => (await import("./questions.js")).questionsCommand,
  },
  {
    name: "faq",
    summary: ["faq <channel>", "a channel's recurring questions, grouped, with their best answers"],
    load: async () => (await import("./faq.js")).faqCommand,
  },
  {
    name: "search",
    summary: [
      'search "<query>"',
      "messages, conversations, topics and questions found by their words",
    ],
    load: async () => (await import("./search.js")).searchCommand,
  },
  {
    name: "mcp",
    summary: ["mcp", "the workspace for AI assistants: a read-only MCP server on stdio"],
    load: async () => (await import("./mcp.js")).mcpCommand,
  },
  {
    name: "digest",
    summary: ["digest <channel>...", "a period's new and recurring topics, questions, activity"],
    load: async () => (await import("./digest.js")).digestCommand,
  },
  {
    name: "reextract",
    summary: ["reextract <channel> <id>", "operator command: extract stored segments again"],
    load: async () => (await import("./reextract.js")).reextractCommand,
  },
  {
    name: "import",
    summary: [
      "import <file|->",
      "store an agent transcript's turns as a conversation (and extract it)",
    ],
    load: async () => (await import("./import/import.js")).importCommand,
  },
  {
    name: "import-chat",
    summary: [
      "import-chat <export>...",
      "store a Slack, Discord, Telegram, Mattermost or WhatsApp export's or an IRC log's messages",
    ],
    load: async () => (await import("./import-chat/import-chat.js")).importChatCommand,
  },
  {
    name: "report",
    summary: ["report --segments FILE", "an HTML page of the segments, their cuts and topics"],
    load: async () => (await import("./report/report.js")).reportCommand,
  },
  {
    name: "discord-ask",
    summary: [
      "discord-ask --application-id ID",
      "register the /ask application command with Discord",
    ],
    load: async () => (await import("./discord-ask.js")).discordAskCommand,
  },
  {
    name: "serve",
    summary: ["serve", "the read API over HTTP on the local workspace (127.0.0.1:8787)"],
    load: async () => (await import("./serve/serve.js")).serveCommand,
  },
  {
    name: "stop",
    summary: ["stop", "stop the DynamoDB Local a workspace keeps warm between commands"],
    load: async () => (await import("./stop.js")).stopCommand,
  },
];

const USAGE = `Usage: npm start -- <command> [options]

Commands:
${COMMANDS.map(({ summary: [synopsis, description] }) => `  ${synopsis.padEnd(24)} ${description}`).join("\n")}

Run a command with --help for its options; --version says which convoseg this is.`;

/** Dispatches a command line; resolves to the process exit code. */
export async function main(args: string[], streams: CommandIO): Promise<number> {
  const io = safeStreams(streams);
  const [name, ...rest] = args;
  const found = COMMANDS.find((c) => c.name === name);
  if (found) return (await found.load())(rest, io);
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
    COMMANDS.map((c) => c.name),
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
    stdout: {
      write: (text: string) => io.stdout.write(terminalSafe(text)),
      isTTY: io.stdout.isTTY,
    },
    stderr: {
      write: (text: string) => io.stderr.write(terminalSafe(text)),
      isTTY: io.stderr.isTTY,
    },
  };
}
