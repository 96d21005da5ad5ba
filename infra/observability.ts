import { ArnFormat, Aws, Duration, Lazy, RemovalPolicy, Stack } from "aws-cdk-lib";
import {
  Alarm,
  AlarmStatusWidget,
  ComparisonOperator,
  Dashboard,
  GraphWidget,
  type IMetric,
  MathExpression,
  Metric,
  TreatMissingData,
} from "aws-cdk-lib/aws-cloudwatch";
import { SnsAction } from "aws-cdk-lib/aws-cloudwatch-actions";
import { PolicyStatement, ServicePrincipal } from "aws-cdk-lib/aws-iam";
import { Key } from "aws-cdk-lib/aws-kms";
import { Topic } from "aws-cdk-lib/aws-sns";
import { EmailSubscription } from "aws-cdk-lib/aws-sns-subscriptions";
import type { Queue } from "aws-cdk-lib/aws-sqs";
import { Construct } from "constructs";
import {
  type ExtractionMetricName,
  REDACTION_METRICS,
  type RedactionMetricName,
} from "convoseg/knowledge/write";
import type { MetricName } from "convoseg/pipeline";
import type { ConvosegConfig } from "./config.js";
import type { Extraction } from "./extraction.js";
import type { PipelineFunction } from "./function.js";
import type { Ingestion } from "./ingestion.js";
import type { Segmentation } from "./segmentation.js";
import type { Storage } from "./storage.js";

/** Where `functions/segment/handler.ts` publishes the tick's metrics (Powertools EMF). */
const TICK_METRICS_NAMESPACE = "convoseg";
const TICK_METRICS_DIMENSIONS = { service: "segmenter" };
/** A share as a percentage for a description: `80%`, `12.5%`. */
const percent = (share: number) => `${Number((share * 100).toFixed(2))}%`;
/** A number as metric math reads it: plain decimals, never an exponent (`1e-7`). */
const decimal = (n: number) => n.toFixed(12).replace(/\.?0+$/, "");

/** Where `functions/extract/handler.ts` publishes extraction's metrics (Powertools EMF). */
const EXTRACT_METRICS_NAMESPACE = "convoseg";
const EXTRACT_METRICS_DIMENSIONS = { service: "extractor" };
/**
 * Invalid model replies (after the repair call) per model call, over a period, above which the
 * model or its output mode is not fit for the prompt (a `bedrockOutput` the model handles badly,
 * a model that ignores the schema): such segments fail and are retried, paying again.
 */
const INVALID_OUTPUT_RATE = 0.1;
const INVALID_OUTPUT_PERIOD = Duration.minutes(15);

/** An extraction metric over `period`. */
function extractMetric(metricName: ExtractionMetricName, period: Duration, statistic = "Sum") {
  return new Metric({
    namespace: EXTRACT_METRICS_NAMESPACE,
    metricName,
    dimensionsMap: EXTRACT_METRICS_DIMENSIONS,
    statistic,
    period,
  });
}

/** Where `functions/ingest/handler.ts` publishes ingestion's and redaction's metrics (EMF). */
const INGEST_METRICS_NAMESPACE = "convoseg";
const INGEST_METRICS_DIMENSIONS = { service: "ingest" };
/** The ingestion function's counts of edits and deletions by what they did. */
type ChangeMetricName =
  | `${"Edits" | "Deletions"}${"Applied" | "Unchanged" | "Stale" | "Missing"}`
  | "DeletedMessagesRefused"
  | RedactionMetricName;
const CHANGE_METRICS: ChangeMetricName[] = [
  "EditsApplied",
  "EditsStale",
  "EditsMissing",
  "DeletionsApplied",
  "DeletionsMissing",
];
const TRIMMED_METRICS: ExtractionMetricName[] = [
  "TrimmedTopics",
  "TrimmedReasons",
  "TrimmedTags",
  "TrimmedCandidates",
  "TrimmedTurnTexts",
  "TrimmedMessageIds",
  "TrimmedOversizeCandidates",
  "TrimmedQuestions",
  "TrimmedQuestionTexts",
  "TrimmedAnswers",
  "TrimmedOversizeQuestions",
];

