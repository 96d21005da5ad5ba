import { Duration, RemovalPolicy } from "aws-cdk-lib";
import { Metric } from "aws-cdk-lib/aws-cloudwatch";
import { AttributeType, BillingMode, Table, TableEncryption } from "aws-cdk-lib/aws-dynamodb";
import { PolicyStatement } from "aws-cdk-lib/aws-iam";
import { type FunctionUrl, FunctionUrlAuthType } from "aws-cdk-lib/aws-lambda";
import type { RetentionDays } from "aws-cdk-lib/aws-logs";
import { Construct } from "constructs";
import type { ConnectorMetric } from "../lib/connectors/index.js";
import { PipelineFunction } from "./function.js";
import type { Ingestion } from "./ingestion.js";
import type { Observability } from "./observability.js";

export interface SlackConnectorProps {
  /** The ingest queue it sends to (and nothing else of ingestion). */
  readonly ingestion: Ingestion;
  /** The alarms' topic. */
  readonly observability: Observability;
  /** The secret holding the Slack app's signing secret (`slackSigningSecret`). */
  readonly signingSecretArn: string;
  readonly logRetention: RetentionDays;
}

/** Where `functions/slack/handler.ts` publishes its counts (EMF). */
export const SLACK_METRICS = { namespace: "convoseg", dimensionsMap: { service: "slack" } };
/** Refused requests in five minutes past which someone is knocking, or the secret is wrong. */
const REFUSED_THRESHOLD = 5;
const PERIOD = Duration.minutes(5);

/**
 * The Slack Events API receiver (docs/connectors.md): a Lambda behind a Function URL with no IAM
 * auth, because Slack cannot sign AWS requests: the request signature, checked with the signing
 * secret, is the auth. Its role may send to the ingest queue, read that one secret, and put and
 * delete claims in its own table (which events were taken; they expire after a day), nothing
 * else: it only adds messages, as any producer.
 */
export class SlackConnector extends Construct {
  readonly function: PipelineFunction;
  readonly url: FunctionUrl;
  readonly claims: Table;

  constructor(scope: Construct, id: string, props: SlackConnectorProps) {
    super(scope, id);
    this.claims = new Table(this, "Claims", {
      partitionKey: { name: "id", type: AttributeType.STRING },
      timeToLiveAttribute: "expiresAt",
      billingMode: BillingMode.PAY_PER_REQUEST,
      encryption: TableEncryption.AWS_MANAGED,
      // A few bytes per event for a day: recovery costs next to nothing, and cdk-nag wants it.
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
      // Claims are a day's memory of retries, not data: nothing to keep.
      removalPolicy: RemovalPolicy.DESTROY,
    });
    this.function = new PipelineFunction(this, "Receiver", {
      entry: "functions/slack/handler.ts",
      description: "convoseg Slack connector: Events API requests to the ingest queue",
      environment: {
        INGEST_QUEUE_URL: props.ingestion.queue.queue.queueUrl,
        CLAIMS_TABLE: this.claims.tableName,
        SLACK_SIGNING_SECRET_ARN: props.signingSecretArn,
        POWERTOOLS_SERVICE_NAME: "convoseg-slack",
      },
      // Slack gives up on an answer after 3 s and retries: no point running longer.
      timeout: Duration.seconds(5),
      memorySize: 256,
      logRetention: props.logRetention,
    });
    const role = this.function.role;
    props.ingestion.grantSend(role);
    role.addToPrincipalPolicy(
      new PolicyStatement({
        actions: ["secretsmanager:GetSecretValue"],
        resources: [props.signingSecretArn],
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
      new Metric({ ...SLACK_METRICS, metricName, statistic: "Sum", period: PERIOD });
    props.observability.addAlarm("SlackRequestsRefused", {
      description: `More than ${REFUSED_THRESHOLD} Slack requests refused in 5 minutes (bad signature, stale timestamp, malformed): a wrong signing secret in the secret, or someone probing the URL. See docs/connectors.md.`,
      metric: metric("EventsRefused"),
      threshold: REFUSED_THRESHOLD,
    });
    props.observability.addAlarm("SlackEventsFailed", {
      description:
        "Slack events answered 500 (signing secret unreadable, claims table or ingest queue failing): Slack retries three times, then drops them.",
      metric: metric("EventsFailed"),
      threshold: 0,
    });
  }
}
