import { Duration, type RemovalPolicy, Stack, Validations } from "aws-cdk-lib";
import { Metric } from "aws-cdk-lib/aws-cloudwatch";
import { Rule, Schedule } from "aws-cdk-lib/aws-events";
import { LambdaFunction } from "aws-cdk-lib/aws-events-targets";
import { PolicyStatement } from "aws-cdk-lib/aws-iam";
import type { RetentionDays } from "aws-cdk-lib/aws-logs";
import {
  BlockPublicAccess,
  Bucket,
  BucketEncryption,
  type CfnBucket,
  ObjectOwnership,
} from "aws-cdk-lib/aws-s3";
import { Construct } from "constructs";
import type { DigestConfig } from "./config.js";
import { PipelineFunction } from "./function.js";
import type { Observability } from "./observability.js";
import { secureQueue } from "./queues.js";
import type { Storage } from "./storage.js";

export interface ScheduledDigestProps {
  readonly config: DigestConfig;
  /** The variables its settings set (`environmentOf("digest")`): period, channels, destinations. */
  readonly environment: Record<string, string>;
  readonly storage: Storage;
  readonly observability: Observability;
  readonly logRetention: RetentionDays;
  readonly removalPolicy: RemovalPolicy;
}

/** Where the function writes: `digests/<yyyy-mm-dd>/digest.{md,json,html}`. */
export const DIGEST_PREFIX = "digests/";

/**
 * The scheduled digest (docs/digest-schedule.md), deployed unless `digest=false`: an EventBridge
 * rule runs a function on `digestSchedule` that builds the digest of the last `digestPeriod`
 * from the results, messages and channels tables (reads only), writes it to a private,
 * encrypted, versioned bucket under `digests/`, posts it to Slack when
 * `digestSlackWebhookSecret` names the webhook's secret and publishes it to `digestSnsTopic`. A failed run is retried by Lambda
 * (twice) and alarmed; a period's keys are the same on every run, so a retry overwrites.
 */
export class ScheduledDigest extends Construct {
  readonly function: PipelineFunction;
  readonly bucket: Bucket;

