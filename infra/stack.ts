import { CfnOutput, Stack, type StackProps } from "aws-cdk-lib";
import type { Construct } from "constructs";
import { Ingestion } from "./ingestion.js";
import { Storage } from "./storage.js";

/** Everything convoseg deploys into an account. */
export class ConvosegStack extends Stack {
  readonly storage: Storage;
  readonly ingestion: Ingestion;

  constructor(scope: Construct, id: string, props?: StackProps) {
    super(scope, id, props);
    this.storage = new Storage(this, "Storage");
    this.ingestion = new Ingestion(this, "Ingestion", { storage: this.storage });
    new CfnOutput(this, "MessagesTableName", { value: this.storage.messages.tableName });
    new CfnOutput(this, "ChannelsTableName", { value: this.storage.channels.tableName });
    new CfnOutput(this, "IngestFunctionName", { value: this.ingestion.function.functionName });
  }
}
