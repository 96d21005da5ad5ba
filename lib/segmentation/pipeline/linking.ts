/**
 * `linked` mode's links in a tick: each arrival of a channel's own stream put in its conversation
 * by the reply linker, with the choices made for it outside the model (a parent recorded by a
 * tick that died before moving past it, or an advisor's answer) taken first.
 */
import type { ArrivalContent, InferredReply } from "../../history/dynamodb/index.js";
import { messageText } from "../../history/index.js";
import {
  type AdvisedMessage,
  type ConversationMerge,
  type LinkAdvisor,
  type LinkAnswer,
  type LinkChoice,
  type LinkDecision,
  type LinkerState,
  type LinkQuestion,
  questionOf,
  ReplyLinker,
  settleMerges,
  takenAnswers,
} from "../linker/index.js";
import type { StreamRef } from "./streams.js";
import type { TickDependencies } from "./tick-dependencies.js";

/** An arrival's ref with what the reply linker reads of it, when read for linking. */
export interface LinkableRef extends StreamRef {
  content?: ArrivalContent;
}

/** Choices for the linker by message id: stored parents and an advisor's answers. */
type LinkChoices = ReadonlyMap<string, LinkChoice>;

/**
 * The choices a tick links with, and whether an advisor's answers are among them: then the
 * linker merges no conversations (the model asked decided what it was unsure of, from a window
 * that merged nothing), and otherwise links as it does alone, merging included.
 */
export interface ChosenLinks {
  choices: LinkChoices;
  advised: boolean;
}

/**
 * `linked` mode: each arrival of the channel's own stream (not a thread's reply, not a system
 * line) put in its conversation by the reply linker, restored from the state and snapshotted
 * after; re-run from the recorded window whenever the tick plans again, so a message is linked
 * once per recorded state, in the order the tick reads it, with the same `choices` each time.
 * Each ref's conversation is the one the whole read settles on; `merges` lists, in order, the
 * conversations the linker made one (`LinkDecision.merged`), for the streams to follow; with an
 * advisor's answers among the choices, none (`ChosenLinks`).
 */
export function linkConversations(
  previous: LinkerState | undefined,
  read: readonly LinkableRef[],
  { choices, advised }: ChosenLinks,
): { refs: StreamRef[]; linker: LinkerState; links: InferredReply[]; merges: ConversationMerge[] } {
  const linker = restored(previous, 0, !advised);
  const links: InferredReply[] = [];
  const merges: ConversationMerge[] = [];
  const refs = read.map((r): StreamRef => {
    const { content: _, ...plain } = r;
    const linked = linkOne(linker, r, choices);
    if (linked === undefined) return plain;
    if (typeof linked === "string") return { ...plain, conversation: linked };
    if (linked.source === "inferred" && linked.parent !== undefined)
      links.push({ id: r.id, parent: linked.parent });
    if (linked.merged !== undefined)
      merges.push({ gone: linked.merged, kept: linked.conversation });
    return { ...plain, conversation: linked.conversation };
  });
  if (merges.length === 0) return { refs, linker: linker.snapshot(), links, merges };
  const settled = settleMerges(merges);
  return {
    refs: refs.map((r) =>
      r.conversation === undefined ? r : { ...r, conversation: settled(r.conversation) },
    ),
    linker: linker.snapshot(),
    links,
    merges,
  };
}

function restored(
  previous: LinkerState | undefined,
  alternatives: number,
  merging: boolean,
): ReplyLinker {
  const options = merging ? { alternatives } : { alternatives, mergeMargin: 0 };
  return previous === undefined ? new ReplyLinker(options) : ReplyLinker.restore(previous, options);
}

/**
 * One ref linked: undefined when it is not the linker's (a thread's reply, a system line, no
 * content read), its conversation when the window knows it already, else the decision.
 */
function linkOne(
  linker: ReplyLinker,
  r: LinkableRef,
  choices: LinkChoices,
): LinkDecision | string | undefined {
  const { content } = r;
  if (content === undefined || (r.thread !== undefined && r.thread !== r.id)) return undefined;
  if (content.kind === "system") return undefined;
  const known = linker.conversationOf(r.id);
  if (known !== undefined) return known;
  return linker.link(
    {
      id: r.id,
      ts: r.ts,
      author: content.author,
      ...(content.userId === undefined ? {} : { authorId: content.userId }),
      text: content.text,
      ...(content.kind === undefined ? {} : { kind: content.kind }),
      ...(r.replyTo === undefined ? {} : { replyTo: r.replyTo }),
    },
    choices.get(r.id),
  );
}

