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
  BY_POSITION_INDEX,
  CONVERSATIONS_INDEX,
  LISTED,
  PARTITION_KEY,
  POSITION,
  SORT_KEY,
} from "../lib/history/dynamodb/schema.js";
import { CHANNEL_KEY, DUE_AT, DUE_INDEX, DUE_SHARD } from "../lib/pipeline/channel-store.js";

export interface StorageProps {
  /** Physical table names; generated when omitted. */
  messagesTableName?: string;
  channelsTableName?: string;
  /** What `cdk destroy` does with the data: RETAIN (the default) keeps it. */
  removalPolicy?: RemovalPolicy;
}

/**
 * The messages table: the system of record every other part reads. Key schema and indexes come
 * from the history store's schema module, so code and table cannot drift apart.
 *
 * Neither table has a TTL: messages are the record segments refer to (reference-form bodies are
 * read back from it), and a channel's item holds its watermark, which must outlive any quiet
 * spell or old messages would be segmented again. Both are on-demand, encrypted, with PITR.
 */
export class Storage extends Construct {
  readonly messages: ITable;
  /** The pipeline's per-channel state and the sparse `due` index of channels with work. */
  readonly channels: ITable;

  constructor(scope: Construct, id: string, props: StorageProps = {}) {
    super(scope, id);
    const removalPolicy = props.removalPolicy ?? RemovalPolicy.RETAIN;
    // Both tables are systems of record: on-demand, encrypted, recoverable, kept by default.
    const protectedTable = (
      tableId: string,
      tableProps: Pick<TableProps, "tableName" | "partitionKey" | "sortKey">,
    ) =>
      new Table(this, tableId, {
        ...tableProps,
        billingMode: BillingMode.PAY_PER_REQUEST,
        encryption: TableEncryption.AWS_MANAGED,
        pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
        deletionProtection: removalPolicy === RemovalPolicy.RETAIN,
        removalPolicy,
      });
    const table = protectedTable("Messages", {
      tableName: props.messagesTableName,
      partitionKey: { name: PARTITION_KEY, type: AttributeType.STRING },
      sortKey: { name: SORT_KEY, type: AttributeType.STRING },
    });
    table.addLocalSecondaryIndex({
      indexName: BY_POSITION_INDEX,
      sortKey: { name: POSITION, type: AttributeType.STRING },
      projectionType: ProjectionType.ALL,
    });
    table.addGlobalSecondaryIndex({
      indexName: CONVERSATIONS_INDEX,
      partitionKey: { name: LISTED, type: AttributeType.STRING },
      sortKey: { name: PARTITION_KEY, type: AttributeType.STRING },
      projectionType: ProjectionType.KEYS_ONLY,
    });
    this.messages = table;
    const channels = protectedTable("Channels", {
      tableName: props.channelsTableName,
      partitionKey: { name: CHANNEL_KEY, type: AttributeType.STRING },
    });
    channels.addGlobalSecondaryIndex({
      indexName: DUE_INDEX,
      partitionKey: { name: DUE_SHARD, type: AttributeType.STRING },
      sortKey: { name: DUE_AT, type: AttributeType.NUMBER },
      projectionType: ProjectionType.KEYS_ONLY,
    });
    this.channels = channels;
  }

  /**
   * Lets a principal (your own ingestion Lambda) ingest as `IngestClient` does: conditional puts
   * of messages (single and transactional), and the update that marks a channel due. No reads,
   * no deletes, and no index ARNs (writes go to the table).
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
      }),
    ];
  }

  /**
   * What the segmentation tick does and nothing more: reads arrivals (`byPosition` index) and
   * messages by id; reads and conditionally updates channel state, and lists due channels.
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
        actions: ["dynamodb:GetItem", "dynamodb:UpdateItem"],
        resources: [this.channels.tableArn],
      }),
      new PolicyStatement({
        actions: ["dynamodb:Query"],
        resources: [`${this.channels.tableArn}/index/${DUE_INDEX}`],
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
        }),
      )
      .reduce((all, grant) => all.combine(grant));
  }
}
