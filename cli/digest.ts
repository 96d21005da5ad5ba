import { writeFile } from "node:fs/promises";
import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import {
  askedPeriod,
  buildDigest,
  type Digest,
  DigestError,
  type DigestSources,
  digestHtml,
  digestJson,
  digestMarkdown,
  digestText,
  dynamoDbDigestSources,
} from "convoseg/digest";
import { nextUtcMidnight } from "convoseg/duration";
import { DynamoDbStore } from "convoseg/history/dynamodb";
import { reportSegmentHref } from "convoseg/report";
import type { Workspace } from "../local/workspace.js";
import { channelArgument, messagesDirectory } from "./shared/channel-names.js";
import { type Command, command, EXIT } from "./shared/command.js";
import { CommandFailure, onTable, type TableRef } from "./shared/failures.js";
import { escapeControls } from "./shared/format.js";
import type { CommandIO } from "./shared/io.js";
import { resultChannels, suggestChannels } from "./shared/near-channels.js";
import { statsOptOut } from "./shared/opt-out.js";
import {
  noteUnextracted,
  WORKSPACE_HELP,
  WORKSPACE_OPTION,
  withWorkspace,
  workspaceDir,
} from "./shared/workspace-option.js";

const FORMATS = ["text", "md", "html", "json"] as const;
type DigestFormat = (typeof FORMATS)[number];

const DIGEST_USAGE = `Usage: npm start -- digest <channel>... [--since T] [--until T] [--format text|md|html|json]
       [--out FILE] [--report-href PATH] [--workspace DIR | --results-table NAME --messages-table NAME]

What the channels talked about over a period: new topics (first seen in it) and recurring ones
(seen before too) with their evidence, the questions asked in it that nobody answered (oldest
first) and those answered with their answers, and each channel's activity (messages,
conversations, active people, messages per UTC day; a bar chart in HTML). Without tables it
reads the local workspace that run and import write (.convoseg in the current directory, or
--workspace DIR); with --results-table and --messages-table (or RESULTS_TABLE and
MESSAGES_TABLE) a deployment's, the AWS SDK's usual environment picking the account, region
and endpoint.

On the workspace the period ends with the stored chat (the end of its last day), not now:
imported history's last week is its own. A deployment's ends now.

Options:
  --since T              where the period begins: a duration back from its end (7d, 24h, 2w) or
                         an ISO date or time (2026-01-05, 2026-01-05T08:00Z); default: a week
  --until T              where it ends, excluded (the same forms; default: the stored chat's
                         end on the workspace, now on a deployment); at most 366 days in all
  --format F             text (plain, the default on a terminal), md (Markdown, the default
                         into a pipe or file), html (a standalone page) or json (docs/digest.md)
  --out FILE             write it to FILE (default: standard output)
  --report-href PATH     the run report each entry links to (default report.html, as
                         npm start -- report writes it): PATH#segment=<channel>/<segment>
${WORKSPACE_HELP}
  --results-table NAME   a deployment's results table (default: $RESULTS_TABLE)
  --messages-table NAME  its messages table (default: $MESSAGES_TABLE)
  -h, --help             this help

On the workspace a channel may be given by its name where no other channel has it. A channel
with nothing stored is said on standard error with the stored channel ids near it (exit 1).`;

interface DigestArgs {
  channels: string[];
  since?: string;
  until?: string;
  /** Undefined: text on a terminal, else Markdown. */
  format?: DigestFormat;
  out?: string;
  reportHref: string;
  workspace?: string;
  tables?: { results: string; messages: string };
}

