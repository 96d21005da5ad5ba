import { writeFile } from "node:fs/promises";
import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import {
  buildDigest,
  type Digest,
  type DigestFormat,
  type DigestSources,
  digestHtml,
  digestJson,
  digestMarkdown,
  dynamoDbDigestSources,
  parseSince,
} from "convoseg/digest";
import { DynamoDbStore } from "convoseg/history/dynamodb";
import { reportSegmentHref } from "convoseg/report";
import type { Workspace } from "../local/workspace.js";
import { channelArgument, messagesDirectory } from "./shared/channel-names.js";
import { type Command, command, EXIT } from "./shared/command.js";
import { CommandFailure, onTable, type TableRef } from "./shared/failures.js";
import { escapeControls } from "./shared/format.js";
import type { CommandIO } from "./shared/io.js";
import { resultChannels, suggestChannels } from "./shared/near-channels.js";
import {
  noteUnextracted,
  WORKSPACE_HELP,
  WORKSPACE_OPTION,
  withWorkspace,
  workspaceDir,
} from "./shared/workspace-option.js";

const FORMATS: readonly DigestFormat[] = ["md", "html", "json"];

const DIGEST_USAGE = `Usage: npm start -- digest <channel>... --since 7d [--until T] [--format md|html|json]
       [--out FILE] [--report-href PATH] [--workspace DIR | --results-table NAME --messages-table NAME]

What the channels talked about over a period: new topics (first seen in it) and recurring ones
(seen before too) with their evidence, the questions asked in it that nobody answered (oldest
first) and those answered with their answers, and each channel's activity (messages,
conversations, active people, messages per UTC day; a bar chart in HTML). Without tables it
reads the local workspace that run and import write (.convoseg in the current directory, or
--workspace DIR); with --results-table and --messages-table (or RESULTS_TABLE and
MESSAGES_TABLE) a deployment's, the AWS SDK's usual environment picking the account, region
and endpoint.

Options:
  --since T              where the period begins: a duration back from now (7d, 24h, 2w) or an
                         ISO date or time (2026-01-05, 2026-01-05T08:00Z); required
  --until T              where it ends, excluded (the same forms; default: now)
  --format F             md (default), html (a standalone page) or json (the Digest, docs/digest.md)
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
  since: string;
  until?: string;
  format: DigestFormat;
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
    if (values.since === undefined) throw new Error("--since is required (7d, 24h, 2026-01-05)");
    const format = (values.format ?? "md") as DigestFormat;
    if (!FORMATS.includes(format)) {
      throw new Error(`--format must be md, html or json (got ${JSON.stringify(values.format)})`);
    }
    if (values.out === "") throw new Error("--out needs a file");
    const now = new Date(io.now());
    // Checked here, so that a bad time is a usage error naming its flag.
    parseSince(values.since, now, "--since");
    if (values.until !== undefined) parseSince(values.until, now, "--until");
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
    const digest =
      args.tables !== undefined
        ? await deployedDigest(args, args.tables, periodOf(args, io.now()), io)
        : await withWorkspace({ dir: args.workspace as string, create: false }, io, (opened) =>
            // A workspace's time is its simulated clock: where its last run left it.
            workspaceDigest(args, opened, periodOf(args, opened.clock ?? io.now()), io),
          );
    if (digest === undefined) return EXIT.failed;
    if (digest === "ambiguous") return EXIT.usage;
    const href = (e: { channel: string; segmentId: string }) =>
      reportSegmentHref(e, args.reportHref);
    const text =
      args.format === "json"
        ? digestJson(digest)
        : args.format === "html"
          ? digestHtml(digest, { reportHref: href })
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

interface Period {
  since: number;
  until: number;
  now: Date;
}

function periodOf(args: DigestArgs, clock: number): Period {
  const now = new Date(clock);
  const since = parseSince(args.since, now, "--since");
  const until = args.until === undefined ? clock : parseSince(args.until, now, "--until");
  return { since, until, now };
}

async function deployedDigest(
  args: DigestArgs,
  tables: { results: string; messages: string },
  period: Period,
  io: CommandIO,
): Promise<Found> {
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
  return onTable(ref, () => buildDigest(sources, { channels: args.channels, ...period }));
}

async function workspaceDigest(
  args: DigestArgs,
  opened: Workspace,
  period: Period,
  io: CommandIO,
): Promise<Found> {
  await noteUnextracted("digest", opened, io);
  const client = opened.dynamodb();
  const { resultsTable, messagesTable } = opened.tables;
  const directory = messagesDirectory(client, messagesTable);
  const channels: string[] = [];
  for (const given of args.channels) {
    const resolved = await channelArgument("digest", given, directory, io);
    if (resolved === undefined) return "ambiguous";
    channels.push(resolved);
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
  return onTable(ref, () => buildDigest(sources, { channels, ...period }));
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
