/**
 * `GET /channels/{c}/faq`: a channel's recurring questions as FAQ entries, grouped on request
 * from its questions index (read whole, up to `FAQ_QUESTIONS`) by lib/knowledge/faq.
 */
import { groupQuestions } from "../../knowledge/faq/index.js";
import { ApiUnavailableError } from "./errors.js";
import { FAQ_LIMITS, FAQ_QUESTIONS } from "./limits.js";
import type { ApiSources, QuestionsSource } from "./ports.js";
import { idParameter, limitParameter, queryParameters } from "./request.js";
import type { ApiQuestion, FaqPage } from "./schemas.js";

/** What the questions index is read in: its largest page (KnowledgeReader's MAX_QUESTION_LIMIT). */
const PAGE = 1000;

export async function faqRoute(
  sources: ApiSources,
  rawQuery: string,
  rawChannel: string,
  mustBeKnown: (sources: ApiSources, channel: string) => Promise<void>,
): Promise<FaqPage> {
  const channel = idParameter("channel", rawChannel);
  const query = queryParameters(rawQuery, ["limit"]);
  const limit = limitParameter(query.get("limit"), FAQ_LIMITS);
  if (sources.questions === undefined) throw new ApiUnavailableError("questions");
  const { questions, complete } = await readQuestions(sources.questions, channel);
  if (questions.length === 0) await mustBeKnown(sources, channel);
  return {
    channel,
    questions: questions.length,
    complete,
    faq: groupQuestions(questions, { channel }).slice(0, limit),
  };
}

/**
 * A channel's questions index, whole up to `FAQ_QUESTIONS` (pages of 1,000), and whether it was
 * read to its end.
 */
export async function readQuestions(
  source: QuestionsSource,
  channel: string,
): Promise<{ questions: ApiQuestion[]; complete: boolean }> {
  const questions: ApiQuestion[] = [];
  let cursor: string | null = null;
  do {
    const read: { items: ApiQuestion[]; cursor: string | null } = await source.questions(channel, {
      limit: Math.min(PAGE, FAQ_QUESTIONS - questions.length),
      ...(cursor !== null && { cursor }),
    });
    questions.push(...read.items);
    cursor = read.cursor;
  } while (cursor !== null && questions.length < FAQ_QUESTIONS);
  const kept = questions.slice(0, FAQ_QUESTIONS);
  return { questions: kept, complete: cursor === null && kept.length === questions.length };
}
