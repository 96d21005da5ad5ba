/**
 * Audit items in the results table's deployment partition (` deployment`, which no channel id
 * can be): the erasure writes that table anyway, so it needs no other grant, and a `channel
 * delete` of a channel (which removes that channel's partition) leaves the audit in place.
 */
import type { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { type DynamoDBDocumentClient, PutCommand, QueryCommand } from "@aws-sdk/lib-dynamodb";
import { documentClient, isConditionFailure } from "../../base/dynamodb/index.js";
import {
  DEPLOYMENT_PARTITION,
  ERASURE_AUDIT_PREFIX,
  RESULTS_PARTITION_KEY,
  RESULTS_SORT_KEY,
} from "../../knowledge/store/schema/index.js";
import { type AuditStore, auditItemKey, type ErasureAudit, storedAudit } from "./audit.js";

export class DynamoDbAuditStore implements AuditStore {
  private readonly documents: DynamoDBDocumentClient;

  constructor(private readonly options: { client: DynamoDBClient; tableName: string }) {
    this.documents = documentClient(options.client);
  }

  async unfinished(authorKey: string): Promise<ErasureAudit | undefined> {
    return (await this.list(authorKey)).find((a) => a.state !== "finished");
  }

  async list(authorKey: string): Promise<ErasureAudit[]> {
    const found: ErasureAudit[] = [];
    let start: Record<string, unknown> | undefined;
    do {
      const page = await this.documents.send(
        new QueryCommand({
          TableName: this.options.tableName,
          KeyConditionExpression: "#pk = :pk AND begins_with(#sk, :prefix)",
          ExpressionAttributeNames: { "#pk": RESULTS_PARTITION_KEY, "#sk": RESULTS_SORT_KEY },
          ExpressionAttributeValues: {
            ":pk": DEPLOYMENT_PARTITION,
            ":prefix": `${ERASURE_AUDIT_PREFIX}${authorKey}#`,
          },
          ConsistentRead: true,
          ExclusiveStartKey: start,
        }),
      );
      for (const item of page.Items ?? []) {
        const { [RESULTS_PARTITION_KEY]: _, [RESULTS_SORT_KEY]: __, ...audit } = item;
        found.push(storedAudit(audit));
      }
      start = page.LastEvaluatedKey;
    } while (start !== undefined);
    return found;
  }

  async save(audit: ErasureAudit): Promise<boolean> {
    const first = audit.version === 1;
    try {
      await this.documents.send(
        new PutCommand({
          TableName: this.options.tableName,
          Item: {
            [RESULTS_PARTITION_KEY]: DEPLOYMENT_PARTITION,
            [RESULTS_SORT_KEY]: auditItemKey(audit),
            ...audit,
          },
          ConditionExpression: first ? "attribute_not_exists(#sk)" : "version = :previous",
          ExpressionAttributeNames: first ? { "#sk": RESULTS_SORT_KEY } : undefined,
          ExpressionAttributeValues: first ? undefined : { ":previous": audit.version - 1 },
        }),
      );
      return true;
    } catch (error) {
      if (isConditionFailure(error)) return false;
      throw error;
    }
  }
}