/** A queue's messages waiting: for a dead-letter queue, what was given up on. */
export const deadLetters = (queue: Queue) =>
  queue.metricApproximateNumberOfMessagesVisible({
    statistic: "Maximum",
    period: Duration.minutes(5),
  });

/** A half-width graph. */
const graph = (title: string, left: IMetric[], right: IMetric[] = []) =>
  new GraphWidget({ title, left, right, width: 12 });

/** A function's invocations, errors and throttles, and its longest run. */
const functionGraph = (title: string, fn: PipelineFunction) =>
  graph(
    title,
    [fn.function.metricInvocations(), fn.function.metricErrors(), fn.function.metricThrottles()],
    [fn.function.metricDuration({ statistic: "Maximum" })],
  );

export interface ObservabilityProps {
  /** The validated settings: the schedule, the tick timeout, the dashboard's name, the prices. */
  readonly config: ConvosegConfig;
  /** The tick's functions, its segment queue and its schedule's dead-letter queue. */
  readonly segmentation: Segmentation;
  /** The ingestion function and the ingest queue. */
  readonly ingestion: Ingestion;
  /** The extraction function. */
  readonly extraction: Extraction;
  /** The tables, for their throttling. */
  readonly storage: Storage;
}

/** An alarm: fires when `metric` crosses `threshold`, on `periods` periods in a row. */
export interface AlarmSpec {
  description: string;
  metric: IMetric;
  threshold: number;
  comparison?: ComparisonOperator;
  periods?: number;
  missing?: TreatMissingData;
}

const HOUR = Duration.hours(1);
/** The period of the failed attempts per attempt (`extractFailureRate`) the alarm reads. */
const FAILURE_PERIOD = Duration.minutes(15);
/** How old a queue's oldest message may grow before its alarm fires. */
const SEGMENT_AGE = Duration.hours(1);
const INGEST_AGE = Duration.minutes(15);

/**
 * The pipeline's alarms (to an encrypted SNS topic, optionally with an email subscription) and
 * its dashboard: the tick's and extraction's own metrics, every function, and every queue.
 */
export class Observability extends Construct {
  readonly topic: Topic;
  readonly dashboard: Dashboard;
  readonly alarms: Alarm[] = [];
  /** The alarms' names, as given (their ARNs in the topic's policy; a reference would be a cycle). */
  private readonly alarmNames: string[] = [];
  private readonly tickPeriod: Duration;

  constructor(
    scope: Construct,
    id: string,
    private readonly props: ObservabilityProps,
  ) {
    super(scope, id);
    this.tickPeriod = Duration.minutes(props.config.scheduleMinutes);
    this.topic = this.alarmTopic(props.config.alarmEmail);
    // The order of the alarms is the order of the dashboard's alarm widget.
    this.deadLetterAlarms();
    this.functionAlarms();
    this.modelOutputAlarm();
    this.extractionAlarms();
    this.backlogAlarms();
    this.tickAlarms();
    this.dashboard = new Dashboard(this, "Dashboard", {
      dashboardName: props.config.names.dashboard,
      defaultInterval: Duration.days(1),
    });
    this.dashboard.addWidgets(
      new AlarmStatusWidget({ title: "Alarms", alarms: this.alarms, width: 24 }),
    );
    this.tickWidgets();
    this.ingestionWidgets();
    this.extractionWidgets();
    this.changeWidgets();
    this.dashboard.addWidgets(
      graph("Dead-letter queues", this.deadLetterQueues().map(deadLetters)),
    );
  }

