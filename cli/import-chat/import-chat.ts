/**
 * `import-chat`: chat platforms' exports (lib/intake/exports) read and stored, with the platforms' own
 * ids, in the local workspace or a deployed stack's tables through the ingest client, or written
 * as chat input JSON lines (`--out`); `--dry-run` says what would be stored.
 */
import { once } from "node:events";
import { createWriteStream } from "node:fs";
import { rename, rm } from "node:fs/promises";
import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import {
  detectFormat,
  EXPORT_FORMATS,
  ExportError,
  type ExportFormat,
  machineTimezone,
  readExports,
} from "convoseg/exports";
import { type Command, type CommandLine, command, EXIT } from "../shared/command.js";
import { chosenConversations } from "../shared/conversation-streams.js";
import {
  channelTable,
  type ImportedInput,
  readingEta,
  readingStatus,
  readJson,
  readNotes,
  reportLines,
  skippedLines,
  timezoneOption,
} from "../shared/export-input.js";
import { CommandFailure } from "../shared/failures.js";
import { escapeControls, formatCount, plural, shellArg } from "../shared/format.js";
import type { CommandIO } from "../shared/io.js";
import { Progress } from "../shared/progress.js";
import { refreshSearchIndex } from "../shared/search-index.js";
import { WORKSPACE_OPTION, withWorkspace, workspaceDir } from "../shared/workspace-option.js";
import {
  type ImportChatOptions,
  type ImportContext,
  readSummary,
  store,
  type Target,
  workspaceTables,
} from "./import-chat-store.js";

const USAGE = `Usage: npm start -- import-chat <file|folder|zip>... [options]

Reads chat platforms' exports and stores their messages, with the platforms' own ids, in the
local workspace (.convoseg in the current directory, or --workspace DIR), in a deployed stack's
tables (--messages-table and --channels-table, through the ingest client), or writes them as
chat input JSON lines (--out FILE) for segment and run --input (which also read the exports
themselves). Several inputs are merged by id, so overlapping exports give each message once, and
importing again stores nothing new; a message whose id is stored with other content is reported
as a conflict, and the stored one is kept.

Formats (detected from the input, or --format):
  slack        a Slack workspace export, the ZIP or its folder (channels.json, users.json and
               a folder of YYYY-MM-DD.json per channel; private channels and DMs when present)
  discord      DiscordChatExporter JSON: one channel's file, or a folder of them (threads too)
  telegram     Telegram Desktop's result.json: one chat, or a whole account's export
  mattermost   a Mattermost bulk export (JSONL)
  whatsapp     a WhatsApp "Export chat" .txt file
  irc          an IRC log, one channel a file: irssi, WeeChat, HexChat, mIRC or ZNC (a day a
               file, dated by its name), or a folder of them

Options:
  --format F             auto (default), ${EXPORT_FORMATS.join(", ")}
  --timezone ZONE        the IANA zone of times that carry none (WhatsApp, IRC logs, old Telegram;
                         default: this machine's, ${machineTimezone()})
  --out FILE             write the messages to FILE instead, one JSON object a line, channel by
                         channel and oldest first within a channel
  --dry-run              print what would be stored (messages and dates per channel, what was
                         skipped and why, the zone used) and store nothing
  --json                 the dry run's report, or the import's outcome, as one JSON object
  --conversations M      how the workspace's channels are segmented from now on, kept in it for
                         the next run: linked (the default: messages outside threads linked into
                         conversations) or contiguous (the timeline cut at silences and sizes)
  --workspace DIR        the local workspace to store into (default: .convoseg in the current
                         directory, unless a table is named)
  --messages-table NAME  a deployed stack's messages table (its MessagesTableName; default:
                         $MESSAGES_TABLE), with
  --channels-table NAME  its channels table (ChannelsTableName; default: $CHANNELS_TABLE)
  -h, --help             this help

Exit status: 0 when every message was stored or was there already as it is (entries an export's
reader skips are reported, and do not fail the import); 1 when an input cannot be read (the
error names the file, the entry or line, and the field), a message was refused or its id is
stored with other content, or storing failed; 2 for usage errors.`;

