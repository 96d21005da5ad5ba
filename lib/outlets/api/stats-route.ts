/**
 * `GET /channels/{c}/stats`: a channel's health over a period (lib/knowledge/health), from its
 * questions index (read whole, up to `FAQ_QUESTIONS`, as the FAQ reads it), the answering messages
 * read by id (up to `STATS_ANSWERS`) and when its conversations began.
 */
import { channelHealth } from "../../knowledge/health/index.js";
import type { SegmentResult } from "../../knowledge/store/index.js";
import { ApiUnavailableError } from "./errors.js";
import { readQuestions } from "./faq-route.js";
import { STATS_ANSWERS, STATS_BUCKETS } from "./limits.js";
import { digestPeriod } from "./period.js";
import type { ApiSources, StatsSource } from "./ports.js";
import { enumParameter, idParameter, queryParameters } from "./request.js";
import type { StatsPage } from "./schemas.js";

interface StatsRouteContext {
  mustBeKnown: (sources: ApiSources, channel: string) => Promise<void>;
  /** What the period's default end is (`?until=`), as the digest route reads it. */
  now: number;
  /** People who asked not to be named among the answerers (names or ids). */
  optOut: readonly string[];
}

export async function statsRoute(
  sources: ApiSources,
  rawQuery: string,
  rawChannel: string,
  context: StatsRouteContext,
): Promise<StatsPage> {
  const channel = idParameter("channel", rawChannel);
  const query = queryParameters(rawQuery, ["since", "until", "bucket"]);
  const period = digestPeriod(query.get("since"), query.get("until"), context.now);
  const bucket = enumParameter("bucket", query.get("bucket"), STATS_BUCKETS) ?? STATS_BUCKETS[0];
  if (sources.questions === undefined) throw new ApiUnavailableError("questions");
  if (sources.stats === undefined) throw new ApiUnavailableError("stats");
  await context.mustBeKnown(sources, channel);
  const read = await readQuestions(sources.questions, channel);
  const questions = read.questions.filter(
    (q) => q.askedTs >= period.since && q.askedTs < period.until,
  );
  const ids = [...new Set(questions.flatMap((q) => (q.status === "answered" ? q.answerIds : [])))];
  const answers = await sources.stats.messages(channel, ids.slice(0, STATS_ANSWERS));
  const conversations = await sources.stats.conversations(channel, period);
  return {
    channel,
    complete: read.complete && ids.length <= STATS_ANSWERS,
    ...channelHealth({ period, bucket, questions, answers, conversations, optOut: context.optOut }),
  };
}

/** Reads a channel's messages by id, as the history stores do (`messageFacts`, `getMessages`). */
interface MessagesById {
  getMessages(
    channel: string,
    ids: readonly string[],
  ): Promise<{ id?: string; ts?: number; author?: string; kind?: string; deleted?: boolean }[]>;
}

/**
 * A {@link StatsSource} over a channel's results (`ResultStore.listResults`) and its messages
 * read by id: an erased person's messages are deleted, so never an answer here.
 */
export function storeStatsSource(
  results: { listResults(channel: string): Promise<SegmentResult[]> },
  messages: MessagesById,
): StatsSource {
  return {
    async conversations(channel, { since, until }) {
      return (await results.listResults(channel))
        .map((r) => r.first.ts)
        .filter((ts) => ts >= since && ts < until);
    },
    async messages(channel, ids) {
      if (ids.length === 0) return [];
      return (await messages.getMessages(channel, ids)).flatMap((m) =>
        m.id === undefined || m.ts === undefined || m.deleted === true
          ? []
          : [
              {
                id: m.id,
                ts: m.ts,
                ...(m.author !== undefined && { author: m.author }),
                ...(m.kind === "bot" && { bot: true }),
              },
            ],
      );
    },
  };
}
