import { CfnOutput, RemovalPolicy, Stack, type StackProps } from "aws-cdk-lib";
import { ManagedPolicy } from "aws-cdk-lib/aws-iam";
import type { Construct } from "constructs";
import { ReadApi } from "./api.js";
import { AskEndpoint, type AskPlatform } from "./ask.js";
import { type ConvosegConfig, type ConvosegSettings, resolveConfig } from "./config.js";
import { SLACK, TELEGRAM, WebhookConnector } from "./connectors.js";
import { DIGEST_PREFIX, ScheduledDigest } from "./digest.js";
import { DiscordPoller } from "./discord.js";
import { Erasure } from "./erasure.js";
import { Extraction } from "./extraction.js";
import { Ingestion } from "./ingestion.js";
import { Observability } from "./observability.js";
import { SearchIndex } from "./search.js";
import { Segmentation } from "./segmentation.js";
import { Storage } from "./storage.js";

/** Stack props, and the pipeline settings (each also readable from CDK context). */
export interface ConvosegStackProps extends StackProps, ConvosegSettings {}

/**
 * Everything convoseg deploys into an account: storage, ingestion, the scheduled segmentation
 * tick and its segment queue, LLM extraction of the segments, the operator's `EraseUser`
 * function and its `EraseUserLoop` state machine, alarms and a dashboard.
 */
export class ConvosegStack extends Stack {
  readonly config: ConvosegConfig;
  readonly storage: Storage;
  readonly ingestion: Ingestion;
  readonly segmentation: Segmentation;
  readonly extraction: Extraction;
  readonly observability: Observability;
  readonly erasure: Erasure;
  /** The Slack Events API receiver, when `slackSigningSecret` is set. */
  readonly slack?: WebhookConnector;
  /** The Telegram webhook receiver, when `telegramSecretToken` is set. */
  readonly telegram?: WebhookConnector;
  /** The read API, deployed only with `api`. */
  readonly api?: ReadApi;
  /** The scheduled digest, deployed unless `digest=false`. */
  readonly digest?: ScheduledDigest;
  /** The search index and its layer, deployed only with `search`. */
  readonly search?: SearchIndex;
  /** The Discord poller, deployed only with `discordChannels`. */
  readonly discord?: DiscordPoller;
  /** The ask endpoints, each deployed only with its setting (and `search`). */
  readonly ask: Partial<Record<AskPlatform["name"], AskEndpoint>> = {};
  /** Sending to the ingest queue, for producers deployed by other stacks: they only add messages. */
  readonly ingestPolicy: ManagedPolicy;

