import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { DynamoDbStore } from "../lib/history/index.js";
import { KnowledgeReader, type Topic } from "../lib/knowledge/index.js";
import { channelArgument, messagesDirectory } from "./channel-names.js";
import { type Command, type CommandIO, command, EXIT } from "./command.js";
import { EMBEDDING_HELP, EMBEDDING_OPTIONS, parseEmbeddingFlags } from "./embedding-options.js";
import { onTable, type TableRef } from "./failures.js";
import { escapeControls, formatTopics } from "./format.js";
import { resultChannels, suggestChannels } from "./near-channels.js";
import {
  noteUnextracted,
  WORKSPACE_HELP,
  WORKSPACE_OPTION,
  withWorkspace,
  workspaceDir,
} from "./workspace-option.js";

const TOPICS_USAGE = `Usage: npm start -- topics <channel> [--json] [--workspace DIR | --table NAME] [--limit N]
       [--embeddings bedrock|bedrock:MODEL|openai:MODEL [--similarity S]]

Lists a channel's topics from the results table, most supported first: how many segments
support each, when it was first and last seen, its best confidence and reason, its tags, and
the evidence (each supporting segment and the first and last message of its range). Wordings of
one topic (case, punctuation, plurals and inflections, word order) are merged into one, named
by the most supported, the others listed after "also:" (in JSON, "aliases"). Without a
table it reads the local workspace that run and import write (.convoseg in the current
directory, or --workspace DIR). With --table (or RESULTS_TABLE) the AWS SDK's usual environment
picks the account, region and endpoint (AWS_ENDPOINT_URL_DYNAMODB for an emulator).

Options:
${WORKSPACE_HELP}
  --table NAME      the results table (default: $RESULTS_TABLE; the stack's ResultsTableName)
  --limit N         show the first N topics (default: all)
  --json            one JSON object: {"channel", "topics": [...]} as the typed reader returns
${EMBEDDING_HELP}
  -h, --help        this help

On the workspace the channel may be given by its name (the channelName its messages carry,
with or without #) where no other channel has that name; an id always wins. A name several
channels carry is refused with their ids (exit 2). A channel with nothing stored (unlike one
with no topics yet) is said on standard error with the stored channel ids near it, and exits 1.`;

/** `topics`: a channel's topics from the results table, most supported first. */
export const topicsCommand: Command = command({
  name: "topics",
  summary: [
    "topics <channel>",
    "a channel's extracted topics, most supported first, with evidence",
  ],
  usage: TOPICS_USAGE,
  options: {
    ...WORKSPACE_OPTION,
    table: { type: "string" },
    limit: { type: "string" },
    json: { type: "boolean" },
    ...EMBEDDING_OPTIONS,
  },
  parse: ({ values, positionals }) => {
    if (values.workspace !== undefined && values.table !== undefined) {
      throw new Error("--workspace and --table name two places: give one");
    }
    const table =
      values.workspace === undefined ? (values.table ?? process.env.RESULTS_TABLE) : undefined;
    const [channel, ...extra] = positionals;
    const limit = values.limit === undefined ? undefined : Number(values.limit);
    if (channel === undefined || extra.length > 0) throw new Error("expected one channel id");
    if (limit !== undefined && !(Number.isInteger(limit) && limit > 0)) {
      throw new Error(`--limit must be a positive integer (got ${JSON.stringify(values.limit)})`);
    }
    const workspace = workspaceDir(values.workspace, table !== undefined);
    const embeddings = parseEmbeddingFlags(values);
    return { channel, table, workspace, limit, json: values.json ?? false, embeddings };
  },
  run: async ({ channel: given, table, workspace, limit, json, embeddings }, io) => {
    let channel = given;
    const list = (client: DynamoDBClient, ref: TableRef): Promise<Topic[]> =>
      onTable(ref, () =>
        new KnowledgeReader({ client, tableName: ref.table, embeddings }).topics(channel, {
          limit,
        }),
      );
    const found =
      workspace === undefined
        ? await (async () => {
            const client = new DynamoDBClient({});
            const ref = {
              table: table as string,
              role: "the results table",
              fix: "pass the stack's ResultsTableName with --table (or set RESULTS_TABLE)",
            };
            const topics = await list(client, ref);
            if (topics.length > 0) return { topics };
            return { topics, known: await onTable(ref, () => resultChannels(client, ref.table)) };
          })()
        : await withWorkspace({ dir: workspace, create: false }, io, async (opened) => {
            await noteUnextracted("topics", opened, io);
            const client = opened.dynamodb();
            // The workspace's messages know the channels' names: `topics general` works too.
            const directory = messagesDirectory(client, opened.tables.messagesTable);
            const resolved = await channelArgument("topics", given, directory, io);
            if (resolved === undefined) return { ambiguous: true };
            channel = resolved;
            const topics = await list(client, {
              table: opened.tables.resultsTable,
              role: "the workspace's results table",
              fix: "run npm start -- run on the workspace first",
            });
            if (topics.length > 0) return { topics };
            const messages = new DynamoDbStore({
              client,
              tableName: opened.tables.messagesTable,
            });
            const known = new Set([
              ...(await messages.conversations()),
              ...(await resultChannels(client, opened.tables.resultsTable)),
            ]);
            return { topics, known };
          });
    if ("ambiguous" in (found as object)) return EXIT.usage;
    const { topics, known } = found as { topics: Topic[]; known?: Set<string> };
    const stored = known === undefined || known.has(channel);
    if (json) io.stdout.write(`${JSON.stringify({ channel, topics })}\n`);
    else if (stored) io.stdout.write(`${formatTopics(channel, topics)}\n`);
    if (stored) return EXIT.ok;
    unknownChannel(channel, known, workspace === undefined ? table : undefined, io);
    return EXIT.failed;
  },
});

/** Says that `channel` has nothing stored (unlike a channel with no topics yet), and what is near it. */
function unknownChannel(
  channel: string,
  known: Set<string>,
  table: string | undefined,
  io: CommandIO,
): void {
  const name = escapeControls(JSON.stringify(channel));
  io.stderr.write(
    table === undefined
      ? `topics: channel ${name} has no stored messages in the workspace (not a channel with no topics yet)\n`
      : `topics: channel ${name} has nothing in the results table ${JSON.stringify(table)}: no stored messages, or none extracted yet\n`,
  );
  suggestChannels("topics", "topics", channel, known, io);
}