/**
 * The choices to link `read` with. A parent recorded on a message is kept: the tick that recorded
 * it died before its state moved past the message, and what it wrote stays decided. With an
 * advisor, the links the model is least sure of are asked in one batch, before anything is
 * decided for good; when the advisor fails, is slow or is refused by its spend bound, the
 * model's choices stand and the tick goes on.
 */
export async function chooseLinks(
  deps: TickDependencies,
  channel: string,
  previous: LinkerState | undefined,
  read: readonly LinkableRef[],
): Promise<ChosenLinks> {
  const choices = new Map<string, LinkChoice>();
  for (const r of read) {
    const stored = r.content?.inferredReplyTo;
    if (stored !== undefined) choices.set(r.id, { parent: stored });
  }
  const advisor = deps.advisor;
  if (advisor === undefined || read.length === 0) return { choices, advised: false };
  const unsure = unsureLinks(advisor, previous, read, choices);
  if (unsure.length === 0) return { choices, advised: false };
  const questions = await questionsOf(deps, channel, unsure, read);
  deps.metrics.add("LinksAsked", questions.length);
  const answers = await askWithin(advisor, channel, questions).catch((error: unknown) => {
    deps.metrics.add("LinkAdviceFailures", 1);
    deps.logger.warn("link advice failed: the linker's own choices stand", {
      channel,
      questions: questions.length,
      error: (error as Error).message,
      errorName: (error as Error).name,
    });
    return [];
  });
  let taken = 0;
  for (const [id, choice] of takenAnswers(questions, answers)) {
    if (choices.has(id)) continue;
    choices.set(id, choice);
    taken++;
  }
  deps.metrics.add("LinksAdvised", taken);
  return { choices, advised: taken > 0 };
}

/**
 * The inferred decisions below the advisor's margin, in read order, up to its batch: decided in
 * a dry run from the same window with the stored choices, merging nothing (as the linker then
 * links with the answers), to see the model's best options.
 */
function unsureLinks(
  advisor: LinkAdvisor,
  previous: LinkerState | undefined,
  read: readonly LinkableRef[],
  choices: LinkChoices,
): LinkDecision[] {
  const linker = restored(previous, advisor.candidates + 1, false);
  const unsure: LinkDecision[] = [];
  for (const r of read) {
    const linked = linkOne(linker, r, choices);
    if (linked === undefined || typeof linked === "string") continue;
    if (linked.source !== "inferred" || linked.chosen === true) continue;
    if ((linked.margin ?? Number.POSITIVE_INFINITY) >= advisor.margin) continue;
    if (unsure.length >= advisor.batch) break;
    unsure.push(linked);
  }
  return unsure;
}

/** Each unsure decision as a question: its message and candidates, quoted from the store. */
async function questionsOf(
  deps: TickDependencies,
  channel: string,
  unsure: readonly LinkDecision[],
  read: readonly LinkableRef[],
): Promise<LinkQuestion[]> {
  const known = new Map<string, AdvisedMessage>();
  for (const r of read) {
    if (r.content !== undefined)
      known.set(r.id, { id: r.id, author: r.content.author, text: r.content.text, ts: r.ts });
  }
  const wanted = new Set<string>();
  for (const d of unsure) for (const id of d.options ?? []) if (id !== null) wanted.add(id);
  const missing = [...wanted].filter((id) => !known.has(id));
  if (missing.length > 0) {
    for (const m of await deps.messages.getMessages(channel, missing)) {
      if (m.deleted === true || m.id === undefined || m.ts === undefined) continue;
      known.set(m.id, { id: m.id, author: m.author ?? "", text: messageText(m), ts: m.ts });
    }
  }
  const candidates = (deps.advisor as LinkAdvisor).candidates;
  return unsure.flatMap((d) => questionOf(d, known, candidates) ?? []);
}

/** The advisor's answers, or a rejection once its time is up (an advisor that hangs included). */
async function askWithin(
  advisor: LinkAdvisor,
  channel: string,
  questions: readonly LinkQuestion[],
): Promise<readonly LinkAnswer[]> {
  if (questions.length === 0) return [];
  const controller = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      const error = new Error(`link advice took longer than ${advisor.timeoutMs} ms`);
      controller.abort(error);
      reject(error);
    }, advisor.timeoutMs);
  });
  try {
    return await Promise.race([advisor.ask(channel, questions, controller.signal), expired]);
  } finally {
    clearTimeout(timer);
  }
}