  constructor(scope: Construct, id: string, props: ConvosegStackProps = {}) {
    super(scope, id, props);
    // Validated before anything is built: a bad setting fails synth with the setting's name.
    const config = resolveConfig(props, (name) => this.node.tryGetContext(name));
    this.config = config;
    const dataRemovalPolicy = config.retainData ? RemovalPolicy.RETAIN : RemovalPolicy.DESTROY;
    // Before the functions that open it: their bundling depends on it.
    if (config.search) {
      const kept = [config.retention.messageDays, config.retention.resultDays].filter(
        (days): days is number => days !== null,
      );
      this.search = new SearchIndex(this, "Search", {
        removalPolicy: dataRemovalPolicy,
        ...(kept.length > 0 && { retentionDays: Math.min(...kept) }),
        ...(config.searchEmbeddings && { embeddingsModel: config.searchEmbeddings.modelId }),
      });
    }
    this.storage = new Storage(this, "Storage", {
      messagesTableName: config.names.messagesTable,
      channelsTableName: config.names.channelsTable,
      conversationsTableName: config.names.conversationsTable,
      resultsTableName: config.names.resultsTable,
      removalPolicy: dataRemovalPolicy,
      maxReadRequestUnits: config.tableMaxUnits.read ?? undefined,
      maxWriteRequestUnits: config.tableMaxUnits.write ?? undefined,
    });
    this.ingestion = new Ingestion(this, "Ingestion", {
      storage: this.storage,
      logRetention: config.logRetention,
      queueName: config.names.ingestQueue,
      concurrency: config.ingest.concurrency,
      producers: config.ingest.producers,
      environment: config.environments.ingest,
      search: this.search,
    });
    this.segmentation = new Segmentation(this, "Segmentation", { storage: this.storage, config });
    // A redaction past the changed share sends its segment back to be extracted again.
    this.ingestion.allowReextraction(this.segmentation.segments, {
      changedShare: config.extract.reextractChangedShare,
    });
    this.extraction = new Extraction(this, "Extraction", {
      storage: this.storage,
      config,
      segments: this.segmentation.segments,
      search: this.search,
    });
    this.erasure = new Erasure(this, "Erasure", {
      storage: this.storage,
      logRetention: config.logRetention,
      search: this.search,
    });
    this.observability = new Observability(this, "Observability", {
      config,
      segmentation: this.segmentation,
      ingestion: this.ingestion,
      extraction: this.extraction,
      storage: this.storage,
    });
    const connector = (
      platform: typeof SLACK,
      secretArn: string,
      channels: string | undefined,
      extraSecrets?: Record<string, string>,
    ) =>
      new WebhookConnector(this, platform.title, {
        platform,
        ingestion: this.ingestion,
        observability: this.observability,
        secretArn,
        extraSecrets,
        logRetention: config.logRetention,
        reservedConcurrency: config.connectors.receiverConcurrency,
        channels,
        privateChats: config.connectors.privateChats,
      });
    const { slack, telegram } = config.connectors;
    if (slack !== undefined) {
      this.slack = connector(
        SLACK,
        slack.signingSecretArn,
        slack.channels,
        slack.botTokenArn === undefined ? undefined : { SLACK_BOT_TOKEN_ARN: slack.botTokenArn },
      );
    }
    if (telegram !== undefined) {
      this.telegram = connector(TELEGRAM, telegram.secretTokenArn, telegram.chats);
    }
    if (config.discord !== undefined) {
      this.discord = new DiscordPoller(this, "Discord", {
        config: config.discord,
        environment: config.environments.discord,
        storage: this.storage,
        ingestion: this.ingestion,
        observability: this.observability,
        logRetention: config.logRetention,
        removalPolicy: dataRemovalPolicy,
      });
    }
    if (config.api !== undefined) {
      this.api = new ReadApi(this, "Api", {
        config: config.api,
        storage: this.storage,
        logRetention: config.logRetention,
        search: this.search,
      });
    }
    if (config.digest !== undefined) {
      this.digest = new ScheduledDigest(this, "Digest", {
        config: config.digest,
        environment: config.environments.digest,
        storage: this.storage,
        observability: this.observability,
        logRetention: config.logRetention,
        removalPolicy: dataRemovalPolicy,
      });
      this.erasure.followDigests(this.digest.bucket, DIGEST_PREFIX);
    }
    const { ask } = config;
    const search = this.search;
    if (ask !== undefined && search !== undefined) {
      const platforms: [AskPlatform, string | undefined][] = [];
      if (ask.slack !== undefined) {
        const { signingSecretArn: arn, botTokenArn } = ask.slack;
        platforms.push([
          {
            name: "slack",
            title: "Slack",
            environment: {
              SLACK_SIGNING_SECRET_ARN: arn,
              ASK_MENTIONS: botTokenArn === undefined ? "false" : "true",
            },
            receiverSecrets: [arn],
            ...(botTokenArn !== undefined && {
              answerSecrets: { SLACK_BOT_TOKEN_ARN: botTokenArn },
            }),
          },
          config.connectors.slack?.channels,
        ]);
      }
      if (ask.discord !== undefined) {
        platforms.push([
          {
            name: "discord",
            title: "Discord",
            environment: { DISCORD_PUBLIC_KEY: ask.discord.publicKey },
            receiverSecrets: [],
          },
          config.discord?.channels.join(","),
        ]);
      }
      if (ask.telegram !== undefined) {
        const { secretTokenArn, botTokenArn, botUsername } = ask.telegram;
        platforms.push([
          {
            name: "telegram",
            title: "Telegram",
            environment: {
              TELEGRAM_SECRET_TOKEN_ARN: secretTokenArn,
              ...(botUsername !== undefined && { TELEGRAM_BOT_USERNAME: botUsername }),
            },
            receiverSecrets: [secretTokenArn],
            answerSecrets: { TELEGRAM_BOT_TOKEN_ARN: botTokenArn },
          },
          config.connectors.telegram?.chats,
        ]);
      }
      for (const [platform, connectorChannels] of platforms) {
        const channels = ask.channels ?? connectorChannels;
        this.ask[platform.name] = new AskEndpoint(this, `${platform.title}Ask`, {
          platform,
          search,
          observability: this.observability,
          logRetention: config.logRetention,
          command: ask.command,
          ...(channels !== undefined && { channels }),
          privateChats: config.connectors.privateChats,
          perPerson: ask.perPerson,
          perChannel: ask.perChannel,
          reservedConcurrency: config.connectors.receiverConcurrency,
          ...(ask.modelId !== undefined && {
            summary: {
              modelId: ask.modelId,
              storage: this.storage,
              dailyTokenBudget: config.extract.dailyTokenBudget,
              channelTokenBudget: config.extract.channelDailyTokenBudget,
            },
          }),
          ...(ask.markers !== undefined && {
            marking: { markers: ask.markers, storage: this.storage },
          }),
        });
      }
    }
    this.ingestPolicy = new ManagedPolicy(this, "IngestPolicy", {
      description: "convoseg: send chat messages to the ingest queue (attach to a producer's role)",
      statements: [this.ingestion.sendStatement()],
    });

    const output = (name: string, value: string, description: string, exported = false) =>
      new CfnOutput(this, name, {
        value,
        description,
        exportName: exported ? `${this.stackName}-${name}` : undefined,
      });
    output("MessagesTableName", this.storage.messages.tableName, "MESSAGES_TABLE", true);
    output("ChannelsTableName", this.storage.channels.tableName, "CHANNELS_TABLE", true);
    output(
      "ConversationsTableName",
      this.storage.conversations.tableName,
      "Model conversations (the chat middleware's history store); grant with storage.grantConversations",
      true,
    );
    output(
      "ResultsTableName",
      this.storage.results.tableName,
      "Extraction results and topic index (RESULTS_TABLE)",
      true,
    );
    output(
      "IngestPolicyArn",
      this.ingestPolicy.managedPolicyArn,
      "Managed policy granting sqs:SendMessage on the ingest queue; attach it to a producer's role",
      true,
    );
    output("IngestFunctionName", this.ingestion.function.function.functionName, "Direct ingestion");
    output(
      "IngestQueueUrl",
      this.ingestion.queue.queue.queueUrl,
      "Where producers send chat messages, one per body (IngestPolicyArn allows it)",
      true,
    );
    output("SegmentQueueUrl", this.segmentation.segments.queue.queueUrl, "Closed segments");
    output("SegmentQueueArn", this.segmentation.segments.queue.queueArn, "Closed segments");
    output(
      "ExtractFunctionName",
      this.extraction.function.function.functionName,
      "Extraction (the segment queue's consumer)",
    );
    output(
      "EraseUserFunctionName",
      this.erasure.function.function.functionName,
      "EraseUser: invoke with {userId?, user?, channels?, requestedBy}; again while it answers done: false",
    );
    output(
      "EraseUserStateMachineArn",
      this.erasure.stateMachine.stateMachineArn,
      "EraseUserLoop: start an execution with the EraseUser event; it invokes EraseUser until done",
    );
    output(
      "AuditKeySecretArn",
      this.erasure.auditKey.secretArn,
      "The erasure audit key: npm start -- erase --audit-key-secret on this deployment",
    );
    if (this.telegram !== undefined) {
      output("TelegramWebhookUrl", this.telegram.url.url, "The url to give Telegram's setWebhook");
    }
    if (this.slack !== undefined) {
      output(
        "SlackEventsUrl",
        this.slack.url.url,
        "The Request URL for the Slack app's Event Subscriptions",
      );
    }
    if (this.api !== undefined) {
      output(
        "ApiUrl",
        this.api.api.apiEndpoint,
        "The read API (docs/api.md), IAM-authorized unless apiJwtIssuer",
      );
    }
    if (this.digest !== undefined) {
      output("DigestBucketName", this.digest.bucket.bucketName, "Where the scheduled digests are");
    }
    if (this.search !== undefined) {
      output("SearchIndexUri", this.search.uri, "The search index (LanceDB), SEARCH_INDEX_URI");
    }
    if (this.discord !== undefined) {
      output(
        "DiscordCursorsTableName",
        this.discord.cursors.tableName,
        "The Discord poller's per-channel cursors",
      );
    }
    const askUrls = {
      slack: ["SlackAskUrl", "The Request URL of the Slack app's /ask slash command"],
      discord: ["DiscordInteractionsUrl", "The Discord application's Interactions Endpoint URL"],
      telegram: ["TelegramAskWebhookUrl", "The url to give the answering bot's setWebhook"],
    } as const;
    for (const [name, endpoint] of Object.entries(this.ask)) {
      const [outputName, description] = askUrls[name as AskPlatform["name"]];
      output(outputName, endpoint.url.url, description);
    }
    output("AlarmTopicArn", this.observability.topic.topicArn, "Subscribe to get the alarms");
    output("DashboardUrl", this.observability.dashboardUrl, "CloudWatch dashboard");
  }
}