  /** A queue's dead letters: a message in any of them is an alarm. */
  private deadLetterAlarms(): void {
    const [segments, ingest, schedule] = this.deadLetterQueues();
    this.alarm("SegmentDeadLetters", {
      description:
        "Segments the extraction function gave up on (extractMaxAttempts failed attempts, or SQS's last-resort receive limit) wait in the segment DLQ.",
      metric: deadLetters(segments),
      threshold: 0,
    });
    this.alarm("IngestDeadLetters", {
      description: "Chat messages ingestion rejected or could not store wait in the ingest DLQ.",
      metric: deadLetters(ingest),
      threshold: 0,
    });
    this.alarm("CountDeadLetters", {
      description:
        "Stream batches the message counter gave up on: the channel list's message counts miss them.",
      metric: deadLetters(this.props.ingestion.countFailures),
      threshold: 0,
    });
    this.alarm("ScheduleDeadLetters", {
      description: "EventBridge could not invoke the segmentation function for a tick.",
      metric: deadLetters(schedule),
      threshold: 0,
    });
  }

  /** Every function's errors (a timeout included) and throttles. */
  private functionAlarms(): void {
    const { segmentation, ingestion, extraction } = this.props;
    const functionAlarms = (label: string, fn: PipelineFunction, what: string) => {
      this.alarm(`${label}Errors`, {
        description: `The ${what} function failed (an error or a timeout).`,
        metric: fn.function.metricErrors({ period: Duration.minutes(5) }),
        threshold: 0,
      });
      this.alarm(`${label}Throttles`, {
        description: `The ${what} function was throttled.`,
        metric: fn.function.metricThrottles({ period: Duration.minutes(5) }),
        threshold: 0,
      });
    };
    functionAlarms("Tick", segmentation.function, "segmentation");
    // A worker throttled is one still running when the next tick's was started: falling behind.
    if (segmentation.worker) {
      functionAlarms("SegmentWorker", segmentation.worker, "segmentation worker");
    }
    functionAlarms("Ingest", ingestion.function, "ingestion");
    functionAlarms("Count", ingestion.counter, "message counter");
    functionAlarms("Extract", extraction.function, "extraction");
  }

  /** Model replies that are not the JSON asked for, as a share of the model calls. */
  private modelOutputAlarm(): void {
    this.alarm("InvalidModelOutputRate", {
      description: `More than ${INVALID_OUTPUT_RATE * 100}% of model calls ended in a reply that was not the JSON asked for, even after the repair call, in ${INVALID_OUTPUT_PERIOD.toMinutes()} minutes: the model or bedrockOutput does not fit the prompt; those segments are retried and then dead-lettered.`,
      metric: new MathExpression({
        // Every answered call is counted, a failed attempt's too; with none counted in the
        // period (no metric at all), the rate is the count of invalid replies itself.
        expression: "IF(FILL(calls, 0) > 0, invalid / FILL(calls, 0), invalid)",
        usingMetrics: {
          invalid: extractMetric("InvalidModelOutputs", INVALID_OUTPUT_PERIOD),
          calls: extractMetric("LLMCalls", INVALID_OUTPUT_PERIOD),
        },
        label: "Invalid model outputs per LLM call",
        period: INVALID_OUTPUT_PERIOD,
      }),
      threshold: INVALID_OUTPUT_RATE,
    });
  }

