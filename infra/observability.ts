import { Aws, Duration, RemovalPolicy, Stack } from "aws-cdk-lib";
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
import type { ExtractionMetricName } from "../lib/knowledge/index.js";
import type { MetricName } from "../lib/pipeline/index.js";
import type { ConvosegConfig } from "./config.js";
import type { Extraction } from "./extraction.js";
import type { PipelineFunction } from "./function.js";
import type { Ingestion } from "./ingestion.js";
import type { Segmentation } from "./segmentation.js";

/** Where `functions/segment/handler.ts` publishes the tick's metrics (Powertools EMF). */
const TICK_METRICS_NAMESPACE = "convoseg";
const TICK_METRICS_DIMENSIONS = { service: "segmenter" };
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

export interface ObservabilityProps {
  config: ConvosegConfig;
  segmentation: Segmentation;
  ingestion: Ingestion;
  extraction: Extraction;
}

/** An alarm: fires when `metric` crosses `threshold`, on `periods` periods in a row. */
interface AlarmSpec {
  description: string;
  metric: IMetric;
  threshold: number;
  comparison?: ComparisonOperator;
  periods?: number;
  missing?: TreatMissingData;
}

/**
 * The pipeline's alarms (to an encrypted SNS topic, optionally with an email subscription) and
 * its dashboard: the tick's and extraction's own metrics, every function, and every queue.
 */
export class Observability extends Construct {
  readonly topic: Topic;
  readonly dashboard: Dashboard;
  readonly alarms: Alarm[] = [];