const OPTIONS = {
  ...WORKSPACE_OPTION,
  format: { type: "string" },
  timezone: { type: "string" },
  out: { type: "string" },
  "dry-run": { type: "boolean" },
  json: { type: "boolean" },
  conversations: { type: "string" },
  "messages-table": { type: "string" },
  "channels-table": { type: "string" },
} as const;

export const importChatCommand: Command = command({
  name: "import-chat",
  usage: USAGE,
  options: OPTIONS,
  parse: parseImportChatArgs,
  run: async (options, io) => {
    try {
      return await importChat(options, io);
    } catch (error) {
      // An export's refusal names the file, the entry or line and the field: said as it is.
      if (error instanceof ExportError) throw new CommandFailure(error.message, { cause: error });
      throw error;
    }
  },
});

async function importChat(options: ImportChatOptions, io: CommandIO): Promise<number> {
  const inputs = await detectInputs(options);
  const progress = new Progress(io.stderr);
  const status = { line: () => "reading" };
  const started = performance.now();
  const read: ImportContext["read"] = { eta: () => "" };
  const reading = readExports(
    inputs.map(({ path, format }) => ({ path, format })),
    {
      timezone: options.timezone,
      onProgress: (p) => {
        read.eta = () => readingEta(p, performance.now() - started);
        status.line = () => readingStatus(p);
        progress.update(status.line);
      },
    },
  );
  const context: ImportContext = { options, inputs, reading, progress, status, read, io };
  try {
    const { target } = options;
    if (target.kind === "dry-run") return await dryRun(context);
    if (target.kind === "out") return await writeOut(context, target.file);
    if (target.kind === "tables") {
      const client = new DynamoDBClient({});
      return await store(context, { ...target, client, now: () => Date.now() });
    }
    return await withWorkspace({ dir: target.dir, create: true }, io, async (workspace) => {
      const code = await store(context, workspaceTables(workspace));
      progress.finish();
      await refreshSearchIndex(workspace, io);
      return code;
    });
  } finally {
    progress.finish();
  }
}

function parseImportChatArgs({
  values,
  positionals,
}: CommandLine<typeof OPTIONS>): ImportChatOptions {
  if (positionals.length === 0) {
    throw new Error("expected an export: a file, a folder or a Slack ZIP (several may be given)");
  }
  const format = values.format ?? "auto";
  if (format !== "auto" && !(EXPORT_FORMATS as readonly string[]).includes(format)) {
    throw new Error(
      `--format must be auto, ${EXPORT_FORMATS.join(", ")} (got ${JSON.stringify(format)})`,
    );
  }
  const messagesTable = values["messages-table"] ?? process.env.MESSAGES_TABLE;
  const channelsTable = values["channels-table"] ?? process.env.CHANNELS_TABLE;
  const tableFlag = (["messages-table", "channels-table"] as const).find(
    (flag) => values[flag] !== undefined,
  );
  const places = [
    values.out !== undefined && "--out",
    values.workspace !== undefined && "--workspace",
    tableFlag !== undefined && `--${tableFlag}`,
  ].filter((place): place is string => place !== false);
  if (values["dry-run"] && places.length > 0) {
    throw new Error(`--dry-run stores nothing: leave out ${places.join(" and ")}`);
  }
  if (places.length > 1) throw new Error(`${places.join(" and ")} name two places: give one`);
  if (values.out === "") throw new Error("--out needs a file");
  const tablesNamed =
    values.out === undefined &&
    values.workspace === undefined &&
    (messagesTable !== undefined || channelsTable !== undefined);
  if (tablesNamed && (messagesTable === undefined || channelsTable === undefined)) {
    throw new Error(
      "a deployment needs both tables: --messages-table and --channels-table (or MESSAGES_TABLE and CHANNELS_TABLE)",
    );
  }
  let target: Target;
  if (values["dry-run"]) target = { kind: "dry-run" };
  else if (values.out !== undefined) target = { kind: "out", file: values.out };
  else if (tablesNamed) {
    target = {
      kind: "tables",
      messagesTable: messagesTable as string,
      channelsTable: channelsTable as string,
    };
  } else target = { kind: "workspace", dir: workspaceDir(values.workspace, false) as string };
  const conversations = chosenConversations(values.conversations);
  if (conversations !== undefined && target.kind === "tables") {
    throw new Error(
      "--conversations is a workspace's: a deployment segments as its conversations setting says (docs/deploy.md)",
    );
  }
  if (conversations !== undefined && target.kind === "out") {
    throw new Error(
      "--conversations is a workspace's, and --out writes chat input: pass it to segment or run --input, which read that file",
    );
  }
  return {
    inputs: positionals,
    format: format as ExportFormat | "auto",
    timezone: timezoneOption(values.timezone),
    target,
    json: values.json ?? false,
    ...(conversations === undefined ? {} : { conversations }),
  };
}