  constructor(scope: Construct, id: string, props: ScheduledDigestProps) {
    super(scope, id);
    const { config, storage } = props;
    this.bucket = new Bucket(this, "Bucket", {
      encryption: BucketEncryption.S3_MANAGED,
      enforceSSL: true,
      versioned: true,
      blockPublicAccess: BlockPublicAccess.BLOCK_ALL,
      objectOwnership: ObjectOwnership.BUCKET_OWNER_ENFORCED,
      removalPolicy: props.removalPolicy,
      lifecycleRules: [
        // Digests quote people: each goes after digestRetentionDays, and a version a rerun
        // replaced (or the expiry made noncurrent) a day after.
        {
          expiration: Duration.days(config.retentionDays),
          noncurrentVersionExpiration: Duration.days(1),
        },
        { expiredObjectDeleteMarker: true },
        { abortIncompleteMultipartUploadAfter: Duration.days(1) },
      ],
    });
    Validations.of(this.bucket).acknowledge({
      id: "AwsSolutions-S1",
      reason:
        "The bucket holds only the digests the stack's own function writes; its role is the only writer and reads go through IAM, which CloudTrail records. Server access logs would need a second bucket for no added audit.",
    });

    this.function = new PipelineFunction(this, "Handler", {
      entry: "functions/digest/handler.ts",
      description:
        "convoseg scheduled digest: the period's topics and questions to S3 (and Slack, SNS)",
      environment: {
        RESULTS_TABLE: storage.results.tableName,
        MESSAGES_TABLE: storage.messages.tableName,
        CHANNELS_TABLE: storage.channels.tableName,
        DIGEST_BUCKET: this.bucket.bucketName,
        ...props.environment,
        POWERTOOLS_SERVICE_NAME: "convoseg-digest",
      },
      timeout: Duration.minutes(10),
      memorySize: 1024,
      logRetention: props.logRetention,
      reservedConcurrentExecutions: 1,
      retryAttempts: 2,
      maxEventAge: Duration.hours(6),
    });
    const role = this.function.role;
    role.addToPrincipalPolicy(
      new PolicyStatement({
        actions: ["dynamodb:Query", "dynamodb:GetItem"],
        resources: [storage.results.tableArn],
      }),
    );
    // The period's activity: its segments' messages read by id, 100 keys a request, never
    // their text.
    storage.grantActivityReads(role);
    role.addToPrincipalPolicy(
      new PolicyStatement({
        actions: ["dynamodb:Scan", "dynamodb:GetItem"],
        resources: [storage.channels.tableArn],
      }),
    );
    role.addToPrincipalPolicy(
      new PolicyStatement({
        actions: ["s3:PutObject"],
        resources: [this.bucket.arnForObjects(`${DIGEST_PREFIX}*`)],
      }),
    );
    Validations.of(role).acknowledge({
      // The finding as cdk-nag names it: the bucket's logical id in place of its ARN.
      id: `AwsSolutions-IAM5[Resource::<${Stack.of(this).getLogicalId(this.bucket.node.defaultChild as CfnBucket)}.Arn>/${DIGEST_PREFIX}*]`,
      reason:
        "A digest's keys carry the day of its period (digests/<yyyy-mm-dd>/digest.md), so the role may put objects under the digests/ prefix of its own bucket: PutObject only, no read, no delete, no other bucket.",
    });
    if (config.slackWebhookSecretArn !== undefined) {
      role.addToPrincipalPolicy(
        new PolicyStatement({
          actions: ["secretsmanager:GetSecretValue"],
          resources: [config.slackWebhookSecretArn],
        }),
      );
    }

    if (config.snsTopicArn !== undefined) {
      role.addToPrincipalPolicy(
        new PolicyStatement({ actions: ["sns:Publish"], resources: [config.snsTopicArn] }),
      );
    }

    const deadLetters = secureQueue(this, "ScheduleDeadLetters");
    Validations.of(deadLetters).acknowledge({
      id: "AwsSolutions-SQS3",
      reason:
        "This queue is itself a dead-letter queue: the EventBridge target's, for schedule events that could not be delivered to the digest function.",
    });
    new Rule(this, "Schedule", {
      description: `convoseg scheduled digest, ${config.schedule}`,
      schedule: Schedule.expression(config.schedule),
      targets: [
        new LambdaFunction(this.function.function, {
          retryAttempts: 3,
          maxEventAge: Duration.hours(1),
          deadLetterQueue: deadLetters,
        }),
      ],
    });

    // Through the stack's alarms, so that it is named among those the alarm topic lets publish.
    props.observability.addAlarm("DigestErrors", {
      description:
        "The scheduled digest failed (its bucket write, or reading the tables); Lambda retries a run twice. Slack and SNS failures do not fail the run: see the DigestSlackFailures and DigestSnsFailures metrics",
      metric: this.function.function.metricErrors({ period: Duration.hours(1), statistic: "Sum" }),
      threshold: 0,
    });
    if (config.slackWebhookSecretArn !== undefined) {
      props.observability.addAlarm("DigestSlackFailures", {
        description:
          "The scheduled digest was written to its bucket but not posted to Slack (the webhook refused it, was unreachable, or its secret could not be read): the log line names the status",
        metric: new Metric({
          namespace: "convoseg",
          metricName: "DigestSlackFailures",
          dimensionsMap: { service: "digest" },
          statistic: "Sum",
          period: Duration.hours(1),
        }),
        threshold: 0,
      });
    }
    if (config.snsTopicArn !== undefined) {
      props.observability.addAlarm("DigestSnsFailures", {
        description:
          "The scheduled digest was written to its bucket but not published to its SNS topic (refused: the topic, its policy or its KMS key; or unavailable after three attempts): the log line names the status and code",
        metric: new Metric({
          namespace: "convoseg",
          metricName: "DigestSnsFailures",
          dimensionsMap: { service: "digest" },
          statistic: "Sum",
          period: Duration.hours(1),
        }),
        threshold: 0,
      });
    }
  }
}
