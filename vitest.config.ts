import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // DynamoDB Local and the SQS emulator, started once for the run (stopped by the teardowns
    // the setups return).
    globalSetup: ["test/setup/dynamodb-local.ts", "test/setup/sqs-local.ts"],
    testTimeout: 30_000,
    unstubEnvs: true,
    env: {
      AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: "true",
      POWERTOOLS_LOG_LEVEL: "SILENT",
    },
    hookTimeout: 60_000,
  },
});
