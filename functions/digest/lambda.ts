/**
 * The scheduled digest's Lambda, thin: settings from the environment, the webhook address from
 * Secrets Manager (read per run, never logged), the bucket over S3, the SNS topic when
 * `DIGEST_SNS_TOPIC` names one, every channel of the
 * channels table unless `DIGEST_CHANNELS` names them, and lib/outlets/digest's run. What builds and
 * renders the digest comes in as {@link DigestWiring} (`wiring.ts`). Logs and metrics carry
 * counts, keys, codes and statuses: never a topic, a question or the webhook.
 */
import { Logger } from "@aws-lambda-powertools/logger";
import { Metrics, MetricUnit } from "@aws-lambda-powertools/metrics";
import { getSecret } from "@aws-lambda-powertools/parameters/secrets";
import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { type ChannelsPosition, dynamoDbApiSources } from "convoseg/api";
import {
  type DigestGroup,
  type DigestRenderers,
  digestS3Client,
  digestSnsClient,
  platformGroups,
  runScheduledDigests,
  type ScheduledDigestDeps,
  s3Bucket,
  snsTopic,
} from "convoseg/digest";
import { parseDuration } from "convoseg/duration";

/** What h-digest provides: the builder over the stack's tables, and the renderers. */
export interface DigestWiring {
  build(
    client: DynamoDBClient,
    tables: { resultsTable: string; messagesTable: string; channelsTable: string },
  ): ScheduledDigestDeps["build"];
  render: DigestRenderers;
}

/** Channels digested at most when none are named: more are left out (and counted in the log). */
const MAX_DIGEST_CHANNELS = 500;

class DigestConfigError extends Error {
  override readonly name: string = "DigestConfigError";
  readonly code = "DIGEST_CONFIG";
}

function required(name: string): string {
  const value = process.env[name];
  if (!value) throw new DigestConfigError(`digest: ${name} is not set`);
  return value;
}

/**
 * `DIGEST_CHANNELS`: a JSON array of channel groups, each an array of channel ids (ids may hold
 * commas), or of channel ids (one group); unset, the channels table's, by platform.
 */
function namedGroups(): DigestGroup[] | undefined {
  const text = process.env.DIGEST_CHANNELS;
  if (!text) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    value = undefined;
  }
  const ids = (list: unknown): list is string[] =>
    Array.isArray(list) && list.length > 0 && list.every((c) => typeof c === "string" && c !== "");
  if (ids(value)) return [{ name: "", channels: value }];
  if (!Array.isArray(value) || value.length === 0 || !value.every(ids)) {
    throw new DigestConfigError(
      "digest: DIGEST_CHANNELS must be a JSON array of channel ids, or of groups of them",
    );
  }
  const groups = value as string[][];
  return groups.map((channels, i) => ({
    name: groups.length === 1 ? "" : `group-${i + 1}`,
    channels,
  }));
}

export function digestLambda(wiring: DigestWiring) {
  const log = new Logger({ serviceName: "convoseg-digest" });
  const metrics = new Metrics({ namespace: "convoseg", serviceName: "digest" });
  const client = new DynamoDBClient({});
  const tables = {
    resultsTable: required("RESULTS_TABLE"),
    messagesTable: required("MESSAGES_TABLE"),
    channelsTable: required("CHANNELS_TABLE"),
  };
  const periodMs = parseDuration(process.env.DIGEST_PERIOD ?? "7d", "DIGEST_PERIOD");
  const named = namedGroups();
  const secretId = process.env.SLACK_WEBHOOK_SECRET || undefined;
  required("AWS_REGION");
  // The function's role by the SDK's default chain; AWS_ENDPOINT_URL_S3 (an emulator, a local
  // server) is read by the SDK itself, and takes path-style addressing.
  const bucket = s3Bucket({
    bucket: required("DIGEST_BUCKET"),
    client: digestS3Client({ forcePathStyle: Boolean(process.env.AWS_ENDPOINT_URL_S3) }),
  });
  const topicArn = process.env.DIGEST_SNS_TOPIC || undefined;
  const listing = dynamoDbApiSources({ client, ...tables });

  async function allChannels(): Promise<string[]> {
    const found: string[] = [];
    let after: ChannelsPosition | null = null;
    do {
      const read = await listing.channels({ after, evaluate: 300 });
      found.push(...read.channels);
      after = read.next;
    } while (after !== null && found.length < MAX_DIGEST_CHANNELS);
    if (found.length > MAX_DIGEST_CHANNELS || after !== null) {
      log.warn("channels capped", { max: MAX_DIGEST_CHANNELS });
    }
    // By id, as a digest lists them: a listing comes in the order the Scan reads the table.
    return found.slice(0, MAX_DIGEST_CHANNELS).sort();
  }

  const deps: Omit<ScheduledDigestDeps, "channels"> & { groups(): Promise<DigestGroup[]> } = {
    groups: async () => named ?? platformGroups(await allChannels()),
    build: wiring.build(client, tables),
    render: wiring.render,
    bucket,
    // AWS_ENDPOINT_URL_SNS, when set, is read by the SDK itself.
    ...(topicArn !== undefined && { snsTopic: snsTopic({ topicArn, client: digestSnsClient() }) }),
    ...(secretId !== undefined && {
      slackWebhook: async () => {
        const value = await getSecret(secretId, { forceFetch: true });
        if (typeof value !== "string") throw new DigestConfigError("digest: not a string secret");
        return value.trim();
      },
    }),
  };

  // Its summaries are the invocation's result, read by whoever runs it by hand.
  return async function handler() {
    try {
      const summaries = await runScheduledDigests(deps, { now: Date.now(), periodMs });
      metrics.addMetric("DigestRuns", MetricUnit.Count, 1);
      for (const summary of summaries) {
        if (summary.slack.state === "sent") {
          metrics.addMetric("DigestSlackSent", MetricUnit.Count, 1);
        }
        if (summary.slack.state === "failed") {
          metrics.addMetric("DigestSlackFailures", MetricUnit.Count, 1);
        }
        if (summary.sns.state === "sent") metrics.addMetric("DigestSnsSent", MetricUnit.Count, 1);
        if (summary.sns.state === "failed") {
          metrics.addMetric("DigestSnsFailures", MetricUnit.Count, 1);
        }
        log.info("digest written", {
          group: summary.group,
          since: summary.since,
          until: summary.until,
          channels: summary.channels,
          keys: summary.keys,
          topics: summary.topics,
          unanswered: summary.unanswered,
          unclear: summary.unclear,
          answered: summary.answered,
          slack: summary.slack,
          sns: summary.sns,
        });
      }
      return summaries;
    } catch (error) {
      // Name and code only: a message may quote an item. The scheduler retries the run.
      log.error("digest failed", {
        name: (error as Error).name,
        code: (error as { code?: string }).code,
        status: (error as { status?: number }).status,
      });
      metrics.addMetric("DigestFailures", MetricUnit.Count, 1);
      throw error;
    } finally {
      if (metrics.hasStoredMetrics()) metrics.publishStoredMetrics();
    }
  };
}
