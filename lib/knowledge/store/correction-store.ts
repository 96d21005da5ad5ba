/** Question corrections on DynamoDB: one Query per channel, conditional rewrites. */
import { DeleteCommand, PutCommand } from "@aws-sdk/lib-dynamodb";
import { isConditionFailure } from "../../base/dynamodb/index.js";
import { KnowledgeItemError } from "../errors.js";
import {
  CORRECTION_PREFIX,
  correctionItemKey,
  type QuestionCorrection,
} from "./correction-item.js";
import { queryPrefix, type RedactionTable } from "./redaction-table.js";
import { SCHEMA_VERSION } from "./schema/items.js";
import { RESULTS_PARTITION_KEY, RESULTS_SORT_KEY } from "./schema/table.js";

type Table = Pick<RedactionTable, "documents" | "tableName">;

export async function listCorrections(
  table: Table,
  channel: string,
): Promise<QuestionCorrection[]> {
  return (await queryPrefix(table, channel, CORRECTION_PREFIX)).map((item) => {
    if (item.v !== SCHEMA_VERSION) {
      throw new KnowledgeItemError(
        `${channel}/${String(item[RESULTS_SORT_KEY])}`,
        "not a v1 correction",
      );
    }
    const { [RESULTS_PARTITION_KEY]: _pk, [RESULTS_SORT_KEY]: _sk, ...correction } = item;
    return { ...correction, channel } as QuestionCorrection;
  });
}

/** `ResultStore.saveCorrection` on DynamoDB: a put or delete, conditional with `previous`. */
export async function saveCorrection(
  table: Table,
  next: QuestionCorrection | undefined,
  previous?: QuestionCorrection,
): Promise<boolean> {
  const target = next ?? previous;
  if (target === undefined) return true;
  const Key = {
    [RESULTS_PARTITION_KEY]: target.channel,
    [RESULTS_SORT_KEY]: correctionItemKey(target),
  };
  // Only over the correction read: a person's newer one is never overwritten by a redaction.
  const unchanged = previous && {
    ConditionExpression: "#at = :at AND #action = :action",
    ExpressionAttributeNames: { "#at": "at", "#action": "action" },
    ExpressionAttributeValues: { ":at": previous.at, ":action": previous.action },
  };
  try {
    if (next === undefined) {
      await table.documents.send(
        new DeleteCommand({ TableName: table.tableName, Key, ...unchanged }),
      );
    } else {
      await table.documents.send(
        new PutCommand({ TableName: table.tableName, Item: { ...next, ...Key }, ...unchanged }),
      );
    }
    return true;
  } catch (error) {
    if (unchanged && isConditionFailure(error)) return false;
    throw error;
  }
}
