import { KnowledgeReader } from "convoseg/knowledge/read";
import { channelPlace, readChannel, unknownChannel } from "../shared/channel-knowledge.js";
import { type Command, command, EXIT } from "../shared/command.js";
import { formatTopics } from "../shared/format.js";
import { WORKSPACE_HELP, WORKSPACE_OPTION } from "../shared/workspace-option.js";
import { EMBEDDING_HELP, EMBEDDING_OPTIONS, parseEmbeddingFlags } from "./embedding-options.js";

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
with or without #) where no other channel has that name. A name several channels carry, or an
id that is another channel's name, is refused with their ids (exit 2). A channel with nothing stored (unlike one
with no topics yet) is said on standard error with the stored channel ids near it, and exits 1.`;

/** `topics`: a channel's topics from the results table, most supported first. */
export const topicsCommand: Command = command({
  name: "topics",
  usage: TOPICS_USAGE,
  options: {
    ...WORKSPACE_OPTION,
    table: { type: "string" },
    limit: { type: "string" },
    json: { type: "boolean" },
    ...EMBEDDING_OPTIONS,
  },
  parse: ({ values, positionals }) => {
    const embeddings = parseEmbeddingFlags(values);
    return { ...channelPlace(values, positionals), json: values.json ?? false, embeddings };
  },
  run: async ({ channel: given, table, workspace, limit, json, embeddings }, io) => {
    const where = { command: "topics", what: "topics", table, workspace };
    const found = await readChannel(
      {
        ...where,
        given,
        read: (client, tableName, channel) =>
          new KnowledgeReader({ client, tableName, embeddings }).topics(channel, { limit }),
      },
      io,
    );
    if ("ambiguous" in found) return EXIT.usage;
    const { channel, items: topics, known, name } = found;
    const stored = known === undefined || known.has(channel);
    if (json) io.stdout.write(`${JSON.stringify({ channel, topics })}\n`);
    else if (stored) io.stdout.write(`${formatTopics(channel, topics, name)}\n`);
    if (stored) return EXIT.ok;
    unknownChannel(where, channel, known, io);
    return EXIT.failed;
  },
});
