import { QUESTION_STATUSES, type QuestionStatus } from "convoseg/extraction";
import { KnowledgeReader, MAX_QUESTION_LIMIT } from "convoseg/knowledge/read";
import type { CorrectionNote, Question } from "convoseg/knowledge/store";
import { type Mark, markAction, runMark } from "./questions-mark.js";
import { channelPlace, readChannel, unknownChannel } from "./shared/channel-knowledge.js";
import { type Command, command, EXIT } from "./shared/command.js";
import { channelHeading, escapeControls, isoMinute, plural } from "./shared/format.js";
import { WORKSPACE_HELP, WORKSPACE_OPTION } from "./shared/workspace-option.js";

const QUESTIONS_USAGE = `Usage: npm start -- questions <channel> [--status answered|unanswered|unclear] [--json] [--workspace DIR | --table NAME] [--limit N]
       npm start -- questions mark <channel> <question-id> --answered-by MESSAGE-ID | --reopen | --hide [--by NAME] [--json] [--workspace DIR | --table NAME]

Lists the questions asked in a channel's segments, from the results table's question index:
the unanswered ones first, oldest first, then the unclear ones, then the answered ones with
their answers (or only those of --status). Each says how long ago it was asked (on the
workspace, before its simulated clock: where its last run left it), by whom, and where (its
segment and asking message) and its id. Without a table it reads the local workspace that run
and import write (.convoseg in the current directory, or --workspace DIR). With --table (or
RESULTS_TABLE) the AWS SDK's usual environment picks the account, region and endpoint
(AWS_ENDPOINT_URL_DYNAMODB for an emulator).

Options:
${WORKSPACE_HELP}
  --table NAME      the results table (default: $RESULTS_TABLE; the stack's ResultsTableName)
  --status STATUS   only the questions of this status: answered, unanswered or unclear
  --limit N         show the first N questions (default: all)
  --json            one JSON object: {"channel", "questions": [...]} as the typed reader returns
                    (with mark: {"channel", "question"}, null once hidden)
  --answered-by ID  mark: the question is answered by this message of the channel
  --reopen          mark: the question is unanswered, whatever the model said
  --hide            mark: the question is left out of every listing, the FAQ and the API
  --by NAME         mark: who corrects it, kept with the correction (default: not recorded)
  -h, --help        this help

With mark, a person's correction of one question (its id is in the listing's lines): it wins
over the model's status and answer in every read (questions, faq, report, digest, the API),
marked as corrected, and later runs and re-extractions keep it. Marking again replaces it.

On the workspace the channel may be given by its name, as for topics. A channel with nothing
stored (unlike one with no questions yet) is said on standard error with the stored channel ids
near it, and exits 1.`;

/** What a listing of the questions reads. */
interface Listing {
  channel: string;
  table: string | undefined;
  workspace: string | undefined;
  limit: number | undefined;
  status: QuestionStatus | undefined;
  json: boolean;
}

/** The order the text lists statuses in: what still wants an answer first. */
const LISTED: readonly QuestionStatus[] = ["unanswered", "unclear", "answered"];

/** `questions`: a channel's questions from the question index, oldest unanswered first. */
export const questionsCommand: Command = command({
  name: "questions",
  usage: QUESTIONS_USAGE,
  options: {
    ...WORKSPACE_OPTION,
    table: { type: "string" },
    status: { type: "string" },
    limit: { type: "string" },
    json: { type: "boolean" },
    "answered-by": { type: "string" },
    reopen: { type: "boolean" },
    hide: { type: "boolean" },
    by: { type: "string" },
  },
  parse: ({ values, positionals }): Listing | ({ mark: true } & Mark) => {
    // `questions mark <channel> <id>`; a channel named "mark" is still listed by `questions mark`.
    if (positionals[0] === "mark" && positionals.length > 1) {
      const [, channel, questionId, ...extra] = positionals;
      if (questionId === undefined || extra.length > 0) {
        throw new Error("questions mark takes a channel and a question id");
      }
      const { table, workspace } = channelPlace(values, [channel]);
      if (values.by === "") throw new Error("--by needs a name");
      return {
        mark: true,
        channel,
        questionId,
        ...markAction(values),
        ...(values.by !== undefined && { by: values.by }),
        table,
        workspace,
        json: values.json ?? false,
      };
    }
    for (const flag of ["answered-by", "reopen", "hide", "by"] as const) {
      if (values[flag] !== undefined) {
        throw new Error(`--${flag} is for questions mark <channel> <question-id>`);
      }
    }
    const place = channelPlace(values, positionals);
    const status = values.status as QuestionStatus | undefined;
    if (status !== undefined && !QUESTION_STATUSES.includes(status)) {
      throw new Error(
        `--status must be one of ${QUESTION_STATUSES.join(", ")} (got ${JSON.stringify(values.status)})`,
      );
    }
    return { ...place, status, json: values.json ?? false };
  },
  run: async (parsed, io) => {
    if ("mark" in parsed) return runMark(parsed, io);
    const { channel: given, table, workspace, status, limit, json } = parsed;
    const where = { command: "questions", what: "questions", table, workspace };
    const found = await readChannel(
      {
        ...where,
        given,
        read: (client, tableName, channel) =>
          readQuestions(new KnowledgeReader({ client, tableName }), channel, { status, limit }),
      },
      io,
    );
    if ("ambiguous" in found) return EXIT.usage;
    const { channel, items: questions, known, now, name } = found;
    const stored = known === undefined || known.has(channel);
    const heading = channelHeading(channel, name);
    if (json) io.stdout.write(`${JSON.stringify({ channel, questions })}\n`);
    else if (stored)
      io.stdout.write(`${formatQuestions(heading, questions, status, now, limit !== undefined)}\n`);
    if (stored) return EXIT.ok;
    unknownChannel(where, channel, known, io);
    return EXIT.failed;
  },
});

