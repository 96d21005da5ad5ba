import { RemovalPolicy } from "aws-cdk-lib";
import {
  AttributeType,
  BillingMode,
  type ITable,
  ProjectionType,
  Table,
  TableEncryption,
} from "aws-cdk-lib/aws-dynamodb";
import type { Grant, IGrantable } from "aws-cdk-lib/aws-iam";
import { Construct } from "constructs";
import {
  BY_POSITION_INDEX,
  CONVERSATIONS_INDEX,
  LISTED,
  PARTITION_KEY,
  POSITION,
  SORT_KEY,
} from "../lib/history/dynamodb/schema.js";

export interface StorageProps {
  /** Physical table name; generated when omitted. */
  messagesTableName?: string;
  /** What `cdk destroy` does with the data: RETAIN (the default) keeps it. */
  removalPolicy?: RemovalPolicy;
}

/**
 * The messages table: the system of record every other part reads. Key schema and indexes come
 * from the history store's schema module, so code and table cannot drift apart.
 */
export class Storage extends Construct {
  readonly messages: ITable;

  constructor(scope: Construct, id: string, props: StorageProps = {}) {
    super(scope, id);
    const removalPolicy = props.removalPolicy ?? RemovalPolicy.RETAIN;
    const table = new Table(this, "Messages", {
      tableName: props.messagesTableName,
      partitionKey: { name: PARTITION_KEY, type: AttributeType.STRING },
      sortKey: { name: SORT_KEY, type: AttributeType.STRING },
      billingMode: BillingMode.PAY_PER_REQUEST,
      encryption: TableEncryption.AWS_MANAGED,
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
      deletionProtection: removalPolicy === RemovalPolicy.RETAIN,
      removalPolicy,
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
  }

  /**
   * Lets a principal (your own ingestion Lambda) write messages as the history store does:
   * conditional puts only, no reads, updates or deletes.
   */
  grantIngest(grantee: IGrantable): Grant {
    return this.messages.grant(grantee, "dynamodb:PutItem");
  }
}
