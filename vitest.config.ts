import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // DynamoDB Local, started once for the run (and stopped by the teardown it returns).
    globalSetup: ["test/setup/dynamodb-local.ts"],
    testTimeout: 30_000,
    unstubEnvs: true,
    env: {
      AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: "true",
      POWERTOOLS_LOG_LEVEL: "SILENT",
    },
    hookTimeout: 60_000,
  },
});
