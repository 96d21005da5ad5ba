import { Logger } from "@aws-lambda-powertools/logger";
import { Metrics, MetricUnit } from "@aws-lambda-powertools/metrics";
import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { SQSClient } from "@aws-sdk/client-sqs";
import { MAX_RETENTION_DAYS } from "convoseg/dynamodb";
import { MAX_CHANGE_HOLD_HOURS } from "convoseg/history/changes";
import { DynamoDbStore } from "convoseg/history/dynamodb";
import {
  type ChangeListener,
  DEFAULT_MAX_BATCH,
  IngestClient,
  MAX_BATCH_LIMIT,
  type ProducerGrant,
  parseProducerGrants,
} from "convoseg/ingest";
import { DynamoDbResultStore } from "convoseg/knowledge/store";
import {
  KnowledgeRedactor,
  type KnowledgeRedactorOptions,
  queueReextraction,
  storedMessageStates,
} from "convoseg/knowledge/write";
import { PipelineConfigError, readDueShards } from "convoseg/pipeline";
import { deployedSearchIndexer, searchEnvironment } from "convoseg/search/lancedb";
import { createIngestHandler } from "./ingest-handler.js";

/** Read once at cold start: a missing setting fails the first invocation with its name. */
function requiredEnvironment(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`ingest: environment variable ${name} must be set`);
  if (value.trim() === "") {
    throw new Error(
      `ingest: environment variable ${name} must not be blank (got ${JSON.stringify(value)})`,
    );
  }
  return value;
}
const metrics = new Metrics({ namespace: "convoseg", serviceName: "ingest" });
const dynamodb = new DynamoDBClient({});
const messagesTable = requiredEnvironment("MESSAGES_TABLE");

const client = new IngestClient({
  client: dynamodb,
  messagesTable,
  channelsTable: requiredEnvironment("CHANNELS_TABLE"),
  dueShards: dueShards(),
  messageRetentionDays: retentionDays(),
  changeHoldHours: changeHoldHours(),
  onChanged: redaction(),
});

/**
 * With `RESULTS_TABLE`, an edit or deletion applied to a message is followed into what was
 * learned from it (results, topic entries, window replies; docs/extraction.md): the store keeps
 * the change pending until this succeeds, so a failure is re-sent, not lost.
 */
function redaction(): ChangeListener | undefined {
  const resultsTable = process.env.RESULTS_TABLE;
  const reextraction = reextractionOptions();
  if (resultsTable === undefined) {
    if (reextraction.requestReextraction !== undefined) {
      throw new Error(
        "ingest: environment variable SEGMENT_QUEUE_URL is set without RESULTS_TABLE: re-extraction follows redaction, which needs the results table",
      );
    }
    return undefined;
  }
  // With `SEARCH_INDEX_URI`, the redacted segments' search documents are written again.
  const search = deployedSearchIndexer({
    ...searchEnvironment(process.env),
    client: dynamodb,
    resultsTable,
    messagesTable,
  });
  const redactor = new KnowledgeRedactor({
    store: new DynamoDbResultStore({ client: dynamodb, tableName: resultsTable }),
    states: storedMessageStates(new DynamoDbStore({ client: dynamodb, tableName: messagesTable })),
    metrics: { add: (name, value) => metrics.addMetric(name, MetricUnit.Count, value) },
    ...reextraction,
    ...(search && { onRedacted: search.redacted.bind(search) }),
  });
  return async (channel, changes) => {
    const dated = changes.flatMap(({ id, ts, kind }) =>
      ts === undefined ? [] : [{ id, ts, kind }],
    );
    await redactor.redact(channel, dated);
  };
}

/**
 * With `SEGMENT_QUEUE_URL`, a segment is sent back to that queue (flagged `convoseg-reextract`,
 * by reference to the messages table) once more than `REEXTRACT_CHANGED_SHARE` of its messages
 * changed since its extraction; without it, none is, whatever the share.
 */
function reextractionOptions(): Pick<
  KnowledgeRedactorOptions,
  "reextractChangedShare" | "requestReextraction"