/** Each input with its format: given, or detected now (before anything is read or stored). */
async function detectInputs(options: ImportChatOptions): Promise<ImportedInput[]> {
  const inputs: ImportedInput[] = [];
  for (const path of options.inputs) {
    const format = options.format === "auto" ? await detectFormat(path) : options.format;
    inputs.push({ path, format });
  }
  return inputs;
}

async function dryRun(context: ImportContext): Promise<number> {
  const { reading, io, options } = context;
  for await (const _ of reading.batches()) {
    // Read to the end for the report: the messages themselves are not needed.
  }
  context.progress.finish();
  const { report } = reading;
  if (options.json) {
    io.stdout.write(`${JSON.stringify({ dryRun: true, ...readJson(context.inputs, report) })}\n`);
    return EXIT.ok;
  }
  const machine = options.timezone === undefined ? ", this machine's zone" : "";
  const zone =
    report.zonelessTimes === 0
      ? `times without a zone: none (they would be read in ${report.timezone}${machine})`
      : `times without a zone: ${formatCount(report.zonelessTimes)}, read in ${report.timezone}${machine} (--timezone ZONE to say another)`;
  const skipped = report.files.reduce(
    (sum, f) => sum + Object.values(f.skipped).reduce((a, b) => a + b, 0),
    0,
  );
  io.stdout.write(
    `${[
      `would import ${escapeControls(readSummary(context))} (dry run: nothing stored)`,
      ...channelTable(report.channels),
      `skipped: ${skipped === 0 ? "nothing" : `${formatCount(skipped)} ${skipped === 1 ? "entry" : "entries"}`}`,
      ...skippedLines(report).map((line) => `  ${line}`),
      ...readNotes(report, { timezone: false }),
      zone,
    ].join("\n")}\n`,
  );
  return EXIT.ok;
}

/** Writes the messages as JSON lines to `file` (a file beside it first: never half of one). */
async function writeOut(context: ImportContext, file: string): Promise<number> {
  const { reading, io, options, progress, status } = context;
  const partial = `${file}.partial-${process.pid}`;
  const out = createWriteStream(partial);
  const failed = once(out, "error").then(([error]) => {
    throw new CommandFailure(`cannot write --out ${file}: ${(error as Error).message}`);
  });
  failed.catch(() => {});
  let written = 0;
  try {
    for await (const batch of reading.batches()) {
      const chunk = batch.map((message) => `${JSON.stringify(message)}\n`).join("");
      written += batch.length;
      if (!out.write(chunk)) await Promise.race([once(out, "drain"), failed]);
      status.line = () => `writing ${file}: ${plural(written, "message")}`;
      progress.update(status.line);
    }
    out.end();
    await Promise.race([once(out, "finish"), failed]);
    await rename(partial, file);
  } catch (error) {
    out.destroy();
    await rm(partial, { force: true });
    throw error;
  }
  progress.finish();
  const { report } = reading;
  for (const line of reportLines(report)) io.stderr.write(`import-chat: ${line}\n`);
  if (options.json) {
    const json = { ...readJson(context.inputs, report), out: { file, messages: written } };
    io.stdout.write(`${JSON.stringify(json)}\n`);
    return EXIT.ok;
  }
  io.stdout.write(
    `${[
      `wrote ${escapeControls(readSummary(context))} to ${escapeControls(file)}`,
      ...channelTable(report.channels),
      `next: npm start -- run --input ${shellArg(file)}, then npm start -- report --open`,
    ].join("\n")}\n`,
  );
  return EXIT.ok;
}