/**
 * The channel's questions of `status` (else unanswered, unclear, then answered), oldest first
 * within each, at most `limit`: page after page of the reader.
 */
export async function readQuestions(
  reader: Pick<KnowledgeReader, "questions">,
  channel: string,
  options: { status?: QuestionStatus; limit?: number },
): Promise<Question[]> {
  const wanted = options.limit ?? Number.POSITIVE_INFINITY;
  const out: Question[] = [];
  for (const status of options.status === undefined ? LISTED : [options.status]) {
    let cursor: string | null = null;
    do {
      if (out.length >= wanted) return out;
      const page: { items: Question[]; cursor: string | null } = await reader.questions(channel, {
        status,
        limit: Math.min(MAX_QUESTION_LIMIT, wanted - out.length),
        ...(cursor !== null && { cursor }),
      });
      out.push(...page.items);
      cursor = page.cursor;
    } while (cursor !== null);
  }
  return out;
}

/** A correction as the listing says it: `corrected to answered by ops, 2026-07-10T09:00Z`. */
export function correctionLine(note: CorrectionNote): string {
  const to = note.action === "reopen" ? "unanswered" : note.action;
  const gone = note.answerRemoved ? " (its answer was deleted)" : "";
  const by = note.by === undefined ? "" : ` by ${note.by}`;
  return `corrected to ${to}${gone}${by}, ${isoMinute(Date.parse(note.at))}`;
}

/** How long ago, roughly: `45m`, `5h`, `3d`, `8y` past two years (never negative). */
export function formatAge(ms: number): string {
  const minutes = Math.max(0, Math.floor(ms / 60_000));
  if (minutes < 60) return `${minutes}m`;
  const hours = Math.floor(minutes / 60);
  if (hours < 48) return `${hours}h`;
  const days = Math.floor(hours / 24);
  return days < 730 ? `${days}d` : `${Math.floor(days / 365.25)}y`;
}

/** The text listing under `name` (its {@link channelHeading}): a line per question, where it was asked and its answer indented. */
function formatQuestions(
  name: string,
  questions: readonly Question[],
  status: QuestionStatus | undefined,
  now: number,
  limited: boolean,
): string {
  const kind = status === undefined ? "" : `${status} `;
  if (questions.length === 0) return `${name}: no ${kind}questions extracted yet`;
  // All of them listed: counted by status in the words and numbers the report and digest use.
  const counts =
    status === undefined && !limited
      ? ` (${LISTED.map((s) => `${questions.filter((q) => q.status === s).length} ${s}`).join(", ")})`
      : "";
  const order = status === undefined ? ", unanswered first" : "";
  const lines = [
    `${name}: ${plural(questions.length, `${kind}question`)}${counts}${order}, oldest first`,
  ];
  for (const q of questions) {
    const by = q.askedBy === undefined ? "" : ` by ${q.askedBy}`;
    const mark = status === undefined ? `[${q.status}] ` : "";
    // Every line holds chat text (the question, the answer, ids): escaped as a whole.
    lines.push(escapeControls(`- ${mark}${q.question}`));
    lines.push(
      escapeControls(
        `    asked ${formatAge(now - q.askedTs)} ago${by}, ${isoMinute(q.askedTs)}: segment ${q.segmentId}, message ${q.askedId}${q.threadId === undefined ? "" : ` (thread ${q.threadId})`}, id ${q.id}`,
      ),
    );
    if (q.correction !== undefined)
      lines.push(escapeControls(`    ${correctionLine(q.correction)}`));
    if (q.answer !== undefined) lines.push(escapeControls(`    answer: ${q.answer}`));
    if (q.answerIds.length > 0) {
      const messages = q.answerIds.length === 1 ? "message" : "messages";
      lines.push(escapeControls(`    answered by ${messages} ${q.answerIds.join(", ")}`));
    }
  }
  return lines.join("\n");
}
