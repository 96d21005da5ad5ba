/**
 * What the ask endpoints share: the question handed on (to be answered after the platform's
 * acknowledgement), their counts, and the rate limit. The limit is token buckets in the warm
 * function's memory, one per person and one per channel: no table to read inside the 3 seconds a
 * platform waits, and with the endpoint's reserved concurrency N, a person gets at most N times
 * the limit across instances; a cold start forgets it (it bounds a flood, not a quota).
 */
import type { ConnectorError } from "./errors.js";
import {
  type ChatScope,
  type ConnectorLog,
  type HttpResponse,
  outOfScope,
  RefusalLog,
  refusalStatus,
  reply,
} from "./receive.js";

/** A question to answer: where it was asked, its search words, where the answer goes. */
export type AskRequest =
  | {
      platform: "slack";
      channel: string;
      words: string;
      /** A slash command's: where its answer goes. */
      responseUrl?: string;
      inChannel: boolean;
      /** An app mention's: the thread its answer is posted in (with the bot token). */
      thread?: string;
    }
  | {
      platform: "discord";
      channel: string;
      words: string;
      guild?: string;
      applicationId: string;
      token: string;
    }
  | {
      platform: "telegram";
      channel: string;
      words: string;
      chatUsername?: string;
      replyTo?: number;
    };

/** A mark's action, as a correction names it. */
export type MarkAction = "answered" | "reopen" | "hidden";

/**
 * A message a person marked as the answer to a question ("Mark as answer"; or its question
 * reopened, or hidden), to be recorded after
 * the platform's acknowledgement: the store's channel and message ids, who marked it, its thread
 * or the message it replies to as the platform said, and where the person is told.
 */
export type MarkRequest = {
  channel: string;
  messageId: string;
  /** What the person said: the message answers its question, or its question is reopened or hidden. */
  action: MarkAction;
  by: string;
  thread?: string;
  replyTo?: string;
} & (
  | { platform: "slack"; responseUrl: string }
  | { platform: "discord"; applicationId: string; token: string }
);

/** The ask endpoints' counts. */
export type AskMetric =
  | "AsksReceived"
  | "AsksTaken"
  | "AsksLimited"
  | "AsksIgnored"
  | "AsksRefused"
  | "AsksFailed";

export interface AskLimits {
  /** Questions one person may ask a minute (default 5). */
  perPerson?: number;
  /** Questions one channel may ask a minute (default 20). */
  perChannel?: number;
}

/** Buckets kept at most: past it, the least recently used are forgotten. */
const MAX_BUCKETS = 10_000;
const MINUTE_MS = 60_000;

interface Bucket {
  tokens: number;
  at: number;
}

/**
 * Token buckets per person and per channel, refilled continuously: a person may ask
 * `perPerson` questions at once and then one every `60 / perPerson` seconds; a channel likewise.
 */
export class AskRateLimit {
  private readonly buckets = new Map<string, Bucket>();
  private readonly perPerson: number;
  private readonly perChannel: number;

  constructor(
    limits: AskLimits = {},
    private readonly now: () => number = Date.now,
  ) {
    this.perPerson = limits.perPerson ?? 5;
    this.perChannel = limits.perChannel ?? 20;
  }

  /**
   * Takes a question of `person` in `channel` (`platform` keeps ids of two platforms apart):
   * 0 when taken, else the seconds until it would be. Nothing is taken from either bucket when
   * the other is empty.
   */
  take(platform: string, channel: string, person: string): number {
    const now = this.now();
    const keys = [
      [`p\u0000${platform}\u0000${person}`, this.perPerson],
      [`c\u0000${platform}\u0000${channel}`, this.perChannel],
    ] as const;
    const buckets = keys.map(([key, size]) => ({
      key,
      size,
      bucket: this.refilled(key, size, now),
    }));
    const wait = Math.max(
      ...buckets.map(({ size, bucket }) =>
        bucket.tokens >= 1 ? 0 : Math.ceil(((1 - bucket.tokens) * MINUTE_MS) / size / 1000),
      ),
    );
    if (wait > 0) return wait;
    for (const { key, bucket } of buckets) {
      bucket.tokens -= 1;
      this.buckets.delete(key);
      this.buckets.set(key, bucket);
    }
    while (this.buckets.size > MAX_BUCKETS) {
      const oldest = this.buckets.keys().next().value;
      if (oldest === undefined) break;
      this.buckets.delete(oldest);
    }
    return 0;
  }

  private refilled(key: string, size: number, now: number): Bucket {
    const known = this.buckets.get(key);
    if (known === undefined) return { tokens: size, at: now };
    const tokens = Math.min(size, known.tokens + ((now - known.at) * size) / MINUTE_MS);
    return { tokens, at: now };
  }
}