  /**
   * Extraction's spend against the daily token budget (its pace in an hour, its share of the
   * day, the pause itself), its failure rate, and a provider refusing the credentials.
   */
  private extractionAlarms(): void {
    const budget = this.props.config.extract.dailyTokenBudget;
    const { tokenPaceHours, dailySpendShare, extractFailureRate } = this.props.config.alarms;
    const tokens = (period: Duration) =>
      new MathExpression({
        expression: "FILL(input, 0) + FILL(output, 0)",
        usingMetrics: {
          input: extractMetric("InputTokens", period),
          output: extractMetric("OutputTokens", period),
        },
        label: "Input and output tokens",
        period,
      });
    this.alarm("TokenBudgetReached", {
      description: `Extraction reached a daily token budget (dailyTokenBudget ${budget}, or channelDailyTokenBudget): segments wait, without model calls, until the next UTC day or until the budget is raised.`,
      metric: extractMetric("BudgetPauses", Duration.minutes(5)),
      threshold: 0,
    });
    this.alarm("TokenSpendHourly", {
      description: `Extraction spent more than 1/${tokenPaceHours} of the daily token budget (${budget}) in an hour: at that pace the budget is gone in ${tokenPaceHours} hours (tokenPaceHours) and extraction pauses.`,
      metric: tokens(HOUR),
      threshold: Math.floor(budget / tokenPaceHours),
    });
    this.alarm("TokenSpendDaily", {
      description: `Extraction spent more than ${percent(dailySpendShare)} of the daily token budget (${budget}) in 24 hours (dailySpendShare).`,
      metric: tokens(Duration.days(1)),
      threshold: Math.floor(budget * dailySpendShare),
    });
    this.alarm("ExtractionFailureRate", {
      description: `More than ${percent(extractFailureRate)} (extractFailureRate) of extraction attempts failed in ${FAILURE_PERIOD.toMinutes()} minutes (waits such as a budget pause are not attempts): the provider is failing or refusing; segments are retried with backoff for hours before the DLQ.`,
      metric: new MathExpression({
        expression:
          "IF(FILL(failed, 0) + FILL(done, 0) > 0, FILL(failed, 0) / (FILL(failed, 0) + FILL(done, 0)), 0)",
        usingMetrics: {
          failed: extractMetric("ExtractionFailures", FAILURE_PERIOD),
          done: extractMetric("SegmentsExtracted", FAILURE_PERIOD),
        },
        label: "Failed attempts per attempt",
        period: FAILURE_PERIOD,
      }),
      threshold: extractFailureRate,
    });
    this.alarm("ModelAuthFailures", {
      description:
        "The model provider refused the credentials or the access (401/403): no retry fixes it. Check the API key (it is read again after a refusal) or the role's model access; the segments wait the longest delay meanwhile.",
      metric: extractMetric("AuthFailures", Duration.minutes(5)),
      threshold: 0,
    });
  }

  /** Queues whose oldest message grows old, and DynamoDB throttling any table. */
  private backlogAlarms(): void {
    const { segmentation, ingestion, storage } = this.props;
    const oldest = (queue: Queue) =>
      queue.metricApproximateAgeOfOldestMessage({
        statistic: "Maximum",
        period: Duration.minutes(5),
      });
    this.alarm("SegmentQueueOldestMessage", {
      description: `A closed segment has waited more than ${SEGMENT_AGE.toHours()} hour(s) for extraction: a budget pause, a provider outage, the breaker open, or extraction not keeping up.`,
      metric: oldest(segmentation.segments.queue),
      threshold: SEGMENT_AGE.toSeconds(),
    });
    this.alarm("IngestQueueOldestMessage", {
      description: `A chat message has waited more than ${INGEST_AGE.toMinutes()} minutes on the ingest queue: ingestion is failing, throttled or not keeping up.`,
      metric: oldest(ingestion.queue.queue),
      threshold: INGEST_AGE.toSeconds(),
    });
    const tables = [storage.messages, storage.channels, storage.conversations, storage.results];
    const usingMetrics: Record<string, IMetric> = {};
    tables.forEach((table, i) => {
      for (const [kind, name] of [
        ["r", "ReadThrottleEvents"],
        ["w", "WriteThrottleEvents"],
      ]) {
        usingMetrics[`${kind}${i}`] = table.metric(name, {
          statistic: "Sum",
          period: Duration.minutes(5),
        });
      }
    });
    this.alarm("DynamoDbThrottles", {
      description:
        "DynamoDB throttled requests to a table in three 5-minute periods in a row: the SDKs retry, but work is slowed (a hot partition, or a table's throughput ceiling).",
      metric: new MathExpression({
        expression: Object.keys(usingMetrics)
          .map((id) => `FILL(${id}, 0)`)
          .join(" + "),
        usingMetrics,
        label: "Throttled read and write events, all tables",
        period: Duration.minutes(5),
      }),
      threshold: 0,
      periods: 3,
    });
  }