/** `digest`: a period's topics, questions and activity of some channels. */
export const digestCommand: Command = command({
  name: "digest",
  usage: DIGEST_USAGE,
  options: {
    ...WORKSPACE_OPTION,
    since: { type: "string" },
    until: { type: "string" },
    format: { type: "string" },
    out: { type: "string" },
    "report-href": { type: "string" },
    "results-table": { type: "string" },
    "messages-table": { type: "string" },
  },
  parse: ({ values, positionals }, io): DigestArgs => {
    if (positionals.length === 0) throw new Error("expected at least one channel");
    const format = values.format as DigestFormat | undefined;
    if (format !== undefined && !FORMATS.includes(format)) {
      throw new Error(
        `--format must be text, md, html or json (got ${JSON.stringify(values.format)})`,
      );
    }
    if (values.out === "") throw new Error("--out needs a file");
    // A time that is no time is a usage error naming its flag, said before any table is read;
    // the period itself is checked once its end (the stored chat's, on a workspace) is known.
    try {
      askedPeriod({ since: values.since, until: values.until, end: io.now(), endName: "now" });
    } catch (error) {
      if ((error as DigestError).code === "DIGEST_BAD_TIME") throw error;
    }
    const results = values["results-table"] ?? process.env.RESULTS_TABLE;
    const messages = values["messages-table"] ?? process.env.MESSAGES_TABLE;
    const named = values["results-table"] !== undefined || values["messages-table"] !== undefined;
    if (values.workspace !== undefined && named) {
      throw new Error("--workspace and --results-table/--messages-table name two places: give one");
    }
    const deployed =
      values.workspace === undefined && (results !== undefined || messages !== undefined);
    if (deployed && (results === undefined || messages === undefined)) {
      throw new Error(
        "a deployment's digest needs both tables: --results-table and --messages-table (or RESULTS_TABLE and MESSAGES_TABLE)",
      );
    }
    return {
      channels: positionals,
      since: values.since,
      until: values.until,
      format,
      out: values.out,
      reportHref: values["report-href"] ?? "report.html",
      workspace: workspaceDir(values.workspace, deployed),
      tables: deployed ? { results: results as string, messages: messages as string } : undefined,
    };
  },
  run: async (args, io) => {
    let digest: Found;
    try {
      digest =
        args.tables !== undefined
          ? await deployedDigest(args, args.tables, io)
          : await withWorkspace({ dir: args.workspace as string, create: false }, io, (opened) =>
              workspaceDigest(args, opened, io),
            );
    } catch (error) {
      // A period the flags cannot make is theirs to fix: said as a usage error, in our words.
      if (!(error instanceof DigestError)) throw error;
      io.stderr.write(`digest: ${escapeControls(error.message)}\n`);
      return EXIT.usage;
    }
    if (digest === undefined) return EXIT.failed;
    if (digest === "ambiguous") return EXIT.usage;
    const href = (e: { channel: string; segmentId: string }) =>
      reportSegmentHref(e, args.reportHref);
    const format = args.format ?? (args.out === undefined && io.stdout.isTTY ? "text" : "md");
    const text =
      format === "json"
        ? digestJson(digest)
        : format === "html"
          ? digestHtml(digest, { reportHref: href })
          : format === "text"
            ? digestText(digest)
            : digestMarkdown(digest, { reportHref: href });
    if (args.out === undefined) io.stdout.write(text);
    else {
      try {
        await writeFile(args.out, text);
      } catch (error) {
        throw new CommandFailure(`cannot write --out ${args.out}: ${(error as Error).message}`);
      }
      io.stderr.write(`digest: wrote ${escapeControls(args.out)}\n`);
    }
    return EXIT.ok;
  },
});

type Found = Digest | "ambiguous" | undefined;

/** What the period's default end is: now (a deployment), the stored chat's end, or the clock. */
type End = { at: number; of: "now" | "chat" | "clock" };

/**
 * The period the flags ask for, ending by default at `end`; said on standard error in one line
 * when the flags left it to `end` on a workspace, or gave no --since at all.
 */
function periodOf(args: DigestArgs, end: End, io: CommandIO): { since: number; until: number } {
  const endName =
    end.of === "now"
      ? "now"
      : end.of === "chat"
        ? `the end of the stored chat (${day(end.at - 1)})`
        : `the workspace's clock (${day(end.at)}; no message stored)`;
  const period = askedPeriod({ since: args.since, until: args.until, end: end.at, endName });
  const dates = `${day(period.since)} to ${day(period.until - 1)}`;
  if (args.since === undefined) {
    const which =
      args.until !== undefined
        ? "the week before --until"
        : end.of === "chat"
          ? "the last week of the stored chat"
          : end.of === "clock"
            ? "the last week to the workspace's clock"
            : "the last week";
    io.stderr.write(`digest: ${which}, ${dates} (no --since given)\n`);
  } else if (end.of !== "now" && (args.until === undefined || !DATED.test(args.until))) {
    io.stderr.write(`digest: ${dates}, up to ${endName}, not to now\n`);
  }
  return period;
}

/** A time given as a date, not a duration: `2018-05-30`, `2018-05-30T08:00Z`. */
const DATED = /^\s*\d{4}-/;
/** `2018-05-30` (UTC). */
const day = (ms: number): string => new Date(ms).toISOString().slice(0, 10);