/** What every ask endpoint is given. */
export interface AskReceiverOptions {
  /** Hands the question on to be answered (an asynchronous invocation): quick, or it throws. */
  ask: (request: AskRequest) => Promise<void>;
  /** Hands a marked answer on (to the mark function); absent: "Mark as answer" is off. */
  mark?: (request: MarkRequest) => Promise<void>;
  limit: AskRateLimit;
  /** The channels it answers in (the connectors' allow-list); private chats only with it on. */
  scope?: ChatScope;
  metrics: { add(name: AskMetric, value: number): void };
  log: ConnectorLog;
  now?: () => number;
}

/** What became of a question the request carried, before its answer. */
export type AskTaken =
  | { taken: true }
  | { taken: false; why: "limited"; waitSeconds: number }
  | { taken: false; why: "outside" | "failed" | "empty" | "off" };

/**
 * The common steps once a request is verified and parsed: the channel's scope, the question's
 * words, the person's and channel's buckets, then the hand-off. Logs ids and reasons, never words.
 */
export function takeQuestion(
  options: AskReceiverOptions,
  request: AskRequest,
  person: string,
  isPrivate: boolean,
): Promise<AskTaken> {
  return take(options, request, person, isPrivate, request.words === "", () =>
    options.ask(request),
  );
}

/**
 * A marked answer, taken as a question is (the channel's scope, the same buckets: a mark costs
 * what a question does), then handed to the mark function; `off` without one.
 */
export function takeMark(
  options: AskReceiverOptions,
  request: MarkRequest,
  person: string,
  isPrivate: boolean,
): Promise<AskTaken> {
  const { mark } = options;
  if (mark === undefined) {
    options.metrics.add("AsksIgnored", 1);
    options.log.info("mark while marking is off", { platform: request.platform });
    return Promise.resolve({ taken: false, why: "off" });
  }
  return take(options, request, person, isPrivate, false, () => mark(request));
}

async function take(
  options: AskReceiverOptions,
  request: { platform: string; channel: string },
  person: string,
  isPrivate: boolean,
  empty: boolean,
  handOn: () => Promise<void>,
): Promise<AskTaken> {
  const { metrics, log } = options;
  const where = { platform: request.platform, channel: request.channel };
  const outside = outOfScope(options.scope, request.channel, isPrivate);
  if (outside !== undefined) {
    metrics.add("AsksIgnored", 1);
    log.info("question outside the channels answered", { ...where, reason: outside });
    return { taken: false, why: "outside" };
  }
  if (empty) {
    metrics.add("AsksIgnored", 1);
    log.info("question without words", where);
    return { taken: false, why: "empty" };
  }
  const wait = options.limit.take(request.platform, request.channel, person);
  if (wait > 0) {
    metrics.add("AsksLimited", 1);
    log.info("question over the rate limit", { ...where, waitSeconds: wait });
    return { taken: false, why: "limited", waitSeconds: wait };
  }
  try {
    await handOn();
  } catch (error) {
    metrics.add("AsksFailed", 1);
    log.error("question not handed on", { ...where, error: (error as Error).name });
    return { taken: false, why: "failed" };
  }
  metrics.add("AsksTaken", 1);
  log.info("question taken", where);
  return { taken: true };
}

/** What the asker is told when a question is not taken. */
export function notTakenText(taken: Exclude<AskTaken, { taken: true }>): string {
  switch (taken.why) {
    case "limited":
      return `Too many questions at once: try again in ${taken.waitSeconds} s.`;
    case "outside":
      return "Questions are not answered in this channel.";
    case "empty":
      return "Ask with the words to look for, such as: /ask how do I reset my password";
    case "failed":
      return "The question could not be taken just now: try again in a minute.";
    case "off":
      return "Marking answers is not turned on for this app.";
  }
}

/** How an ask endpoint answers a request it refuses: counted, logged at a bounded rate, 4xx. */
export function askRefusals(options: AskReceiverOptions): (error: ConnectorError) => HttpResponse {
  const refusals = new RefusalLog(options.log, options.now);
  return (error) => {
    options.metrics.add("AsksRefused", 1);
    refusals.refused(error);
    return reply(refusalStatus(error), JSON.stringify({ error: error.code }));
  };
}

/**
 * The secret or key requests are verified with, read per request (the reader caches it); when
 * it cannot be read, the 500 to answer with, counted and logged by the error's name only.
 */
export async function verifierOf<T>(
  options: AskReceiverOptions,
  what: string,
  read: () => Promise<T>,
): Promise<{ value: T } | { failed: HttpResponse }> {
  try {
    return { value: await read() };
  } catch (error) {
    options.metrics.add("AsksFailed", 1);
    options.log.error(`${what} unreadable`, { error: (error as Error).name });
    return { failed: reply(500, JSON.stringify({ error: `${what} unreadable` })) };
  }
}
