import {
  type FaqEntry,
  type FaqQuestion,
  groupQuestions,
  meaningMatcher,
  questionMatcher,
} from "convoseg/faq";
import { KnowledgeReader, type TopicEmbeddings } from "convoseg/knowledge/read";
import { embedTopics } from "convoseg/topics";
import { readQuestions } from "./questions.js";
import { channelPlace, readChannel, unknownChannel } from "./shared/channel-knowledge.js";
import { type Command, command, EXIT } from "./shared/command.js";
import { CommandFailure } from "./shared/failures.js";
import { channelHeading, escapeControls, isoMinute, plural } from "./shared/format.js";
import { WORKSPACE_HELP, WORKSPACE_OPTION } from "./shared/workspace-option.js";
import {
  EMBEDDING_HELP,
  EMBEDDING_OPTIONS,
  parseEmbeddingFlags,
} from "./topics/embedding-options.js";

const FAQ_USAGE = `Usage: npm start -- faq <channel> [--json] [--workspace DIR | --table NAME] [--limit N] [--embeddings M [--embeddings-url U] [--similarity S]]

Lists a channel's recurring questions as FAQ entries, most asked first: the questions of its
question index asked at least twice in other words (grouped by their content words, with
opposite and different actions kept apart) as one entry, in its clearest wording, with how
often and when it was asked, its best answer (a corrected one first, else the one most messages
support, else the latest) and the evidence (the asking and answering messages). Without a table
it reads the local workspace that run and import write (.convoseg in the current directory, or
--workspace DIR). With --table (or RESULTS_TABLE) the AWS SDK's usual environment picks the
account, region and endpoint (AWS_ENDPOINT_URL_DYNAMODB for an emulator).

Options:
${WORKSPACE_HELP}
  --table NAME      the results table (default: $RESULTS_TABLE; the stack's ResultsTableName)
  --limit N         show the first N entries (default: all)
  --json            one JSON object: {"channel", "questions", "faq": [...]}
${EMBEDDING_HELP.replace("also merge topics", "also group questions").replace("at which topics merge", "at which questions group")}
  -h, --help        this help

On the workspace the channel may be given by its name, as for topics. A channel with nothing
stored (unlike one with no recurring questions yet) is said on standard error with the stored
channel ids near it, and exits 1.`;

/** `faq`: a channel's recurring questions grouped into FAQ entries, most asked first. */
export const faqCommand: Command = command({
  name: "faq",
  usage: FAQ_USAGE,
  options: {
    ...WORKSPACE_OPTION,
    table: { type: "string" },
    limit: { type: "string" },
    json: { type: "boolean" },
    ...EMBEDDING_OPTIONS,
  },
  parse: ({ values, positionals }) => {
    const embeddings = parseEmbeddingFlags(values);
    return {
      ...channelPlace(values, positionals),
      json: values.json ?? false,
      ...(embeddings && { embeddings }),
    };
  },
  run: async ({ channel: given, table, workspace, limit, json, embeddings }, io) => {
    const where = { command: "faq", what: "questions", table, workspace };
    const found = await readChannel(
      {
        ...where,
        given,
        read: (client, tableName, channel) =>
          readQuestions(new KnowledgeReader({ client, tableName }), channel, {}),
      },
      io,
    );
    if ("ambiguous" in found) return EXIT.usage;
    const { channel, items: questions, known, name } = found;
    const stored = known === undefined || known.has(channel);
    // Its name's words join no two questions; an id (Slack's C…) has none, its name does.
    const named = name ?? channel;
    const entries = groupQuestions(questions, {
      channel: named,
      ...(embeddings && { matchers: await embeddingMatchers(questions, embeddings, named) }),
    });
    const faq = limit === undefined ? entries : entries.slice(0, limit);
    if (json) io.stdout.write(`${JSON.stringify({ channel, questions: questions.length, faq })}\n`);
    else if (stored) {
      const heading = channelHeading(channel, name);
      io.stdout.write(`${formatFaq(heading, faq, entries.length, questions.length)}\n`);
    }
    if (stored) return EXIT.ok;
    unknownChannel(where, channel, known, io);
    return EXIT.failed;
  },
});

/**
 * The word matcher and, with `--embeddings`, the embeddings matcher over the questions' wordings
 * (the most asked embedded first, as topics are); a failing model is the command's failure.
 */
async function embeddingMatchers(
  questions: readonly FaqQuestion[],
  { embedder, similarity }: TopicEmbeddings,
  channel: string,
) {
  const counts = new Map<string, number>();
  for (const q of questions) counts.set(q.question, (counts.get(q.question) ?? 0) + 1);
  const ranked = [...counts].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1));
  try {
    const vectors = await embedTopics(
      embedder,
      ranked.map(([text]) => text),
    );
    return [questionMatcher(undefined, channel), meaningMatcher(vectors, similarity)];
  } catch (error) {
    throw new CommandFailure(
      `embedding the questions with ${embedder.model} failed: ${(error as Error).message}`,
      { cause: error },
    );
  }
}

/** The text listing under `name`: an entry per recurring question, its answer and evidence indented. */
function formatFaq(name: string, faq: readonly FaqEntry[], total: number, asked: number): string {
  if (total === 0) {
    return `${name}: no recurring questions yet (${plural(asked, "question")} asked, none by two people)`;
  }
  const shown = faq.length < total ? `, the first ${faq.length}` : "";
  const lines = [
    `${name}: ${plural(total, "recurring question")}${shown}, asked by most people first (of ${plural(asked, "question")} asked)`,
  ];
  for (const entry of faq) {
    const when =
      entry.firstAsked === entry.lastAsked
        ? isoMinute(entry.firstAsked)
        : `${isoMinute(entry.firstAsked)} to ${isoMinute(entry.lastAsked)}`;
    // Every line holds chat text (the wordings, the answer, ids): escaped as a whole.
    lines.push(escapeControls(`- ${entry.question}`));
    lines.push(
      `    asked ${entry.count} times by ${entry.people} people, ${when}; ${entry.answered} answered`,
    );
    if (entry.answer !== undefined) {
      const corrected = entry.answer.corrected ? " (corrected)" : "";
      lines.push(escapeControls(`    answer${corrected}: ${entry.answer.text}`));
      if (entry.answer.answerIds.length > 0) {
        const messages = entry.answer.answerIds.length === 1 ? "message" : "messages";
        lines.push(
          escapeControls(
            `    answered by ${messages} ${entry.answer.answerIds.join(", ")} (asked in ${entry.answer.askedId})`,
          ),
        );
      }
    }
    if (entry.wordings.length > 0) {
      lines.push(
        escapeControls(
          `    also asked as: ${entry.wordings.map((w) => JSON.stringify(w)).join(", ")}`,
        ),
      );
    }
    const more = entry.moreAsked > 0 ? ` and ${entry.moreAsked} more` : "";
    lines.push(escapeControls(`    asked in messages ${entry.askedIds.join(", ")}${more}`));
  }
  return lines.join("\n");
}