> {
  const share = process.env.REEXTRACT_CHANGED_SHARE;
  const options: Pick<KnowledgeRedactorOptions, "reextractChangedShare" | "requestReextraction"> =
    {};
  if (share !== undefined) {
    // As the extraction function reads it (readExtractConfig): a plain decimal, 0 to 1.
    if (!/^\d+(\.\d+)?$/.test(share) || Number(share) > 1) {
      throw new Error(
        `ingest: environment variable REEXTRACT_CHANGED_SHARE must be a number from 0 (re-extract on every change) to 1 (never) (got ${JSON.stringify(share)})`,
      );
    }
    options.reextractChangedShare = Number(share);
  }
  const queueUrl = process.env.SEGMENT_QUEUE_URL;
  if (queueUrl !== undefined) {
    if (!/^\S+$/.test(queueUrl)) {
      throw new Error(
        `ingest: environment variable SEGMENT_QUEUE_URL must be a queue URL (got ${JSON.stringify(queueUrl)})`,
      );
    }
    // The client's own endpoint, not the URL's host, as the extraction function's: the same
    // host in AWS, the emulator's (or a test's proxy) locally.
    const sqs = new SQSClient({ useQueueUrlAsEndpoint: false });
    options.requestReextraction = queueReextraction(sqs, queueUrl, messagesTable);
  }
  return options;
}

/** The due index's shard count, as the tick reads it: a bad value is named like the others. */
function dueShards(): number {
  try {
    return readDueShards(process.env);
  } catch (error) {
    if (!(error instanceof PipelineConfigError)) throw error;
    throw new Error(`ingest: environment variable ${error.setting} ${error.problem}`);
  }
}

/** The largest direct batch: `MAX_BATCH`, a whole number up to MAX_BATCH_LIMIT, else the default. */
function maxBatch(): number {
  const value = process.env.MAX_BATCH;
  if (value === undefined) return DEFAULT_MAX_BATCH;
  const n = /^[1-9]\d{0,4}$/.test(value) ? Number(value) : Number.NaN;
  if (!(n <= MAX_BATCH_LIMIT)) {
    throw new Error(
      `ingest: environment variable MAX_BATCH must be an integer from 1 to ${MAX_BATCH_LIMIT} (got ${JSON.stringify(value)})`,
    );
  }
  return n;
}

/**
 * A whole number of `unit` from 1 to `max` in the variable `name`; unset, undefined. A bad
 * value fails the cold start naming the variable.
 */
function wholeNumber(name: string, unit: string, max: number): number | undefined {
  const value = process.env[name];
  if (value === undefined) return undefined;
  const n = /^[1-9]\d{0,5}$/.test(value) ? Number(value) : Number.NaN;
  if (!(n <= max)) {
    throw new Error(
      `ingest: environment variable ${name} must be a whole number of ${unit} from 1 to ${max} (got ${JSON.stringify(value)})`,
    );
  }
  return n;
}

/** `MESSAGE_RETENTION_DAYS`: days a message is kept after its platform time; unset, kept. */
function retentionDays(): number | undefined {
  return wholeNumber("MESSAGE_RETENTION_DAYS", "days", MAX_RETENTION_DAYS);
}

/**
 * `PRODUCERS`: each producer queue's grant by queue ARN (JSON, written by the stack). Unset:
 * every queue is trusted, as before producer grants.
 */
function producerGrants(): Map<string, ProducerGrant> | undefined {
  const value = process.env.PRODUCERS;
  if (value === undefined) return undefined;
  try {
    return parseProducerGrants(value);
  } catch (error) {
    throw new Error(`ingest: environment variable PRODUCERS: ${(error as Error).message}`);
  }
}

/**
 * `CHANGE_HOLD_HOURS`: hours an edit or deletion of a message not stored is held; unset, the
 * store's default (24).
 */
function changeHoldHours(): number | undefined {
  return wholeNumber("CHANGE_HOLD_HOURS", "hours", MAX_CHANGE_HOLD_HOURS);
}

/** @public The Lambda runtime calls it: infra names this file as the function's entry. */
export const handler = createIngestHandler(
  (messages, grant) => client.ingest(messages, { grant }),
  new Logger({ serviceName: "convoseg-ingest" }),
  maxBatch(),
  {
    add: (name, value) => metrics.addMetric(name, MetricUnit.Count, value),
    refused: (producer, reason, value) => {
      // Its own metric set: the producer and reason are dimensions of this count only.
      const single = metrics.singleMetric();
      single.addDimensions({ producer, reason });
      single.addMetric("LinesRefused", MetricUnit.Count, value);
    },
    // Most batches change nothing: no empty metric set (and no warning about one).
    publish: () => {
      if (metrics.hasStoredMetrics()) metrics.publishStoredMetrics();
    },
  },
  producerGrants(),
);
