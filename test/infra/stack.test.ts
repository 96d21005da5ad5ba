import { App } from "aws-cdk-lib";
import { Match, Template } from "aws-cdk-lib/assertions";
import { beforeAll, describe, expect, it } from "vitest";
import { ConvosegStack } from "../../infra/stack.js";

let template: Template;

beforeAll(() => {
  template = Template.fromStack(new ConvosegStack(new App(), "Test"));
}, 60_000);

describe("ConvosegStack", () => {
  it("declares the messages table as the history store expects it, and keeps its data", () => {
    template.hasResource("AWS::DynamoDB::Table", {
      DeletionPolicy: "Retain",
      UpdateReplacePolicy: "Retain",
      Properties: {
        BillingMode: "PAY_PER_REQUEST",
        DeletionProtectionEnabled: true,
        PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true },
        SSESpecification: { SSEEnabled: true },
        KeySchema: [
          { AttributeName: "conversation", KeyType: "HASH" },
          { AttributeName: "key", KeyType: "RANGE" },
        ],
        LocalSecondaryIndexes: [
          {
            IndexName: "byPosition",
            KeySchema: [
              { AttributeName: "conversation", KeyType: "HASH" },
              { AttributeName: "position", KeyType: "RANGE" },
            ],
            Projection: { ProjectionType: "ALL" },
          },
        ],
        GlobalSecondaryIndexes: [
          Match.objectLike({
            IndexName: "conversations",
            KeySchema: [
              { AttributeName: "listed", KeyType: "HASH" },
              { AttributeName: "conversation", KeyType: "RANGE" },
            ],
            Projection: { ProjectionType: "KEYS_ONLY" },
          }),
        ],
      },
    });
  });

  it("declares the channels table with the sparse due index", () => {
    template.hasResourceProperties("AWS::DynamoDB::Table", {
      KeySchema: [{ AttributeName: "channel", KeyType: "HASH" }],
      PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true },
      GlobalSecondaryIndexes: [
        Match.objectLike({
          IndexName: "due",
          KeySchema: [
            { AttributeName: "dueShard", KeyType: "HASH" },
            { AttributeName: "dueAt", KeyType: "RANGE" },
          ],
          Projection: { ProjectionType: "KEYS_ONLY" },
        }),
      ],
    });
  });

  it("runs ingestion on Node 22, arm64, pointed at the table", () => {
    template.hasResourceProperties("AWS::Lambda::Function", {
      Runtime: "nodejs22.x",
      Architectures: ["arm64"],
      Environment: {
        Variables: Match.objectLike({
          MESSAGES_TABLE: { Ref: Match.stringLikeRegexp("StorageMessages") },
        }),
      },
    });
  });

  it("lets ingestion only put messages and mark channels: no wildcards, reads or deletes", () => {
    const policies = template.findResources("AWS::IAM::Policy");
    const statements = Object.values(policies).flatMap(
      (policy) =>
        (policy as { Properties: { PolicyDocument: { Statement: { Action: unknown }[] } } })
          .Properties.PolicyDocument.Statement,
    );
    expect(statements.map((s) => s.Action)).toEqual(["dynamodb:PutItem", "dynamodb:UpdateItem"]);
  });
});