  constructor(scope: Construct, id: string, props: ObservabilityProps) {
    super(scope, id);
    const { config, segmentation, ingestion, extraction } = props;
    const tickPeriod = Duration.minutes(config.scheduleMinutes);
    const tickMetric = (metricName: MetricName, statistic = "Sum") =>
      new Metric({
        namespace: TICK_METRICS_NAMESPACE,
        metricName,
        dimensionsMap: TICK_METRICS_DIMENSIONS,
        statistic,
        period: tickPeriod,
      });
    const extractMetric = (metricName: ExtractionMetricName, period: Duration, statistic = "Sum") =>
      new Metric({
        namespace: EXTRACT_METRICS_NAMESPACE,
        metricName,
        dimensionsMap: EXTRACT_METRICS_DIMENSIONS,
        statistic,
        period,
      });

    this.topic = this.alarmTopic(config.alarmEmail);
    const stackName = Stack.of(this).stackName;
    const alarm = (name: string, spec: AlarmSpec) => {
      const created = new Alarm(this, name, {
        alarmName: `${stackName}-${name}`,
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
    };
    const deadLetters = (queue: Queue) =>
      queue.metricApproximateNumberOfMessagesVisible({
        statistic: "Maximum",
        period: Duration.minutes(5),
      });
    const functionAlarms = (label: string, fn: PipelineFunction, what: string) => {
      alarm(`${label}Errors`, {
        description: `The ${what} function failed (an error or a timeout).`,
        metric: fn.function.metricErrors({ period: Duration.minutes(5) }),
        threshold: 0,
      });
      alarm(`${label}Throttles`, {
        description: `The ${what} function was throttled.`,
        metric: fn.function.metricThrottles({ period: Duration.minutes(5) }),
        threshold: 0,
      });
    };

    alarm("SegmentDeadLetters", {
      description:
        "Segments the extraction function could not extract (5 receives) wait in the segment DLQ.",
      metric: deadLetters(segmentation.segments.deadLetterQueue),
      threshold: 0,
    });
    alarm("IngestDeadLetters", {
      description: "Chat messages ingestion rejected or could not store wait in the ingest DLQ.",
      metric: deadLetters(ingestion.queue.deadLetterQueue),
      threshold: 0,
    });
    alarm("ScheduleDeadLetters", {
      description: "EventBridge could not invoke the segmentation function for a tick.",
      metric: deadLetters(segmentation.scheduleDeadLetterQueue),
      threshold: 0,
    });
    functionAlarms("Tick", segmentation.function, "segmentation");
    // A worker throttled is one still running when the next tick's was started: falling behind.
    if (segmentation.worker) {
      functionAlarms("SegmentWorker", segmentation.worker, "segmentation worker");
    }
    functionAlarms("Ingest", ingestion.function, "ingestion");
    functionAlarms("Extract", extraction.function, "extraction");
    alarm("InvalidModelOutputRate", {
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
    alarm("ChannelErrors", {
      description: "A channel failed in a tick; it stays due and is retried next tick.",
      metric: tickMetric("ChannelErrors"),
      threshold: 0,
    });
    alarm("TicksStoppedEarly", {
      description:
        "Three ticks in a row ran out of time budget with channels still due: the backlog is not draining.",
      metric: tickMetric("TicksStoppedEarly"),
      threshold: 0,
      periods: 3,
    });
    alarm("ArrivalsBehindReadPosition", {
      description:
        "A tick found messages written behind its read position by a writer whose hold it had broken (a writer that hung for minutes): they were delivered, late if their conversation was out. Look for hung or paused ingestion writers.",
      metric: tickMetric("ArrivalsBehindReadPosition"),
      threshold: 0,
    });
    alarm("ChannelStateLarge", {
      description:
        "A channel's recorded state passed 1 MiB (the tick keeps it under 3 MiB by reading less): very long message ids, a huge open conversation, or many broken holds.",
      metric: tickMetric("ChannelStateBytes", "Maximum"),
      threshold: 1024 * 1024,
    });
    // Each tick publishes how long its longest-waiting channel has been due. Healthy channels
    // wait at most a period; a channel retried past two periods and a tick's run is stuck.
    alarm("OldestDueChannel", {
      description:
        "A channel has been due for longer than two schedule periods plus a tick: it is failing or the backlog is not draining.",
      metric: tickMetric("OldestDueAgeMs", "Maximum"),
      threshold: 2 * config.scheduleMinutes * 60_000 + config.tickTimeoutMs,
    });
    // A tick that never runs publishes no age at all: alarm on the missing ticks too.
    alarm("TicksMissing", {
      description:
        "No tick finished in three schedule periods: due channels are not being processed and grow older.",
      metric: tickMetric("TickDurationMs", "SampleCount"),
      threshold: 1,
      comparison: ComparisonOperator.LESS_THAN_THRESHOLD,
      periods: 3,
      missing: TreatMissingData.BREACHING,
    });

    this.dashboard = new Dashboard(this, "Dashboard", {
      dashboardName: config.names.dashboard,
      defaultInterval: Duration.days(1),
    });
    const graph = (title: string, left: IMetric[], right: IMetric[] = []) =>
      new GraphWidget({ title, left, right, width: 12 });
    const lambdaMetrics = (fn: PipelineFunction) => [
      fn.function.metricInvocations(),
      fn.function.metricErrors(),
      fn.function.metricThrottles(),
    ];
    this.dashboard.addWidgets(
      new AlarmStatusWidget({ title: "Alarms", alarms: this.alarms, width: 24 }),
    );
    this.dashboard.addWidgets(
      graph(
        "Segments",
        [tickMetric("SegmentsEmitted"), tickMetric("MessagesSegmented")],
        [tickMetric("ChannelsProcessed")],
      ),
      graph("Oldest due channel (ms)", [tickMetric("OldestDueAgeMs", "Maximum")]),
      graph("Late, dropped and failed", [
        tickMetric("LateMessages"),
        tickMetric("DroppedMessages"),
        tickMetric("MissingMessages"),
        tickMetric("ChannelErrors"),
        tickMetric("HoldsBroken"),
        tickMetric("ArrivalsBehindReadPosition"),
      ]),
    );
    this.dashboard.addWidgets(
      graph(
        "Tick duration (ms) and budget",
        [tickMetric("TickDurationMs", "Average"), tickMetric("TickDurationMs", "Maximum")],
        [tickMetric("TicksStoppedEarly")],
      ),
      graph("Segmentation function", lambdaMetrics(segmentation.function), [
        segmentation.function.function.metricDuration({ statistic: "Maximum" }),
      ]),
      graph("Largest channel state (bytes)", [tickMetric("ChannelStateBytes", "Maximum")]),
    );
    if (segmentation.worker) {
      this.dashboard.addWidgets(
        graph("Segmentation workers", lambdaMetrics(segmentation.worker), [
          segmentation.worker.function.metricDuration({ statistic: "Maximum" }),
        ]),
        graph(
          "Workers started, and shares still busy",
          [tickMetric("WorkersInvoked"), tickMetric("WorkerInvokeErrors")],
          [tickMetric("SharesBusy")],
        ),
      );
    }
    this.dashboard.addWidgets(
      graph("Ingestion function", lambdaMetrics(ingestion.function), [
        ingestion.function.function.metricDuration({ statistic: "Maximum" }),
      ]),
      graph(
        "Queues: messages waiting",
        [
          segmentation.segments.queue.metricApproximateNumberOfMessagesVisible(),
          ingestion.queue.queue.metricApproximateNumberOfMessagesVisible(),
        ],
        [
          segmentation.segments.queue.metricApproximateAgeOfOldestMessage(),
          ingestion.queue.queue.metricApproximateAgeOfOldestMessage(),
        ],
      ),
    );
    const hour = Duration.hours(1);
    const inputTokens = extractMetric("InputTokens", hour);
    const outputTokens = extractMetric("OutputTokens", hour);
    this.dashboard.addWidgets(
      graph(
        "Extraction: segments",
        [
          extractMetric("SegmentsExtracted", tickPeriod),
          extractMetric("SegmentsAlreadyExtracted", tickPeriod),
          extractMetric("ResultsReplaced", tickPeriod),
          extractMetric("ExtractionFailures", tickPeriod),
          extractMetric("InvalidModelOutputs", tickPeriod),
        ],
        [
          extractMetric("WindowLatency", tickPeriod, "Average"),
          extractMetric("WindowLatency", tickPeriod, "Maximum"),
        ],
      ),
      graph(
        "LLM tokens and calls per hour",
        [
          inputTokens,
          outputTokens,
          extractMetric("CacheReadTokens", hour),
          extractMetric("CacheWriteTokens", hour),
        ],
        [
          extractMetric("LLMCalls", hour),
          extractMetric("RepairRetries", hour),
          extractMetric("WindowsReused", hour),
        ],
      ),
    );
    this.dashboard.addWidgets(
      graph("Estimated LLM cost per hour (USD)", [
        new MathExpression({
          // Per-million prices: cache reads and writes, priced differently, are not counted.
          expression: `(input * ${decimal(config.extract.inputTokenPrice)} + output * ${decimal(config.extract.outputTokenPrice)}) / 1000000`,
          usingMetrics: { input: inputTokens, output: outputTokens },
          label: `USD at ${config.extract.inputTokenPrice} in / ${config.extract.outputTokenPrice} out per million tokens`,
          period: hour,
        }),
      ]),
      graph("Extraction function", lambdaMetrics(extraction.function), [
        extraction.function.function.metricDuration({ statistic: "Maximum" }),
      ]),
    );
    this.dashboard.addWidgets(
      graph("Dead-letter queues", [
        deadLetters(segmentation.segments.deadLetterQueue),
        deadLetters(ingestion.queue.deadLetterQueue),
        deadLetters(segmentation.scheduleDeadLetterQueue),
      ]),
    );
  }

  /** The CloudWatch console address of the dashboard. */
  get dashboardUrl(): string {
    return `https://console.aws.amazon.com/cloudwatch/home?region=${Aws.REGION}#dashboards:name=${this.dashboard.dashboardName}`;
  }

  /**
   * The alarm topic, encrypted with its own key: CloudWatch cannot publish to a topic encrypted
   * with the AWS managed SNS key, whose policy cannot grant it. TLS-only, as the queues.
   */
  private alarmTopic(email: string | undefined): Topic {
    const cloudwatch = new ServicePrincipal("cloudwatch.amazonaws.com");
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
        // Only on behalf of this account's alarms: no confused deputy.
        conditions: { StringEquals: { "aws:SourceAccount": Aws.ACCOUNT_ID } },
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
        conditions: {
          ArnLike: {
            "aws:SourceArn": `arn:${Aws.PARTITION}:cloudwatch:${Aws.REGION}:${Aws.ACCOUNT_ID}:alarm:*`,
          },
        },
      }),
    );
    if (email) topic.addSubscription(new EmailSubscription(email));
    return topic;
  }
}
