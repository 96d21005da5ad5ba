import { Duration } from "aws-cdk-lib";
import { Architecture, Runtime } from "aws-cdk-lib/aws-lambda";
import { NodejsFunction, OutputFormat } from "aws-cdk-lib/aws-lambda-nodejs";
import { Construct } from "constructs";
import type { Storage } from "./storage.js";

export interface IngestionProps {
  storage: Storage;
}

/**
 * The ingestion Lambda: chat messages in (direct invocation or an SQS event source), history
 * store writes out.
 */
export class Ingestion extends Construct {
  readonly function: NodejsFunction;

  constructor(scope: Construct, id: string, props: IngestionProps) {
    super(scope, id);
    this.function = new NodejsFunction(this, "Function", {
      entry: new URL("../functions/ingest/handler.ts", import.meta.url).pathname,
      handler: "handler",
      runtime: Runtime.NODEJS_22_X,
      architecture: Architecture.ARM_64,
      memorySize: 256,
      timeout: Duration.seconds(30),
      environment: {
        MESSAGES_TABLE: props.storage.messages.tableName,
        CHANNELS_TABLE: props.storage.channels.tableName,
        POWERTOOLS_SERVICE_NAME: "convoseg-ingest",
      },
      bundling: {
        format: OutputFormat.ESM,
        target: "node22",
        minify: true,
        sourceMap: true,
        // The SDK v3 ships in the Lambda runtime; bundling it would add ~600 KB.
        externalModules: ["@aws-sdk/*"],
        // Powertools has CommonJS parts that call require() inside an ESM bundle.
        banner:
          "import { createRequire } from 'node:module'; const require = createRequire(import.meta.url);",
      },
    });
    props.storage.grantIngest(this.function);
  }
}
