/**
 * "Mark as answer" on a message (Slack's message shortcut, Discord's message command): the
 * message chosen answers the question it replies to, recorded as a person's correction
 * (`correctQuestion`), and the person is told what became of it, only them. Which question: the
 * one its reply or thread starts with, else the latest one asked in its thread, else the one the
 * model already answered with it, else the nearest earlier question of the conversation (segment)
 * it is in. "Reopen question" and "Hide question" take the question the message asks, else the
 * one it answers. Who may: anyone in the channels answered, or the platform user ids listed.
 */
import { CorrectionError } from "../../knowledge/index.js";
import type { ResultStore } from "../../knowledge/store/index.js";
import { correctQuestion } from "../../knowledge/write/index.js";
import { AskError } from "./errors.js";
import { discordNotice, slackNotice } from "./render.js";
import { editInteractionResponse, type PostDeps, postToResponseUrl } from "./run.js";

interface MarkJobBase {
  /** The channel of the message, as the store names it (the platform's channel id). */
  channel: string;
  /** The message chosen, as the store names it (Slack's `ts`, Discord's id). */
  messageId: string;
  /**
   * `answered`: the message answers its question; `reopen` and `hidden`: the question it asks
   * (else the one it answers) is open again, or no question.
   */
  action: "answered" | "reopen" | "hidden";
  /** Who chose it: the platform user id, kept as the correction's `by`. */
  by: string;
  /** The thread it is in (its root's id), as the platform said. */
  thread?: string;
  /** The message it replies to, as the platform said (Discord's message reference). */
  replyTo?: string;
}

/** Told through the shortcut's `response_url`, only to the person. */
interface SlackMarkJob extends MarkJobBase {
  platform: "slack";
  responseUrl: string;
}

/** Told by editing the deferred (ephemeral) response through the interaction's webhook. */
interface DiscordMarkJob extends MarkJobBase {
  platform: "discord";
  applicationId: string;
  /** The interaction's token: valid 15 minutes, never logged. */
  token: string;
}

export type MarkJob = SlackMarkJob | DiscordMarkJob;

type Store = Pick<ResultStore, "listQuestions" | "getResult" | "saveCorrection">;
type QuestionEntry = Awaited<ReturnType<ResultStore["listQuestions"]>>["entries"][number];

/** The channel's messages: whether the one chosen is stored, when it was sent, its thread. */
interface MarkMessages {
  getMessages(
    channel: string,
    ids: readonly string[],
  ): Promise<readonly { id?: string; ts?: number; deleted?: boolean; thread?: string }[]>;
}

interface MarkDeps extends PostDeps {
  store: Store;
  messages: MarkMessages;
  /** Who may mark: anyone in the channels answered, or these platform user ids. */
  markers: "anyone" | readonly string[];
  slackResponsePrefixes?: readonly string[];
  discordApiBase?: string;
  now?: () => number;
}

/** What became of a mark (the person is told). */
type MarkOutcome = "marked" | "not allowed" | "not stored" | "asks" | "no question" | "not marked";

/** Earlier questions whose conversation is looked in, at most, and how far back. */
const LOOKED_AT = 10;
const LOOK_BACK_MS = 7 * 24 * 3_600_000;
const QUESTIONS_PAGE = 1000;

const TOLD: Record<Exclude<MarkOutcome, "marked">, string> = {
  "not allowed": "Only the people this deployment names may mark answers here.",
  "not stored":
    "That message is not stored yet (or was deleted): try again in a minute, once it has been read.",
  asks: "That message asks a question: mark the message that answers it.",
  "no question":
    "No question found that this message answers: mark a reply in the question's thread, or a message of its conversation.",
  "not marked": "The answer could not be marked just now: try again in a minute.",
};

/** Records the mark of `job` when it may be made, and tells the person; resolves to what became of it. */
export async function markAnswer(job: MarkJob, deps: MarkDeps): Promise<MarkOutcome> {
  let done: { outcome: MarkOutcome; question?: string };
  let failure: unknown;
  try {
    done = await mark(job, deps);
  } catch (error) {
    // A store that failed: the person is told, and the error goes on to the log.
    done = { outcome: "not marked" };
    failure = error;
  }
  await tell(job, deps, done.outcome, done.question);
  if (failure !== undefined) throw failure;
  return done.outcome;
}

