import { parseArgs } from "node:util";
import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { KnowledgeReader, type Topic } from "../lib/knowledge/index.js";
import { escapeControls } from "./read-messages.js";
import type { CommandIO } from "./segment.js";

export const TOPICS_USAGE = `Usage: npm start -- topics <channel> [--json] [--table NAME] [--limit N]

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

/** Runs `topics`; resolves to the process exit code. */
export async function topicsCommand(args: string[], io: CommandIO): Promise<number> {
  let parsed: ReturnType<typeof parseTopicsArgs>;
  try {
    parsed = parseTopicsArgs(args);
  } catch (error) {
    io.stderr.write(`topics: ${(error as Error).message}\n\n${TOPICS_USAGE}\n`);
    return 2;
  }
  const { values, positionals } = parsed;
  if (values.help) {
    io.stdout.write(`${TOPICS_USAGE}\n`);
    return 0;
  }
  const table = values.table ?? process.env.RESULTS_TABLE;
  const [channel, ...extra] = positionals;
  const limit = values.limit === undefined ? undefined : Number(values.limit);
  const problem =
    channel === undefined || extra.length > 0
      ? "expected one channel id"
      : table === undefined
        ? "no results table: pass --table or set RESULTS_TABLE"
        : limit !== undefined && !(Number.isInteger(limit) && limit > 0)
          ? `--limit must be a positive integer (got ${JSON.stringify(values.limit)})`
          : undefined;
  if (problem || channel === undefined || table === undefined) {
    io.stderr.write(`topics: ${problem}\n\n${TOPICS_USAGE}\n`);
    return 2;
  }
  const reader = new KnowledgeReader({ client: new DynamoDBClient({}), tableName: table });
  let topics: Topic[];
  try {
    topics = await reader.topics(channel, { limit });
  } catch (error) {
    io.stderr.write(`topics: cannot read ${table}: ${escapeControls((error as Error).message)}\n`);
    return 1;
  }
  if (values.json) {
    io.stdout.write(`${JSON.stringify({ channel, topics })}\n`);
    return 0;
  }
  io.stdout.write(`${formatTopics(channel, topics)}\n`);
  return 0;
}

const parseTopicsArgs = (args: string[]) =>
  parseArgs({
    args,
    allowPositionals: true,
    options: {
      table: { type: "string" },
      limit: { type: "string" },
      json: { type: "boolean" },
      help: { type: "boolean", short: "h" },
    },
  });

const minute = (ms: number) => `${new Date(ms).toISOString().slice(0, 16)}Z`;

/** The text listing: a line per topic, then its evidence indented; chat text escaped. */
export function formatTopics(channel: string, topics: readonly Topic[]): string {
  const name = escapeControls(JSON.stringify(channel));
  if (topics.length === 0) return `${name}: no topics extracted yet`;
  const lines = [`${name}: ${topics.length} topic(s), most supported first`];
  for (const topic of topics) {
    const tags = topic.tags.length === 0 ? "" : `, tags ${topic.tags.join(", ")}`;
    lines.push(
      escapeControls(
        `- ${topic.topic}: ${topic.segments} segment(s), ${minute(topic.firstSeen)} to ${minute(topic.lastSeen)}, confidence ${topic.bestConfidence.toFixed(2)}${tags}`,
      ),
    );
    if (topic.bestReason !== "") lines.push(escapeControls(`    ${topic.bestReason}`));
    for (const evidence of topic.evidence) {
      const range =
        evidence.messageIds === null
          ? "the whole segment"
          : `messages ${evidence.messageIds[0]} to ${evidence.messageIds[1]}`;
      lines.push(
        escapeControls(
          `    segment ${evidence.segmentId}${evidence.late ? " (late)" : ""}: ${range}`,
        ),
      );
    }
  }
  return lines.join("\n");
}
