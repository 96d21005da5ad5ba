import { defineConfig } from "vitest/config";

/**
 * Two tiers. `unit`: pure code and the memory stores, no emulator, seconds (`npm test`).
 * `emulator`: everything that needs DynamoDB Local, the SQS emulator, Chromium, a scripted
 * server on 127.0.0.1 or a CDK synth (`npm run test:emulator`; `npm run check` runs both).
 * A test that needs an emulator but is left out of this list fails in `unit` on its missing
 * endpoint, so a misfiled test cannot pass quietly.
 */
const EMULATOR_TESTS = [
  "test/api/dynamodb-http.test.ts",
  "test/api/serve-workspace.test.ts",
  "test/bench/capacity.test.ts",
  "test/cli/channel.test.ts",
  "test/cli/channel-names.test.ts",
  "test/cli/channel-delete.test.ts",
  "test/cli/digest.test.ts",
  "test/functions/digest-wiring.test.ts",
  "test/cli/erase.test.ts",
  "test/cli/failures.test.ts",
  "test/cli/import.test.ts",
  "test/cli/import-chat-store.test.ts",
  "test/cli/questions.test.ts",
  "test/cli/reextract.test.ts",
  "test/cli/run-bedrock.test.ts",
  "test/cli/run-extraction.test.ts",
  "test/cli/run.test.ts",
  "test/cli/topics.test.ts",
  "test/cli/workspace.test.ts",
  "test/connectors/claims-dynamodb.test.ts",
  "test/connectors/slack-users.test.ts",
  "test/discord/*-dynamodb.test.ts",
  "test/discord/*-server.test.ts",
  "test/dynamodb/**/*.test.ts",
  "test/erasure/*-dynamodb.test.ts",
  "test/extraction/llm/bedrock.test.ts",
  "test/extraction/llm/embeddings.test.ts",
  "test/extraction/llm/openai.test.ts",
  "test/functions/**/*.test.ts",
  "test/history/dynamodb-changes.test.ts",
  "test/history/dynamodb-store.test.ts",
  "test/history/retention.test.ts",
  "test/infra/api-stack.test.ts",
  "test/infra/bundle.test.ts",
  "test/infra/connectors.test.ts",
  "test/infra/erasure.test.ts",
  "test/infra/discord-stack.test.ts",
  "test/infra/overrides.test.ts",
  "test/infra/stack.test.ts",
  "test/ingest/ingest-client.test.ts",
  "test/knowledge/consumer.test.ts",
  "test/knowledge/auth-failures.test.ts",
  "test/knowledge/crash-points.test.ts",
  "test/knowledge/extract-segment.test.ts",
  "test/knowledge/result-retention.test.ts",
  "test/knowledge/question-index-dynamodb.test.ts",
  "test/knowledge/redact-dynamodb.test.ts",
  "test/knowledge/term-statistics-dynamodb.test.ts",
  "test/lifecycle/**/*.test.ts",
  "test/local/**/*.test.ts",
  "test/pipeline/due-shards.test.ts",
  "test/pipeline/dynamodb-channel-store.test.ts",
  "test/pipeline/fan-out-aws.test.ts",
  "test/pipeline/pipeline-faults.test.ts",
  "test/pipeline/sqs-delivery.test.ts",
  "test/pipeline/tick-properties-aws.test.ts",
  "test/pipeline/tick.test.ts",
  "test/report/browser.test.ts",
];

// The AWS SDK warns once per process that its 2027 releases need Node 22; the global setups
// load it in this process, where `test.env` does not reach.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= "true";

export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 60_000,
    unstubEnvs: true,
    env: {
      AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: "true",
      POWERTOOLS_LOG_LEVEL: "SILENT",
    },
    projects: [
      {
        extends: true,
        test: {
          name: "unit",
          include: ["test/**/*.test.ts"],
          exclude: EMULATOR_TESTS,
          // Pure tests share their workers' module cache: no file mocks modules or keeps global
          // state, and loading the SDKs once per worker instead of once per file
          // takes a third off the tier's time.
          isolate: false,
        },
      },
      {
        extends: true,
        test: {
          name: "emulator",
          include: EMULATOR_TESTS,
          // DynamoDB Local and the SQS emulator, started once for the tier (stopped by the
          // teardowns the setups return).
          globalSetup: ["test/setup/dynamodb-local.ts", "test/setup/sqs-local.ts"],
        },
      },
    ],
  },
});
