/**
 * The scheduled digest (functions/digest, docs/digest-schedule.md): the digest of the period
 * that ended at the start of today (UTC), written to the bucket as Markdown, JSON and HTML
 * under `digests/<yyyy-mm-dd>/`, then posted to Slack when a webhook is configured and published
 * to an SNS topic when one is. The same day gives the same period and keys, so a retried run
 * overwrites what it wrote. A write to the bucket that fails fails the run (the scheduler
 * retries); Slack's and SNS's failures are reported, never thrown: the digest is in the bucket
 * all the same.
 */
import type { DigestBucket } from "./bucket.js";
import { postSlackWebhook, SlackDeliveryError, slackDigestPayload } from "./slack.js";
import {
  type DigestSnsTopic,
  SnsDeliveryError,
  snsDigestMessage,
  snsDigestSubject,
} from "./sns.js";
import type { Digest } from "./types.js";

const DAY_MS = 86_400_000;

export interface DigestRenderers {
  markdown(digest: Digest): string;
  html(digest: Digest): string;
  json(digest: Digest): string;
}

export interface ScheduledDigestDeps {
  /** The channels to digest: the configured ones, or every channel the pipeline knows. */
  channels(): Promise<string[]>;
  /** lib/outlets/digest's `buildDigest` over its sources (`now` epoch ms: when the digest is generated). */
  build(options: {
    channels: string[];
    since: number;
    until: number;
    now: number;
  }): Promise<Digest>;
  render: DigestRenderers;
  bucket: DigestBucket;
  /** The webhook address (a secret: read when needed, never logged), when Slack is configured. */
  slackWebhook?: () => Promise<string>;
  /** Options for the post (retries, timeouts): tests shorten them. */
  slackPost?: Parameters<typeof postSlackWebhook>[2];
  /** The SNS topic the digest's Markdown is published to, when one is configured. */
  snsTopic?: DigestSnsTopic;
}

export interface ScheduledDigestOptions {
  now: number;
  /** The period's length (default 7 days). */
  periodMs?: number;
}

type SlackOutcome =
  | { state: "off" }
  | { state: "sent"; attempts: number }
  | { state: "failed"; code: string; status: number | undefined };

type SnsOutcome =
  | { state: "off" }
  | { state: "sent" }
  | { state: "failed"; code: string; status: number | undefined };

export interface ScheduledDigestSummary {
  since: number;
  until: number;
  channels: number;
  keys: string[];
  slack: SlackOutcome;
  sns: SnsOutcome;
  /** Counts only, for logs and metrics: never a topic or a question. */
  topics: number;
  unanswered: number;
  answered: number;
}

/** The keys of the period ending at `until`: `digests/<day before until>/digest.{md,json,html}`. */
function digestKeys(until: number): { md: string; json: string; html: string } {
  const day = new Date(until - 1).toISOString().slice(0, 10);
  const prefix = `digests/${day}/digest`;
  return { md: `${prefix}.md`, json: `${prefix}.json`, html: `${prefix}.html` };
}

export async function runScheduledDigest(
  deps: ScheduledDigestDeps,
  options: ScheduledDigestOptions,
): Promise<ScheduledDigestSummary> {
  const periodMs = options.periodMs ?? 7 * DAY_MS;
  const until = Math.floor(options.now / DAY_MS) * DAY_MS;
  const since = until - periodMs;
  const channels = await deps.channels();
  const digest = await deps.build({ channels, since, until, now: options.now });
  const keys = digestKeys(until);
  // JSON first: a reader that finds the Markdown can rely on the JSON being there.
  await deps.bucket.put(keys.json, deps.render.json(digest), "application/json; charset=utf-8");
  await deps.bucket.put(keys.html, deps.render.html(digest), "text/html; charset=utf-8");
  const markdown = deps.render.markdown(digest);
  await deps.bucket.put(keys.md, markdown, "text/markdown; charset=utf-8");
  // Each delivery on its own: neither throws, neither waits for the other.
  const [slack, sns] = await Promise.all([
    postToSlack(deps, digest),
    publishToSns(deps, digest, markdown, keys.md),
  ]);
  return {
    since,
    until,
    channels: channels.length,
    keys: [keys.json, keys.html, keys.md],
    slack,
    sns,
    topics: digest.topics.length,
    unanswered: digest.unanswered.length,
    answered: digest.answered.length,
  };
}

async function postToSlack(deps: ScheduledDigestDeps, digest: Digest): Promise<SlackOutcome> {
  if (deps.slackWebhook === undefined) return { state: "off" };
  try {
    const url = await deps.slackWebhook();
    const { attempts } = await postSlackWebhook(url, slackDigestPayload(digest), deps.slackPost);
    return { state: "sent", attempts };
  } catch (error) {
    if (error instanceof SlackDeliveryError) {
      return { state: "failed", code: error.code, status: error.status };
    }
    // The secret could not be read, or was no address: named by kind, never by its value.
    return { state: "failed", code: "SLACK_WEBHOOK_UNREADABLE", status: undefined };
  }
}

async function publishToSns(
  deps: ScheduledDigestDeps,
  digest: Digest,
  markdown: string,
  fullKey: string,
): Promise<SnsOutcome> {
  if (deps.snsTopic === undefined) return { state: "off" };
  try {
    await deps.snsTopic.publish(snsDigestSubject(digest), snsDigestMessage(markdown, { fullKey }));
    return { state: "sent" };
  } catch (error) {
    if (error instanceof SnsDeliveryError) {
      return { state: "failed", code: error.code, status: error.status };
    }
    return { state: "failed", code: "SNS_UNAVAILABLE", status: undefined };
  }
}
