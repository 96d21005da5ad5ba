/**
 * `questions mark <channel> <question-id>`: a person's correction of a question, on the
 * workspace (or a results table): answered by a message, reopened, or hidden. It is kept apart
 * from what extraction writes, so later runs and re-extractions leave it standing.
 */
import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { DynamoDbStore } from "convoseg/history/dynamodb";
import type { CorrectionAction, Question } from "convoseg/knowledge/store";
import { DynamoDbResultStore } from "convoseg/knowledge/store";
import { correctQuestion } from "convoseg/knowledge/write";
import { channelArgument, messagesDirectory } from "./shared/channel-names.js";
import { EXIT } from "./shared/command.js";
import { onTable } from "./shared/failures.js";
import { escapeControls } from "./shared/format.js";
import type { CommandIO } from "./shared/io.js";
import { withWorkspace } from "./shared/workspace-option.js";

export interface Mark {
  channel: string;
  questionId: string;
  action: CorrectionAction;
  answerId?: string;
  by?: string;
  table: string | undefined;
  workspace: string | undefined;
  json: boolean;
}

/**
 * The correction the flags ask for: exactly one of `--answered-by ID`, `--reopen`, `--hide`.
 * Throws an error naming the flag at fault.
 */
export function markAction(values: {
  "answered-by"?: string;
  reopen?: boolean;
  hide?: boolean;
}): Pick<Mark, "action" | "answerId"> {
  const given = [values["answered-by"] !== undefined, values.reopen, values.hide].filter(Boolean);
  if (given.length !== 1) {
    throw new Error("questions mark takes one of --answered-by MESSAGE-ID, --reopen or --hide");
  }
  if (values["answered-by"] !== undefined) {
    if (values["answered-by"] === "") throw new Error("--answered-by needs a message id");
    return { action: "answered", answerId: values["answered-by"] };
  }
  return { action: values.reopen ? "reopen" : "hidden" };
}

/** Records the correction and says what the question now is. */
export async function runMark(mark: Mark, io: CommandIO): Promise<number> {
  const { questionId, action, answerId, by } = mark;
  const request = { questionId, action, ...(answerId && { answerId }), ...(by && { by }) };
  const now = () => io.now();
  let channel = mark.channel;
  let shown: Question | undefined;
  if (mark.workspace === undefined) {
    const client = new DynamoDBClient({});
    const ref = {
      table: mark.table as string,
      role: "the results table",
      fix: "pass the stack's ResultsTableName with --table (or set RESULTS_TABLE)",
    };
    const store = new DynamoDbResultStore({ client, tableName: ref.table });
    // A CorrectionError is the user's to act on: said as it is, not as the table's failure.
    await onTable(ref, () => store.listCorrections(channel));
    shown = (await correctQuestion(store, { channel, ...request }, { now })).question;
  } else {
    const resolved = await withWorkspace({ dir: mark.workspace, create: false }, io, async (ws) => {
      const client = ws.dynamodb();
      const directory = messagesDirectory(client, ws.tables.messagesTable);
      const found = await channelArgument("questions mark", channel, directory, io);
      if (found === undefined) return false;
      channel = found.channel;
      const store = new DynamoDbResultStore({ client, tableName: ws.tables.resultsTable });
      // The answering message must be one of the channel's, and not deleted.
      const messages = new DynamoDbStore({ client, tableName: ws.tables.messagesTable });
      shown = (await correctQuestion(store, { channel, ...request }, { messages, now })).question;
      return true;
    });
    if (!resolved) return EXIT.usage;
  }
  if (mark.json) io.stdout.write(`${JSON.stringify({ channel, question: shown ?? null })}\n`);
  else io.stdout.write(`${describeMark(channel, questionId, mark, shown)}\n`);
  return EXIT.ok;
}

function describeMark(
  channel: string,
  questionId: string,
  mark: Pick<Mark, "action" | "answerId" | "by">,
  shown: Question | undefined,
): string {
  const what =
    mark.action === "answered"
      ? `answered by message ${mark.answerId}`
      : mark.action === "reopen"
        ? "reopened (unanswered)"
        : "hidden";
  const by = mark.by === undefined ? "" : ` by ${mark.by}`;
  const question = shown === undefined ? "" : `: ${shown.question}`;
  return escapeControls(
    `${JSON.stringify(channel)}: question ${questionId} marked ${what}${by}${question}`,
  );
}