  /** The tick's own metrics: failed channels, a backlog that does not drain, missing ticks. */
  private tickAlarms(): void {
    const { config } = this.props;
    this.alarm("ChannelErrors", {
      description: "A channel failed in a tick; it stays due and is retried next tick.",
      metric: this.tickMetric("ChannelErrors"),
      threshold: 0,
    });
    this.alarm("TicksStoppedEarly", {
      description:
        "Three ticks in a row ran out of time budget with channels still due: the backlog is not draining.",
      metric: this.tickMetric("TicksStoppedEarly"),
      threshold: 0,
      periods: 3,
    });
    this.alarm("ArrivalsBehindReadPosition", {
      description:
        "A tick found messages written behind its read position by a writer whose hold it had broken (a writer that hung for minutes): they were delivered, late if their conversation was out. Look for hung or paused ingestion writers.",
      metric: this.tickMetric("ArrivalsBehindReadPosition"),
      threshold: 0,
    });
    this.alarm("SequenceRewound", {
      description:
        "A channel's sequence was set back below positions already handed out: a writer outside ingestion's protocol has UpdateItem on the channels table. The tick moved it back up; messages written meanwhile may be behind the read position (convoseg channel reset re-reads the channel). Find and remove that access.",
      metric: this.tickMetric("SequenceRewound"),
      threshold: 0,
    });
    this.alarm("HoldsRenewed", {
      description:
        "Holds appeared on positions already handed out: a writer outside ingestion's protocol renews or forges holds on the channels table. The tick ages them from the holds they replace and breaks them; find and remove that access.",
      metric: this.tickMetric("HoldsRenewed"),
      threshold: 0,
    });
    this.alarm("ChannelStateLarge", {
      description:
        "A channel's recorded state passed 1 MiB (the tick keeps it under 3 MiB by reading less): very long message ids, a huge open conversation, or many broken holds.",
      metric: this.tickMetric("ChannelStateBytes", "Maximum"),
      threshold: 1024 * 1024,
    });
    // Each tick publishes how long its longest-waiting channel has been due. Healthy channels
    // wait at most a period; a channel retried past two periods and a tick's run is stuck.
    this.alarm("OldestDueChannel", {
      description:
        "A channel has been due for longer than two schedule periods plus a tick: it is failing or the backlog is not draining.",
      metric: this.tickMetric("OldestDueAgeMs", "Maximum"),
      threshold: 2 * config.scheduleMinutes * 60_000 + config.tickTimeoutMs,
    });
    // A tick that never runs publishes no age at all: alarm on the missing ticks too.
    this.alarm("TicksMissing", {
      description:
        "No tick finished in three schedule periods: due channels are not being processed and grow older.",
      metric: this.tickMetric("TickDurationMs", "SampleCount"),
      threshold: 1,
      comparison: ComparisonOperator.LESS_THAN_THRESHOLD,
      periods: 3,
      missing: TreatMissingData.BREACHING,
    });
  }

  /** The dashboard rows of the tick: segments, delays and failures, duration, the workers. */
  private tickWidgets(): void {
    const { segmentation } = this.props;
    const tick = (name: MetricName, statistic?: string) => this.tickMetric(name, statistic);
    this.dashboard.addWidgets(
      graph(
        "Segments",
        [tick("SegmentsEmitted"), tick("MessagesSegmented")],
        [tick("ChannelsProcessed")],
      ),
      graph("Oldest due channel (ms)", [tick("OldestDueAgeMs", "Maximum")]),
      graph("Late, dropped and failed", [
        tick("LateMessages"),
        tick("DroppedMessages"),
        tick("MissingMessages"),
        tick("ChannelErrors"),
        tick("HoldsBroken"),
        tick("HoldsRenewed"),
        tick("SequenceRewound"),
        tick("ArrivalsBehindReadPosition"),
      ]),
    );
    this.dashboard.addWidgets(
      graph(
        "Tick duration (ms) and budget",
        [tick("TickDurationMs", "Average"), tick("TickDurationMs", "Maximum")],
        [tick("TicksStoppedEarly")],
      ),
      functionGraph("Segmentation function", segmentation.function),
      graph("Largest channel state (bytes)", [tick("ChannelStateBytes", "Maximum")]),
    );
    if (segmentation.worker) {
      this.dashboard.addWidgets(
        functionGraph("Segmentation workers", segmentation.worker),
        graph(
          "Workers started, and shares still busy",
          [tick("WorkersInvoked"), tick("WorkerInvokeErrors")],
          [tick("SharesBusy")],
        ),
      );
    }
  }

