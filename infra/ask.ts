import { Duration } from "aws-cdk-lib";
import { Metric } from "aws-cdk-lib/aws-cloudwatch";
import { PolicyStatement } from "aws-cdk-lib/aws-iam";
import { type FunctionUrl, FunctionUrlAuthType } from "aws-cdk-lib/aws-lambda";
import type { RetentionDays } from "aws-cdk-lib/aws-logs";
import { Construct } from "constructs";
import type { AskMetric } from "convoseg/connectors";
import { bedrockStatements } from "./extraction.js";
import { PipelineFunction } from "./function.js";
import type { Observability } from "./observability.js";
import { SEARCH_MEMORY, type SearchIndex, searchFunctionProps } from "./search.js";
import type { Storage } from "./storage.js";

/** A model's short answer above the hits, and the budget its tokens are counted against. */
interface AskSummary {
  /** A Bedrock model id or inference profile id. */
  readonly modelId: string;
  /** The results table, where the day's spend is counted with extraction's. */
  readonly storage: Storage;
  readonly dailyTokenBudget: number;
  /** Null: extraction's default share of the daily budget. */
  readonly channelTokenBudget: number | null;
}

/** A platform an ask endpoint serves, and how its receiver is set up. */
export interface AskPlatform {
  readonly name: "slack" | "discord" | "telegram";
  /** The construct id and the alarms' prefix. */
  readonly title: string;
  /** What the endpoint's receiver checks requests with, by environment variable. */
  readonly environment: Readonly<Record<string, string>>;
  /** The secrets the receiver reads (its signing secret or webhook token), if any. */
  readonly receiverSecrets: readonly string[];
  /** The secrets the answer function reads (the Telegram bot's token), by variable. */
  readonly answerSecrets?: Readonly<Record<string, string>>;
}

export interface AskEndpointProps {
  readonly platform: AskPlatform;
  readonly search: SearchIndex;
  readonly observability: Observability;
  readonly logRetention: RetentionDays;
  /** The command's name, without its slash. */
  readonly command: string;
  /**
   * The only channels answered in, comma-separated ids.
   * @default every group chat
   */
  readonly channels?: string;
  /**
   * Answer in one-to-one chats and DMs too.
   * @default false
   */
  readonly privateChats?: boolean;
  /** Questions a minute per person and per channel, in each warm receiver. */
  readonly perPerson: number;
  readonly perChannel: number;
  /**
   * A model's summary above the hits.
   * @default none: the hits alone
   */
  readonly summary?: AskSummary;
  /**
   * Each function's reserved concurrency (its public URL cannot take more of the account's).
   * @default none reserved
   */
  readonly reservedConcurrency?: number;
  /**
   * "Mark as answer" (Slack and Discord): who may mark (`anyone`, or user ids), and the tables
   * the mark function records the correction in.
   * @default marking off
   */
  readonly marking?: { readonly markers: "anyone" | readonly string[]; readonly storage: Storage };
}

/** Refused requests in five minutes past which someone is knocking, or the key is wrong. */
const REFUSED_THRESHOLD = 5;
const PERIOD = Duration.minutes(5);

/**
 * An ask endpoint (docs/connectors.md#ask): a receiver behind a Function URL without IAM auth
 * (the platform's signature or token is the auth) that verifies a question, answers the
 * platform at once and invokes the answer function asynchronously; the answer function reads
 * the search index and posts the answer. The receiver's role may read its one secret and invoke
 * the answer function; the answer function's may read the index (and the Telegram bot's token),
 * and with a summary invoke its one model and count its tokens in the results table's spend
 * items: neither may write anything else of the stack's. With `marking`, a mark function records
 * a message a person marked as an answer: its role may only read the question index and message
 * facts, and put correction items (`Storage.grantCorrections`); the receiver may invoke it too.
 */
export class AskEndpoint extends Construct {
  readonly receiver: PipelineFunction;
  readonly answer: PipelineFunction;
  /** With `marking`: records a marked answer as a correction, and tells the person. */
  readonly mark?: PipelineFunction;
  readonly url: FunctionUrl;

