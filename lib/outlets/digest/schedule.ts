/**
 * The scheduled digest (functions/digest, docs/digest-schedule.md): the digest of the period
 * that ended at the start of today (UTC), written to the bucket as Markdown, JSON and HTML
 * under `digests/<yyyy-mm-dd>/`, then posted to Slack when a webhook is configured and published
 * to an SNS topic when one is. The same day gives the same period and keys, so a retried run
 * overwrites what it wrote. A write to the bucket that fails fails the run (the scheduler
 * retries); Slack's and SNS's failures are reported, never thrown: the digest is in the bucket
 * all the same.
 */
import { channelPlatform, isPrivateChat } from "../../base/identity/index.js";
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
  /**
   * The channel group's name: its files go under `digests/<day>/<group>/`. Default: none, the
   * files are `digests/<day>/digest.*`.
   */
  group?: string;
}

/** Channels digested together: one digest, one post, one message to the topic. */
export interface DigestGroup {
  /** Names its files' folder (`slack`, `telegram`, `discord`, `other`, `group-2`); "" for none. */
  name: string;
  channels: string[];
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
  /** The channel group's name ("" for the only one). */
  group: string;
  since: number;
  until: number;
  channels: number;
  keys: string[];
  slack: SlackOutcome;
  sns: SnsOutcome;
  /** Counts only, for logs and metrics: never a topic or a question. */
  topics: number;
  unanswered: number;
  unclear: number;
  answered: number;
}

/**
 * The keys of the period ending at `until`: `digests/<day before until>/[<group>/]digest.{md,json,html}`.
 */
function digestKeys(until: number, group: string): { md: string; json: string; html: string } {
  const day = new Date(until - 1).toISOString().slice(0, 10);
  const prefix = `digests/${day}/${group === "" ? "" : `${group}/`}digest`;
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
  const group = options.group ?? "";
  const keys = digestKeys(until, group);
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
    group,
    since,
    until,
    channels: channels.length,
    keys: [keys.json, keys.html, keys.md],
    slack,
    sns,
    topics: digest.topics.length,
    unanswered: digest.unanswered.length,
    unclear: digest.unclear.length,
    answered: digest.answered.length,
  };
}

/**
 * One digest per channel group, one after another (each as {@link runScheduledDigest}), so that
 * one community's digest never carries another's words; no group, one digest of nothing.
 */
export async function runScheduledDigests(
  deps: Omit<ScheduledDigestDeps, "channels"> & { groups(): Promise<DigestGroup[]> },
  options: Omit<ScheduledDigestOptions, "group">,
): Promise<ScheduledDigestSummary[]> {
  const groups = await deps.groups();
  const summaries: ScheduledDigestSummary[] = [];
  for (const { name, channels } of groups.length > 0 ? groups : [{ name: "", channels: [] }]) {
    summaries.push(
      await runScheduledDigest(
        { ...deps, channels: async () => channels },
        { ...options, group: name },
      ),
    );
  }
  return summaries;
}

/**
 * The default groups of a deployment's channels: a digest per platform (Slack, Telegram, Discord
 * channel ids, and `other` for the rest), without anyone's private chat (a Slack DM, a Telegram
 * private chat). A deployment of one platform gets one digest, under the unnamed folder.
 */
export function platformGroups(channels: readonly string[]): DigestGroup[] {
  const byName = new Map<string, string[]>();
  for (const channel of channels) {
    if (isPrivateChat(channel)) continue;
    const name = channelPlatform(channel) ?? "other";
    const group = byName.get(name) ?? [];
    group.push(channel);
    byName.set(name, group);
  }
  const groups = [...byName]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([name, list]) => ({ name, channels: list }));
  return groups.length === 1 ? [{ name: "", channels: groups[0].channels }] : groups;
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
