import { Duration, type RemovalPolicy, Validations } from "aws-cdk-lib";
import { Metric } from "aws-cdk-lib/aws-cloudwatch";
import type { Table } from "aws-cdk-lib/aws-dynamodb";
import { Rule, Schedule } from "aws-cdk-lib/aws-events";
import { LambdaFunction } from "aws-cdk-lib/aws-events-targets";
import { PolicyStatement } from "aws-cdk-lib/aws-iam";
import type { RetentionDays } from "aws-cdk-lib/aws-logs";
import { Construct } from "constructs";
import type { DiscordConfig } from "./config.js";
import { PipelineFunction } from "./function.js";
import type { Ingestion } from "./ingestion.js";
import { type Observability, deadLetters as waitingIn } from "./observability.js";
import { type QueueWithDeadLetters, secureQueue } from "./queues.js";
import { keyedTable, type Storage } from "./storage.js";

export interface DiscordPollerProps {
  readonly config: DiscordConfig;
  /** The variables its settings set (`environmentOf("discord")`): channels, token, window. */
  readonly environment: Record<string, string>;
  readonly storage: Storage;
  readonly ingestion: Ingestion;
  readonly observability: Observability;
  readonly logRetention: RetentionDays;
  readonly removalPolicy: RemovalPolicy;
}

/** The run stops this long before its timeout, so that the last page's ingestion completes. */
const MARGIN = Duration.seconds(20);

/**
 * The Discord poller (docs/connectors.md), deployed only with `discordChannels`: a scheduled
 * Lambda that reads the channels over REST (Discord's gateway needs a long-lived socket, which
 * Lambda is not) and sends what it reads to the ingest queue, as any producer does. Its own
 * cursors table; it may read the bot token's one secret, read and update its cursors, read
 * messages by key (the re-read window's comparison) and send to the ingest queue: nothing else.
 * One run at a time (reserved concurrency 1), none retried (the next tick resumes at the
 * cursors), and an alarm on any 401/403 (Discord bans a token after 10,000 invalid requests in
 * 10 minutes).
 */
export class DiscordPoller extends Construct {
  readonly function: PipelineFunction;
  readonly cursors: Table;
  /** Its own queue into ingestion: what comes through it is held to Discord's grant. */
  readonly queue: QueueWithDeadLetters;

  constructor(scope: Construct, id: string, props: DiscordPollerProps) {
    super(scope, id);
    const { config } = props;
    this.cursors = keyedTable(this, "Cursors", { key: "key", removalPolicy: props.removalPolicy });
    const period = Duration.minutes(config.scheduleMinutes);
    // A run ends before the next one starts; Lambda's ceiling is 15 minutes.
    const timeout = Duration.seconds(Math.min(15 * 60, period.toSeconds() - 10));
    this.function = new PipelineFunction(this, "Poller", {
      entry: "functions/discord/handler.ts",
      description: "convoseg Discord poller: configured channels and their threads into ingestion",
      environment: {
        ...props.environment,
        CURSORS_TABLE: this.cursors.tableName,
        MESSAGES_TABLE: props.storage.messages.tableName,
        DEADLINE_MARGIN_MS: String(MARGIN.toMilliseconds()),
        POWERTOOLS_SERVICE_NAME: "convoseg-discord",
      },
      timeout,
      memorySize: 512,
      logRetention: props.logRetention,
      reservedConcurrentExecutions: 1,
      retryAttempts: 0,
    });
    const role = this.function.role;
    role.addToPrincipalPolicy(
      new PolicyStatement({
        actions: ["secretsmanager:GetSecretValue"],
        resources: [config.tokenSecretArn],
      }),
    );
    role.addToPrincipalPolicy(
      new PolicyStatement({
        actions: ["dynamodb:BatchGetItem", "dynamodb:UpdateItem"],
        resources: [this.cursors.tableArn],
      }),
    );
    role.addToPrincipalPolicy(
      new PolicyStatement({
        actions: ["dynamodb:BatchGetItem"],
        resources: [props.storage.messages.tableArn],
      }),
    );
    // Its own queue into ingestion: the configured channels' and their threads' lines (thread
    // ids are snowflakes of their own, so the grant is Discord's shape), edits and deletions.
    this.queue = props.ingestion.addProducer("Discord", role, {
      name: "discord",
      channels: { platform: "discord" },
      changes: true,
    });
    this.function.function.addEnvironment("INGEST_QUEUE_URL", this.queue.queue.queueUrl);
    props.observability.addAlarm("DiscordIngestDeadLetters", {
      description:
        "Discord lines ingestion refused (outside Discord's channel ids), rejected or could not store wait in the poller's ingest DLQ.",
      metric: waitingIn(this.queue.deadLetterQueue),
      threshold: 0,
    });

    const deadLetters = secureQueue(this, "ScheduleDeadLetters");
    Validations.of(deadLetters).acknowledge({
      id: "AwsSolutions-SQS3",
      reason:
        "This queue is itself a dead-letter queue: the EventBridge target's, for schedule events that could not be delivered to the poller.",
    });
    new Rule(this, "Schedule", {
      description: `convoseg Discord poller, every ${config.scheduleMinutes} minute(s)`,
      schedule: Schedule.rate(period),
      targets: [
        new LambdaFunction(this.function.function, {
          retryAttempts: 0,
          maxEventAge: Duration.minutes(Math.max(1, config.scheduleMinutes)),
          deadLetterQueue: deadLetters,
        }),
      ],
    });

    // Through the stack's alarms, so that it is named among those the alarm topic lets publish.
    props.observability.addAlarm("DiscordAuthFailures", {
      description:
        "The Discord poller got a 401 (the bot token is invalid: replace the secret) or 403 (the bot lost access to a channel); it stops the run or the channel rather than retry",
      metric: new Metric({
        namespace: "convoseg",
        metricName: "DiscordAuthFailures",
        dimensionsMap: { service: "discord" },
        statistic: "Sum",
        period,
      }),
      threshold: 0,
    });
    // A run that throws or times out (a deadline it could not keep, a bug) is otherwise silent:
    // the schedule only sends the event to its dead-letter queue.
    props.observability.addAlarm("DiscordPollerErrors", {
      description:
        "The Discord poller failed or timed out: read its log; the next scheduled run goes on from the cursors",
      metric: this.function.function.metricErrors({ period, statistic: "Sum" }),
      threshold: 0,
    });
  }
}