  constructor(scope: Construct, id: string, props: AskEndpointProps) {
    super(scope, id);
    const { platform, summary } = props;
    const reserved = props.reservedConcurrency
      ? { reservedConcurrentExecutions: props.reservedConcurrency }
      : {};
    this.answer = new PipelineFunction(this, "Answer", {
      entry: "functions/ask/handler.ts",
      description: `convoseg ${platform.title} ask: searches the channel and posts the answer`,
      environment: {
        POWERTOOLS_SERVICE_NAME: `convoseg-${platform.name}-ask`,
        ...platform.answerSecrets,
        ...(summary !== undefined && {
          ASK_MODEL_ID: summary.modelId,
          RESULTS_TABLE: summary.storage.results.tableName,
          DAILY_TOKEN_BUDGET: String(summary.dailyTokenBudget),
          ...(summary.channelTokenBudget !== null && {
            CHANNEL_TOKEN_BUDGET: String(summary.channelTokenBudget),
          }),
        }),
      },
      // A cold start opens LanceDB on S3; a summary has 10 s, the post 5 s of its own.
      timeout: Duration.seconds(summary === undefined ? 30 : 40),
      memorySize: SEARCH_MEMORY.ask,
      logRetention: props.logRetention,
      // A second answer would be worse than none, and an interaction token lasts 15 minutes.
      retryAttempts: 0,
      maxEventAge: Duration.minutes(10),
      ...reserved,
      ...searchFunctionProps(props.search),
    });
    props.search.connect(this.answer, "read");
    if (summary !== undefined) {
      for (const statement of bedrockStatements(this.answer.role, summary.modelId)) {
        this.answer.role.addToPrincipalPolicy(statement);
      }
      summary.storage.grantSpendCounters(this.answer.role);
    }
    const answerSecrets = Object.values(platform.answerSecrets ?? {});
    if (answerSecrets.length > 0) {
      this.answer.role.addToPrincipalPolicy(
        new PolicyStatement({
          actions: ["secretsmanager:GetSecretValue"],
          resources: answerSecrets,
        }),
      );
    }
    const { marking } = props;
    if (marking !== undefined && platform.name !== "telegram") {
      this.mark = new PipelineFunction(this, "Mark", {
        entry: "functions/ask-mark/handler.ts",
        description: `convoseg ${platform.title} ask: records a message marked as an answer`,
        environment: {
          POWERTOOLS_SERVICE_NAME: `convoseg-${platform.name}-ask-mark`,
          RESULTS_TABLE: marking.storage.results.tableName,
          MESSAGES_TABLE: marking.storage.messages.tableName,
          ASK_MARKERS: marking.markers === "anyone" ? "anyone" : marking.markers.join(","),
        },
        timeout: Duration.seconds(30),
        memorySize: 256,
        logRetention: props.logRetention,
        // A second reply would only repeat the first; a person's later mark replaces it.
        retryAttempts: 0,
        maxEventAge: Duration.minutes(10),
        ...reserved,
      });
      marking.storage.grantCorrections(this.mark.role);
    }
    const mark = this.mark;
    this.receiver = new PipelineFunction(this, "Receiver", {
      entry: `functions/ask-${platform.name}/handler.ts`,
      description: `convoseg ${platform.title} ask: verifies a question and hands it on`,
      environment: {
        POWERTOOLS_SERVICE_NAME: `convoseg-${platform.name}-ask`,
        ANSWER_FUNCTION: this.answer.function.functionName,
        ...(mark !== undefined && { MARK_FUNCTION: mark.function.functionName }),
        ASK_COMMAND: platform.name === "slack" ? `/${props.command}` : props.command,
        ASK_PER_PERSON: String(props.perPerson),
        ASK_PER_CHANNEL: String(props.perChannel),
        PRIVATE_CHATS: props.privateChats ? "true" : "false",
        ...(props.channels === undefined ? {} : { ASK_CHANNELS: props.channels }),
        ...platform.environment,
      },
      // The platforms wait 3 s: verification and one asynchronous invocation take milliseconds.
      timeout: Duration.seconds(5),
      memorySize: 256,
      logRetention: props.logRetention,
      ...reserved,
    });
    // The function itself, not its versions (`grantInvoke` would add `:*`).
    this.receiver.role.addToPrincipalPolicy(
      new PolicyStatement({
        actions: ["lambda:InvokeFunction"],
        resources: [
          this.answer.function.functionArn,
          ...(mark === undefined ? [] : [mark.function.functionArn]),
        ],
      }),
    );
    if (platform.receiverSecrets.length > 0) {
      this.receiver.role.addToPrincipalPolicy(
        new PolicyStatement({
          actions: ["secretsmanager:GetSecretValue"],
          resources: [...platform.receiverSecrets],
        }),
      );
    }
    this.url = this.receiver.function.addFunctionUrl({ authType: FunctionUrlAuthType.NONE });
    const metric = (metricName: AskMetric) =>
      new Metric({
        namespace: "convoseg",
        dimensionsMap: { service: `${platform.name}-ask` },
        metricName,
        statistic: "Sum",
        period: PERIOD,
      });
    props.observability.addAlarm(`${platform.title}AskRequestsRefused`, {
      description: `More than ${REFUSED_THRESHOLD} ${platform.title} ask requests refused in 5 minutes (bad signature or token, stale, malformed): a wrong key or secret, or someone probing the URL. See docs/connectors.md#ask.`,
      metric: metric("AsksRefused"),
      threshold: REFUSED_THRESHOLD,
    });
    props.observability.addAlarm(`${platform.title}AskErrors`, {
      description: `The ${platform.title} ask answer function failed or timed out: questions go unanswered (the receiver logs each question it handed on).`,
      metric: this.answer.function.metricErrors({ period: PERIOD, statistic: "Sum" }),
      threshold: 0,
    });
  }
}
