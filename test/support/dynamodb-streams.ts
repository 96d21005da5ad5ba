/**
 * Reads a DynamoDB Local table's stream through the Streams API's JSON protocol (DynamoDB Local
 * serves it on its own endpoint; no SDK client of the version the project pins exists): every
 * record of every shard from its start, as Lambda hands them to a stream's function.
 */
import { type DynamoDBClient, UpdateTableCommand } from "@aws-sdk/client-dynamodb";
import type { LambdaStreamRecord } from "convoseg/ingest";
import { inject } from "vitest";

/** Turns on the table's stream (new and old images, as the stack's messages table has). */
export async function enableStream(client: DynamoDBClient, tableName: string): Promise<string> {
  const { TableDescription } = await client.send(
    new UpdateTableCommand({
      TableName: tableName,
      StreamSpecification: { StreamEnabled: true, StreamViewType: "NEW_AND_OLD_IMAGES" },
    }),
  );
  const arn = TableDescription?.LatestStreamArn;
  if (arn === undefined) throw new Error(`no stream on ${tableName}`);
  return arn;
}

async function call<T>(target: string, body: unknown): Promise<T> {
  const response = await fetch(inject("dynamodbEndpoint"), {
    method: "POST",
    headers: {
      "content-type": "application/x-amz-json-1.0",
      "x-amz-target": `DynamoDBStreams_20120810.${target}`,
      // DynamoDB Local reads the access key and region from it, and checks no signature.
      authorization:
        "AWS4-HMAC-SHA256 Credential=test/20260101/us-east-1/dynamodb/aws4_request, SignedHeaders=host, Signature=0",
    },
    body: JSON.stringify(body),
  });
  const text = await response.text();
  if (!response.ok) throw new Error(`${target}: ${response.status} ${text}`);
  return JSON.parse(text) as T;
}

/** Every record the stream holds, shard by shard, each shard in its order. */
export async function streamRecords(streamArn: string): Promise<LambdaStreamRecord[]> {
  const { StreamDescription } = await call<{
    StreamDescription: { Shards: { ShardId: string }[] };
  }>("DescribeStream", { StreamArn: streamArn });
  const records: LambdaStreamRecord[] = [];
  for (const { ShardId } of StreamDescription.Shards) {
    let { ShardIterator: iterator } = await call<{ ShardIterator?: string }>("GetShardIterator", {
      StreamArn: streamArn,
      ShardId,
      ShardIteratorType: "TRIM_HORIZON",
    });
    while (iterator !== undefined) {
      const page = await call<{ Records: LambdaStreamRecord[]; NextShardIterator?: string }>(
        "GetRecords",
        { ShardIterator: iterator },
      );
      records.push(...page.Records);
      // An open shard always has a next iterator: an empty page is its end for now.
      iterator = page.Records.length === 0 ? undefined : page.NextShardIterator;
    }
  }
  return records;
}