  /** The ingestion function, and what waits in the two queues. */
  private ingestionWidgets(): void {
    const { segmentation, ingestion } = this.props;
    const queues = [segmentation.segments.queue, ingestion.queue.queue];
    this.dashboard.addWidgets(
      functionGraph("Ingestion function", ingestion.function),
      graph(
        "Queues: messages waiting",
        queues.map((queue) => queue.metricApproximateNumberOfMessagesVisible()),
        queues.map((queue) => queue.metricApproximateAgeOfOldestMessage()),
      ),
    );
  }

  /** Extraction: segments and window latency, tokens and calls, the estimated cost. */
  private extractionWidgets(): void {
    const { config, extraction } = this.props;
    const period = this.tickPeriod;
    const inputTokens = extractMetric("InputTokens", HOUR);
    const outputTokens = extractMetric("OutputTokens", HOUR);
    this.dashboard.addWidgets(
      graph(
        "Extraction: segments",
        [
          extractMetric("SegmentsExtracted", period),
          extractMetric("SegmentsAlreadyExtracted", period),
          extractMetric("ResultsReplaced", period),
          extractMetric("ExtractionFailures", period),
          extractMetric("InvalidModelOutputs", period),
        ],
        [
          extractMetric("WindowLatency", period, "Average"),
          extractMetric("WindowLatency", period, "Maximum"),
        ],
      ),
      graph(
        "LLM tokens and calls per hour",
        [
          inputTokens,
          outputTokens,
          extractMetric("CacheReadTokens", HOUR),
          extractMetric("CacheWriteTokens", HOUR),
        ],
        [
          extractMetric("LLMCalls", HOUR),
          extractMetric("RepairRetries", HOUR),
          extractMetric("WindowsReused", HOUR),
        ],
      ),
    );
    this.dashboard.addWidgets(
      graph(
        "Extraction: waits and give-ups",
        [
          extractMetric("BudgetPauses", period),
          extractMetric("CircuitOpen", period),
          extractMetric("SegmentWaits", period),
        ],
        [extractMetric("AuthFailures", period), extractMetric("SegmentsDeadLettered", period)],
      ),
    );
    const { inputTokenPrice, outputTokenPrice } = config.extract;
    this.dashboard.addWidgets(
      graph("Estimated LLM cost per hour (USD)", [
        new MathExpression({
          // Per-million prices: cache reads and writes, priced differently, are not counted.
          expression: `(input * ${decimal(inputTokenPrice)} + output * ${decimal(outputTokenPrice)}) / 1000000`,
          usingMetrics: { input: inputTokens, output: outputTokens },
          label: `USD at ${inputTokenPrice} in / ${outputTokenPrice} out per million tokens`,
          period: HOUR,
        }),
      ]),
      functionGraph("Extraction function", extraction.function),
    );
  }

  /**
   * Edits and deletions: what ingestion applied, what the tick left out, what redaction touched
   * after delivery (the ingestion function redacts), and what the bounds cut from stored results.
   */
  private changeWidgets(): void {
    const period = this.tickPeriod;
    const ingest = (metricName: ChangeMetricName) =>
      new Metric({
        namespace: INGEST_METRICS_NAMESPACE,
        metricName,
        dimensionsMap: INGEST_METRICS_DIMENSIONS,
        statistic: "Sum",
        period,
      });
    this.dashboard.addWidgets(
      graph("Edits and deletions", CHANGE_METRICS.map(ingest), [
        this.tickMetric("DeletedBeforeDelivery"),
        ingest("DeletedMessagesRefused"),
      ]),
      graph("Redaction after delivery", REDACTION_METRICS.map(ingest), [
        extractMetric("ChangesAfterExtraction", period),
        extractMetric("SegmentsAllDeleted", period),
      ]),
      graph(
        "Stored results: what the bounds cut",
        TRIMMED_METRICS.map((name) => extractMetric(name, period)),
      ),
    );
  }

