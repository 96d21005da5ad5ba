import { RemovalPolicy } from "aws-cdk-lib";
import {
  AttributeType,
  BillingMode,
  type ITable,
  ProjectionType,
  Table,
  TableEncryption,
  type TableProps,
} from "aws-cdk-lib/aws-dynamodb";
import { Grant, type IGrantable, PolicyStatement } from "aws-cdk-lib/aws-iam";
import { Construct } from "constructs";
import {
  BY_POSITION_ATTRIBUTES,
  BY_POSITION_INDEX,
  CONVERSATIONS_INDEX,
  LISTED,
  PARTITION_KEY,
  POSITION,
  SORT_KEY,
} from "../lib/history/schema/index.js";
import {
  RESULTS_PARTITION_KEY,
  RESULTS_SORT_KEY,
  RESULTS_TTL_ATTRIBUTE,
} from "../lib/knowledge/schema/index.js";
import {
  CHANNEL_KEY,
  DUE_AT,
  DUE_INDEX,
  DUE_SHARD,
  ITEM_KEY,
  MARK_ATTRIBUTES,
} from "../lib/pipeline/schema/index.js";

export interface StorageProps {
  /** Physical table names; generated when omitted. */
  messagesTableName?: string;
  channelsTableName?: string;
  conversationsTableName?: string;
  resultsTableName?: string;
  /** What `cdk destroy` does with the data: RETAIN (the default) keeps it. */
  removalPolicy?: RemovalPolicy;
}

/**
 * The tables: chat messages (the system of record every other part reads), the pipeline's
 * channel state, model conversations of the chat middleware, kept apart from chat so that no
 * ingestion role can write into an agent's history, and extraction's results. Key schemas and
 * indexes come from the library's schema modules, so code and tables cannot drift apart.
 *
 * Only the results table has a TTL, for its transient items (window replies, lapsed leases):
 * messages are the record segments refer to (reference-form bodies are read back from it), and
 * a channel's state holds its watermark, which must outlive any quiet spell or old messages
 * would be segmented again. All are on-demand, encrypted, with PITR.
 */
export class Storage extends Construct {
  readonly messages: ITable;
  /** The pipeline's per-channel marks and state, and the sparse `due` index of channels with work. */
  readonly channels: ITable;
  /** Model conversations (`Middleware`, transcripts): the messages schema, its own table. */
  readonly conversations: ITable;
  /** Extraction's results, topic index, leases and window replies (`lib/knowledge/schema/`). */
  readonly results: ITable;

  constructor(scope: Construct, id: string, props: StorageProps = {}) {
    super(scope, id);
    const removalPolicy = props.removalPolicy ?? RemovalPolicy.RETAIN;
    // Systems of record: on-demand, encrypted, recoverable, kept by default.
    const protectedTable = (
      tableId: string,
      tableProps: Pick<
        TableProps,
        "tableName" | "partitionKey" | "sortKey" | "timeToLiveAttribute"
      >,
    ) =>
      new Table(this, tableId, {
        ...tableProps,
        billingMode: BillingMode.PAY_PER_REQUEST,
        encryption: TableEncryption.AWS_MANAGED,
        pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
        deletionProtection: removalPolicy === RemovalPolicy.RETAIN,
        removalPolicy,
      });
    const historyTable = (tableId: string, tableName: string | undefined) => {
      const table = protectedTable(tableId, {
        tableName,
        partitionKey: { name: PARTITION_KEY, type: AttributeType.STRING },
        sortKey: { name: SORT_KEY, type: AttributeType.STRING },
      });
      table.addLocalSecondaryIndex({
        indexName: BY_POSITION_INDEX,
        sortKey: { name: POSITION, type: AttributeType.STRING },
        projectionType: ProjectionType.INCLUDE,
        nonKeyAttributes: [...BY_POSITION_ATTRIBUTES],
      });
      table.addGlobalSecondaryIndex({
        indexName: CONVERSATIONS_INDEX,
        partitionKey: { name: LISTED, type: AttributeType.STRING },
        sortKey: { name: PARTITION_KEY, type: AttributeType.STRING },
        projectionType: ProjectionType.KEYS_ONLY,
      });
      return table;
    };
    this.messages = historyTable("Messages", props.messagesTableName);
    this.conversations = historyTable("Conversations", props.conversationsTableName);
    const channels = protectedTable("Channels", {
      tableName: props.channelsTableName,
      partitionKey: { name: CHANNEL_KEY, type: AttributeType.STRING },
      sortKey: { name: ITEM_KEY, type: AttributeType.STRING },
    });
    channels.addGlobalSecondaryIndex({
      indexName: DUE_INDEX,
      partitionKey: { name: DUE_SHARD, type: AttributeType.STRING },
      sortKey: { name: DUE_AT, type: AttributeType.NUMBER },
      projectionType: ProjectionType.KEYS_ONLY,
    });
    this.channels = channels;
    this.results = protectedTable("Results", {
      tableName: props.resultsTableName,
      partitionKey: { name: RESULTS_PARTITION_KEY, type: AttributeType.STRING },
      sortKey: { name: RESULTS_SORT_KEY, type: AttributeType.STRING },
      timeToLiveAttribute: RESULTS_TTL_ATTRIBUTE,
    });
  }

