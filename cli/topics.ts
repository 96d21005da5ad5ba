import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { KnowledgeReader } from "../lib/knowledge/index.js";
import { type Command, command, EXIT } from "./command.js";
import { onTable } from "./failures.js";
import { formatTopics } from "./format.js";

const TOPICS_USAGE = `Usage: npm start -- topics <channel> [--json] [--table NAME] [--limit N]

Lists a channel's topics from the results table, most supported first: how many segments
support each, when it was first and last seen, its best confidence and reason, its tags, and
the evidence (each supporting segment and the first and last message of its range). The AWS
SDK's usual environment picks the account, region and endpoint (AWS_ENDPOINT_URL_DYNAMODB for
an emulator).

Options:
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
    table: { type: "string" },
    limit: { type: "string" },
    json: { type: "boolean" },
  },
  parse: ({ values, positionals }) => {
    const table = values.table ?? process.env.RESULTS_TABLE;
    const [channel, ...extra] = positionals;
    const limit = values.limit === undefined ? undefined : Number(values.limit);
    if (channel === undefined || extra.length > 0) throw new Error("expected one channel id");
    if (table === undefined) throw new Error("no results table: pass --table or set RESULTS_TABLE");
    if (limit !== undefined && !(Number.isInteger(limit) && limit > 0)) {
      throw new Error(`--limit must be a positive integer (got ${JSON.stringify(values.limit)})`);
    }
    return { channel, table, limit, json: values.json ?? false };
  },
  run: async ({ channel, table, limit, json }, io) => {
    const reader = new KnowledgeReader({ client: new DynamoDBClient({}), tableName: table });
    const topics = await onTable(
      {
        table,
        role: "the results table",
        fix: "pass the stack's ResultsTableName with --table (or set RESULTS_TABLE)",
      },
      () => reader.topics(channel, { limit }),
    );
    io.stdout.write(
      json ? `${JSON.stringify({ channel, topics })}\n` : `${formatTopics(channel, topics)}\n`,
    );
    return EXIT.ok;
  },
});