  /** The segment queue's, the ingest queue's and the schedule's dead-letter queues. */
  private deadLetterQueues(): Queue[] {
    const { segmentation, ingestion } = this.props;
    return [
      segmentation.segments.deadLetterQueue,
      ingestion.queue.deadLetterQueue,
      segmentation.scheduleDeadLetterQueue,
    ];
  }

  /** A tick metric over a schedule period. */
  private tickMetric(metricName: MetricName, statistic = "Sum"): Metric {
    return new Metric({
      namespace: TICK_METRICS_NAMESPACE,
      metricName,
      dimensionsMap: TICK_METRICS_DIMENSIONS,
      statistic,
      period: this.tickPeriod,
    });
  }

  /**
   * An alarm of a construct built after this one (a connector's), on the same topic and in the
   * topic's policy like the others.
   */
  addAlarm(name: string, spec: AlarmSpec): void {
    this.alarm(name, spec);
  }

  /** An alarm named after the stack, notifying the topic when it fires and when it clears. */
  private alarm(name: string, spec: AlarmSpec): void {
    const alarmName = `${Stack.of(this).stackName}-${name}`;
    this.alarmNames.push(alarmName);
    const created = new Alarm(this, name, {
      alarmName,
      alarmDescription: spec.description,
      metric: spec.metric,
      threshold: spec.threshold,
      comparisonOperator: spec.comparison ?? ComparisonOperator.GREATER_THAN_THRESHOLD,
      evaluationPeriods: spec.periods ?? 1,
      treatMissingData: spec.missing ?? TreatMissingData.NOT_BREACHING,
    });
    created.addAlarmAction(new SnsAction(this.topic));
    created.addOkAction(new SnsAction(this.topic));
    this.alarms.push(created);
  }

  /** The CloudWatch console address of the dashboard. */
  get dashboardUrl(): string {
    return `https://console.aws.amazon.com/cloudwatch/home?region=${Aws.REGION}#dashboards:name=${this.dashboard.dashboardName}`;
  }

  /**
   * The alarm topic, encrypted with its own key: CloudWatch cannot publish to a topic encrypted
   * with the AWS managed SNS key, whose policy cannot grant it. TLS-only, as the queues. Both
   * let CloudWatch in on behalf of this stack's alarms only, each named (no confused deputy: an
   * alarm of another stack or account cannot publish here), the list read at synthesis so that
   * every alarm added counts.
   */
  private alarmTopic(email: string | undefined): Topic {
    const cloudwatch = new ServicePrincipal("cloudwatch.amazonaws.com");
    const stack = Stack.of(this);
    const ownAlarms = {
      ArnEquals: {
        "aws:SourceArn": Lazy.list({
          produce: () =>
            this.alarmNames.map((alarmName) =>
              stack.formatArn({
                service: "cloudwatch",
                resource: "alarm",
                resourceName: alarmName,
                arnFormat: ArnFormat.COLON_RESOURCE_NAME,
              }),
            ),
        }),
      },
      StringEquals: { "aws:SourceAccount": Aws.ACCOUNT_ID },
    };
    const key = new Key(this, "AlarmKey", {
      description: "convoseg alarm topic encryption",
      enableKeyRotation: true,
      // It only protects notifications in transit through SNS: nothing to decrypt later.
      removalPolicy: RemovalPolicy.DESTROY,
    });
    key.addToResourcePolicy(
      new PolicyStatement({
        principals: [cloudwatch],
        actions: ["kms:Decrypt", "kms:GenerateDataKey"],
        resources: ["*"],
        conditions: ownAlarms,
      }),
    );
    const topic = new Topic(this, "Alarms", {
      displayName: "convoseg alarms",
      masterKey: key,
      enforceSSL: true,
    });
    topic.addToResourcePolicy(
      new PolicyStatement({
        principals: [cloudwatch],
        actions: ["sns:Publish"],
        resources: [topic.topicArn],
        conditions: ownAlarms,
      }),
    );
    if (email) topic.addSubscription(new EmailSubscription(email));
    return topic;
  }
}
