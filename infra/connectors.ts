import { Duration, RemovalPolicy } from "aws-cdk-lib";
import { Metric } from "aws-cdk-lib/aws-cloudwatch";
import type { Table } from "aws-cdk-lib/aws-dynamodb";
import { PolicyStatement } from "aws-cdk-lib/aws-iam";
import { type FunctionUrl, FunctionUrlAuthType } from "aws-cdk-lib/aws-lambda";
import type { RetentionDays } from "aws-cdk-lib/aws-logs";
import { Construct } from "constructs";
import type { ConnectorMetric } from "convoseg/connectors";
import { PipelineFunction } from "./function.js";
import type { Ingestion } from "./ingestion.js";
import { deadLetters, type Observability } from "./observability.js";
import type { QueueWithDeadLetters } from "./queues.js";
import { keyedTable } from "./storage.js";

/** A platform the stack can receive webhooks from, and what its receiver is told. */
export interface WebhookPlatform {
  /** `slack`, `telegram`: the metrics' `service` dimension and the claims' key prefix. */
  readonly name: "slack" | "telegram";
  /** The construct id and the alarms' prefix: `Slack`, `Telegram`. */
  readonly title: string;
  /** The handler module. */
  readonly entry: string;
  /** The environment variable naming the secret. */
  readonly secretVariable: string;
  /** What the secret holds, for descriptions. */
  readonly secretIs: string;
}

export const SLACK: WebhookPlatform = {
  name: "slack",
  title: "Slack",
  entry: "functions/slack/handler.ts",
  secretVariable: "SLACK_SIGNING_SECRET_ARN",
  secretIs: "signing secret",
};

export const TELEGRAM: WebhookPlatform = {
  name: "telegram",
  title: "Telegram",
  entry: "functions/telegram/handler.ts",
  secretVariable: "TELEGRAM_SECRET_TOKEN_ARN",
  secretIs: "webhook secret token",
};

export interface WebhookConnectorProps {
  readonly platform: WebhookPlatform;
  /** Ingestion, which gives it a queue of its own to send to (and nothing else of ingestion). */
  readonly ingestion: Ingestion;
  /** The alarms' topic. */
  readonly observability: Observability;
  /** The Secrets Manager secret the receiver checks requests with. */
  readonly secretArn: string;
  /**
   * Other secrets it may read, by the environment variable that names each (Slack's bot token).
   * @default - none
   */
  readonly extraSecrets?: Readonly<Record<string, string>>;
  readonly logRetention: RetentionDays;
  /**
   * The receiver's reserved concurrency: its public URL cannot take more of the account's.
   * @default none reserved
   */
  readonly reservedConcurrency?: number;
  /**
   * The only chats it takes, comma-separated platform ids.
   * @default every group chat
   */
  readonly channels?: string;
  /**
   * Take one-to-one chats and DMs too.
   * @default false
   */
  readonly privateChats?: boolean;
}

/** Refused requests in five minutes past which someone is knocking, or the secret is wrong. */
const REFUSED_THRESHOLD = 5;
const PERIOD = Duration.minutes(5);

/**
 * A chat platform's webhook receiver (docs/connectors.md): a Lambda behind a Function URL with
 * no IAM auth, because the platform cannot sign AWS requests: the platform's own signature or
 * token, checked with the secret, is the auth. Its role may send to the ingest queue, read that
 * one secret, and put and delete claims in its own table (which events were taken; they expire
 * after a day), nothing else: it only adds messages, as any producer.
 */
export class WebhookConnector extends Construct {
  readonly function: PipelineFunction;
  readonly url: FunctionUrl;
  readonly claims: Table;
  /** Its own queue into ingestion: what comes through it is held to this connector's grant. */
  readonly queue: QueueWithDeadLetters;

  constructor(scope: Construct, id: string, props: WebhookConnectorProps) {
    super(scope, id);
    const { platform } = props;
    // Claims are a day's memory of retries, not data: nothing to keep.
    this.claims = keyedTable(this, "Claims", {
      key: "id",
      timeToLiveAttribute: "expiresAt",
      removalPolicy: RemovalPolicy.DESTROY,
    });
    this.function = new PipelineFunction(this, "Receiver", {
      entry: platform.entry,
      description: `convoseg ${platform.title} connector: webhook requests to the ingest queue`,
      environment: {
        CLAIMS_TABLE: this.claims.tableName,
        [platform.secretVariable]: props.secretArn,
        ...props.extraSecrets,
        POWERTOOLS_SERVICE_NAME: `convoseg-${platform.name}`,
        ...(props.channels === undefined ? {} : { CHANNELS: props.channels }),
        PRIVATE_CHATS: props.privateChats ? "true" : "false",
      },
      // Slack gives up on an answer after 3 s and retries: no point running longer (the work
      // is one claim and one send, tens of milliseconds warm).
      timeout: Duration.seconds(5),
      memorySize: 256,
      logRetention: props.logRetention,
      ...(props.reservedConcurrency
        ? { reservedConcurrentExecutions: props.reservedConcurrency }
        : {}),
    });
    const role = this.function.role;
    // Its platform's channels (only the allowed ones, when it has an allow-list), with their
    // edits and deletions: the platform tells them.
    this.queue = props.ingestion.addProducer(platform.title, role, {
      name: platform.name,
      channels:
        props.channels === undefined
          ? { platform: platform.name }
          : { ids: props.channels.split(",") },
      changes: true,
    });
    this.function.function.addEnvironment("INGEST_QUEUE_URL", this.queue.queue.queueUrl);
    props.observability.addAlarm(`${platform.title}IngestDeadLetters`, {
      description: `${platform.title} lines ingestion refused (outside the connector's channels), rejected or could not store wait in its ingest DLQ.`,
      metric: deadLetters(this.queue.deadLetterQueue),
      threshold: 0,
    });
    role.addToPrincipalPolicy(
      new PolicyStatement({
        actions: ["secretsmanager:GetSecretValue"],
        resources: [props.secretArn, ...Object.values(props.extraSecrets ?? {})],
      }),
    );
    role.addToPrincipalPolicy(
      new PolicyStatement({
        actions: ["dynamodb:PutItem", "dynamodb:DeleteItem"],
        resources: [this.claims.tableArn],
      }),
    );
    this.url = this.function.function.addFunctionUrl({ authType: FunctionUrlAuthType.NONE });
    const metric = (metricName: ConnectorMetric) =>
      new Metric({
        namespace: "convoseg",
        dimensionsMap: { service: platform.name },
        metricName,
        statistic: "Sum",
        period: PERIOD,
      });
    props.observability.addAlarm(`${platform.title}RequestsRefused`, {
      description: `More than ${REFUSED_THRESHOLD} ${platform.title} requests refused in 5 minutes (bad signature or token, stale, malformed): a wrong ${platform.secretIs} in the secret, or someone probing the URL. See docs/connectors.md.`,
      metric: metric("EventsRefused"),
      threshold: REFUSED_THRESHOLD,
    });
    props.observability.addAlarm(`${platform.title}ReceiverErrors`, {
      description: `The ${platform.title} receiver function failed or timed out (a bug: it answers every request it can); the platform retries, then drops the event.`,
      metric: this.function.function.metricErrors({ period: PERIOD, statistic: "Sum" }),
      threshold: 0,
    });
    props.observability.addAlarm(`${platform.title}EventsFailed`, {
      description: `${platform.title} events answered 500 (secret unreadable, claims table or ingest queue failing): the platform retries a few times, then drops them.`,
      metric: metric("EventsFailed"),
      threshold: 0,
    });
  }
}