  /**
   * Lets a principal (your own ingestion Lambda) ingest as `IngestClient` does: conditional puts
   * of messages, and the updates of a channel's marks that reserve and release positions. On
   * the channels table only the marking attributes, and no return of other values: never the
   * tick's state, read position or outbox. No reads, no deletes, no index ARNs.
   */
  grantIngest(grantee: IGrantable): Grant {
    return this.grantStatements(grantee, this.ingestStatements());
  }

  /** The statements of {@link grantIngest}, for a managed policy used outside this app. */
  ingestStatements(): PolicyStatement[] {
    return [
      new PolicyStatement({ actions: ["dynamodb:PutItem"], resources: [this.messages.tableArn] }),
      new PolicyStatement({
        actions: ["dynamodb:UpdateItem"],
        resources: [this.channels.tableArn],
        conditions: {
          "ForAllValues:StringLike": { "dynamodb:Attributes": [...MARK_ATTRIBUTES] },
          StringEqualsIfExists: { "dynamodb:ReturnValues": ["NONE", "UPDATED_NEW"] },
        },
      }),
    ];
  }

  /**
   * What the segmentation tick does and nothing more: reads arrivals (`byPosition` index) and
   * messages by id; reads a channel's items, writes its state (large states in a transaction of
   * pages), updates its marks, and lists due channels.
   */
  grantSegmentation(grantee: IGrantable): Grant {
    return this.grantStatements(grantee, [
      new PolicyStatement({
        actions: ["dynamodb:Query"],
        resources: [`${this.messages.tableArn}/index/${BY_POSITION_INDEX}`],
      }),
      new PolicyStatement({
        actions: ["dynamodb:BatchGetItem"],
        resources: [this.messages.tableArn],
      }),
      new PolicyStatement({
        actions: [
          "dynamodb:Query",
          "dynamodb:UpdateItem",
          "dynamodb:PutItem",
          "dynamodb:DeleteItem",
        ],
        resources: [this.channels.tableArn],
      }),
      new PolicyStatement({
        actions: ["dynamodb:Query"],
        resources: [`${this.channels.tableArn}/index/${DUE_INDEX}`],
      }),
    ]);
  }

  /**
   * What the extraction function does: reads a reference-form segment's messages by id
   * (`DynamoDbStore.getMessages`, BatchGetItem), and keeps its results table as
   * `DynamoDbResultStore` does (items read and written by key, conditional updates for leases,
   * transactions of puts and deletes, batch writes of the topic index, queries of a channel's
   * items). No scans, no other table, no index.
   */
  grantExtraction(grantee: IGrantable): Grant {
    return this.grantStatements(grantee, [
      new PolicyStatement({
        actions: ["dynamodb:BatchGetItem"],
        resources: [this.messages.tableArn],
      }),
      new PolicyStatement({
        actions: [
          "dynamodb:GetItem",
          "dynamodb:Query",
          "dynamodb:PutItem",
          "dynamodb:UpdateItem",
          "dynamodb:DeleteItem",
          "dynamodb:BatchWriteItem",
        ],
        resources: [this.results.tableArn],
      }),
    ]);
  }

  /**
   * Lets an agent's role keep model conversations (the chat middleware's `DynamoDbStore`):
   * everything a history store does, on the conversations table only.
   */
  grantConversations(grantee: IGrantable): Grant {
    return this.grantStatements(grantee, [
      new PolicyStatement({
        actions: [
          "dynamodb:PutItem",
          "dynamodb:GetItem",
          "dynamodb:BatchGetItem",
          "dynamodb:BatchWriteItem",
          "dynamodb:Query",
        ],
        resources: [
          this.conversations.tableArn,
          `${this.conversations.tableArn}/index/${BY_POSITION_INDEX}`,
          `${this.conversations.tableArn}/index/${CONVERSATIONS_INDEX}`,
        ],
      }),
    ]);
  }

  private grantStatements(grantee: IGrantable, statements: PolicyStatement[]): Grant {
    return statements
      .map((statement) =>
        Grant.addToPrincipal({
          grantee,
          actions: statement.actions,
          resourceArns: statement.resources,
          conditions: statement.conditions,
        }),
      )
      .reduce((all, grant) => all.combine(grant));
  }
}