const DONE: Record<MarkJob["action"], string> = {
  answered: "Marked as the answer to:",
  reopen: "Reopened:",
  hidden: "Hidden:",
};

async function tell(job: MarkJob, deps: MarkDeps, outcome: MarkOutcome, question?: string) {
  const text = outcome === "marked" ? DONE[job.action] : TOLD[outcome];
  if (job.platform === "slack") {
    await postToResponseUrl(deps, job.responseUrl, {
      ...slackNotice(text, question),
      replace_original: false,
    });
  } else if (job.platform === "discord") {
    await editInteractionResponse(deps, job, discordNotice(text, question));
  } else {
    throw new AskError("ASK_BAD_JOB", "a mark of no platform the ask endpoints serve");
  }
}

async function mark(
  job: MarkJob,
  deps: MarkDeps,
): Promise<{ outcome: MarkOutcome; question?: string }> {
  if (deps.markers !== "anyone" && !deps.markers.includes(job.by))
    return { outcome: "not allowed" };
  const [stored] = (await deps.messages.getMessages(job.channel, [job.messageId])).filter(
    (m) => m.id === job.messageId && !m.deleted,
  );
  if (stored === undefined || stored.ts === undefined) return { outcome: "not stored" };
  const message = {
    id: job.messageId,
    ts: stored.ts,
    thread: job.thread ?? stored.thread,
    replyTo: job.replyTo,
  };
  const entries = await questionsOf(deps.store, job.channel);
  const asks = latestFirst(entries.filter((e) => e.askedId === message.id))[0];
  if (asks !== undefined && job.action === "answered") return { outcome: "asks" };
  const entry = asks ?? (await answeredQuestion(deps.store, job.channel, entries, message));
  if (entry === undefined) return { outcome: "no question" };
  try {
    await correctQuestion(
      deps.store,
      {
        channel: job.channel,
        questionId: entry.id,
        action: job.action,
        ...(job.action === "answered" && { answerId: message.id }),
        by: job.by,
      },
      { messages: deps.messages, ...(deps.now && { now: deps.now }) },
    );
  } catch (error) {
    // Gone meanwhile (a re-extraction, a deletion): said as such, never as a failure to post.
    if (error instanceof CorrectionError) return { outcome: "not marked" };
    throw error;
  }
  return { outcome: "marked", question: entry.question };
}

/** Every question of the channel's index, page by page. */
async function questionsOf(store: Store, channel: string): Promise<QuestionEntry[]> {
  const all: QuestionEntry[] = [];
  let after: string | undefined;
  do {
    const page = await store.listQuestions(channel, {
      limit: QUESTIONS_PAGE,
      ...(after && { after }),
    });
    all.push(...page.entries);
    after = page.next ?? undefined;
  } while (after !== undefined);
  return all;
}

const latestFirst = (entries: QuestionEntry[]) =>
  entries.sort((a, b) => b.askedTs - a.askedTs || (a.id < b.id ? -1 : 1));

/** The question `message` answers, of the channel's `entries`; undefined: none found. */
async function answeredQuestion(
  store: Store,
  channel: string,
  entries: readonly QuestionEntry[],
  message: { id: string; ts: number; thread?: string; replyTo?: string },
): Promise<QuestionEntry | undefined> {
  const earlier = latestFirst(entries.filter((e) => e.askedTs <= message.ts));
  const first = (pick: (e: QuestionEntry) => boolean) => earlier.find(pick);
  for (const root of [message.replyTo, message.thread]) {
    const asked = root === undefined ? undefined : first((e) => e.askedId === root);
    if (asked !== undefined) return asked;
  }
  if (message.thread !== undefined) {
    const inThread = first((e) => e.thread === message.thread);
    if (inThread !== undefined) return inThread;
  }
  const linked = first((e) => e.answerIds.includes(message.id));
  if (linked !== undefined) return linked;
  const near = earlier.filter((e) => message.ts - e.askedTs <= LOOK_BACK_MS).slice(0, LOOKED_AT);
  for (const entry of near) {
    const result = await store.getResult(channel, entry.segmentId);
    if (result?.messageIds?.includes(message.id)) return entry;
  }
  return undefined;
}