/**
 * Where the stored chat of `channels` ends: the UTC midnight after the last message of their
 * results (a digest counts those), so that its days are whole; undefined when there is none.
 */
async function storedChatEnd(
  sources: DigestSources,
  channels: readonly string[],
): Promise<number | undefined> {
  let last: number | undefined;
  for (const channel of channels) {
    for (const result of await sources.results(channel))
      last = Math.max(last ?? -Infinity, result.last.ts);
  }
  return last === undefined ? undefined : nextUtcMidnight(last);
}

async function deployedDigest(
  args: DigestArgs,
  tables: { results: string; messages: string },
  io: CommandIO,
): Promise<Found> {
  // A deployment's chat is live: its period ends now, checked before any read.
  const period = periodOf(args, { at: io.now(), of: "now" }, io);
  const client = new DynamoDBClient({});
  const ref: TableRef = {
    table: tables.results,
    role: "the results table",
    fix: "pass the stack's ResultsTableName with --results-table (or set RESULTS_TABLE)",
  };
  const sources = dynamoDbDigestSources({
    client,
    resultsTable: tables.results,
    messagesTable: tables.messages,
  });
  const missing = await unstored(sources, args.channels, ref);
  if (missing.length > 0) {
    const known = await onTable(ref, () => resultChannels(client, tables.results));
    for (const channel of missing) {
      io.stderr.write(
        `digest: channel ${quoted(channel)} has nothing in the results table ${JSON.stringify(tables.results)}: no stored messages, or none extracted yet\n`,
      );
      suggestChannels("digest", "digest", channel, known, io);
    }
    return undefined;
  }
  const now = new Date(io.now());
  return onTable(ref, () =>
    buildDigest(sources, {
      channels: args.channels,
      ...period,
      now,
      answerers: { optOut: statsOptOut() },
    }),
  );
}

async function workspaceDigest(args: DigestArgs, opened: Workspace, io: CommandIO): Promise<Found> {
  await noteUnextracted("digest", opened, io);
  const client = opened.dynamodb();
  const { resultsTable, messagesTable } = opened.tables;
  const directory = messagesDirectory(client, messagesTable);
  const channels: string[] = [];
  // Headed by the names people know them by (`general (C0GENERAL)`), as the messages give them.
  const names: Record<string, string> = {};
  for (const given of args.channels) {
    const resolved = (await channelArgument("digest", given, directory, io))?.channel;
    if (resolved === undefined) return "ambiguous";
    channels.push(resolved);
    const name = await directory.nameOf(resolved);
    if (name !== undefined) names[resolved] = name;
  }
  const known = new Set([
    ...(await new DynamoDbStore({ client, tableName: messagesTable }).conversations()),
    ...(await resultChannels(client, resultsTable)),
  ]);
  const missing = channels.filter((c) => !known.has(c));
  for (const channel of missing) {
    io.stderr.write(`digest: channel ${quoted(channel)} has no stored messages in the workspace\n`);
    suggestChannels("digest", "digest", channel, known, io);
  }
  if (missing.length > 0) return undefined;
  const sources = dynamoDbDigestSources({ client, resultsTable, messagesTable });
  const ref: TableRef = {
    table: resultsTable,
    role: "the workspace's results table",
    fix: "run npm start -- run on the workspace first",
  };
  // Imported history ends long before the workspace's clock (and now): its own end is the
  // period's, the clock's only when nothing is stored.
  const ended = await onTable(ref, () => storedChatEnd(sources, channels));
  const end: End =
    ended === undefined ? { at: opened.clock ?? io.now(), of: "clock" } : { at: ended, of: "chat" };
  const period = periodOf(args, end, io);
  // Generated now, on the machine's clock: the workspace's clock is the simulated chat's.
  const now = new Date(io.now());
  const answerers = { optOut: statsOptOut() };
  return onTable(ref, () => buildDigest(sources, { channels, ...period, now, names, answerers }));
}

/** The channels with no stored result at all: nothing to digest, unlike a quiet period. */
async function unstored(
  sources: DigestSources,
  channels: readonly string[],
  ref: TableRef,
): Promise<string[]> {
  const missing: string[] = [];
  for (const channel of new Set(channels)) {
    if ((await onTable(ref, () => sources.results(channel))).length === 0) missing.push(channel);
  }
  return missing;
}

const quoted = (channel: string): string => escapeControls(JSON.stringify(channel));
