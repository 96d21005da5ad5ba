import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { KnowledgeReader, type Topic } from "../lib/knowledge/index.js";
import { type Command, command, EXIT } from "./command.js";
import { onTable, type TableRef } from "./failures.js";
import { formatTopics } from "./format.js";
import {
  noteUnextracted,
  WORKSPACE_HELP,
  WORKSPACE_OPTION,
  withWorkspace,
  workspaceDir,
} from "./workspace-option.js";

const TOPICS_USAGE = `Usage: npm start -- topics <channel> [--json] [--workspace DIR | --table NAME] [--limit N]

Lists a channel's topics from the results table, most supported first: how many segments
support each, when it was first and last seen, its best confidence and reason, its tags, and
the evidence (each supporting segment and the first and last message of its range). Without a
table it reads the local workspace that run and import write (.convoseg in the current
directory, or --workspace DIR). With --table (or RESULTS_TABLE) the AWS SDK's usual environment
picks the account, region and endpoint (AWS_ENDPOINT_URL_DYNAMODB for an emulator).

Options:
${WORKSPACE_HELP}
  --table NAME      the results table (default: $RESULTS_TABLE; the stack's ResultsTableName)
  --limit N         show the first N topics (default: all)
  --json            one JSON object: {"channel", "topics": [...]} as the typed reader returns
  -h, --help        this help`;

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
    return { channel, table, workspace, limit, json: values.json ?? false };
  },
  run: async ({ channel, table, workspace, limit, json }, io) => {
    const list = (client: DynamoDBClient, ref: TableRef): Promise<Topic[]> =>
      onTable(ref, () =>
        new KnowledgeReader({ client, tableName: ref.table }).topics(channel, { limit }),
      );
    const topics =
      workspace === undefined
        ? await list(new DynamoDBClient({}), {
            table: table as string,
            role: "the results table",
            fix: "pass the stack's ResultsTableName with --table (or set RESULTS_TABLE)",
          })
        : await withWorkspace({ dir: workspace, create: false }, io, async (opened) => {
            await noteUnextracted("topics", opened, io);
            return list(opened.dynamodb(), {
              table: opened.tables.resultsTable,
              role: "the workspace's results table",
              fix: "run npm start -- run on the workspace first",
            });
          });
    io.stdout.write(
      json ? `${JSON.stringify({ channel, topics })}\n` : `${formatTopics(channel, topics)}\n`,
    );
    return EXIT.ok;
  },
});
