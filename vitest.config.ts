import { availableParallelism } from "node:os";
import { defineConfig } from "vitest/config";

/**
 * Two tiers, told apart by the file name. `unit` (`*.test.ts`): pure code and the memory stores,
 * no emulator, seconds (`npm test`). `emulator` (`*.emulator.test.ts`): everything that needs
 * DynamoDB Local, the SQS emulator, Chromium, a scripted server on 127.0.0.1 or a CDK synth
 * (`npm run test:emulator`; `npm run check` runs both). A test that needs an emulator but lacks
 * the suffix fails in `unit` on its missing endpoint, so a misfiled test cannot pass quietly.
 */
const EMULATOR_TESTS = "test/**/*.emulator.test.ts";

// The AWS SDK warns once per process that its 2027 releases need Node 22; the global setups
// load it in this process, where `test.env` does not reach.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= "true";

export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 60_000,
    unstubEnvs: true,
    // `npm run check` measures both tiers' coverage of lib/ and prints its summary; the floor is
    // the figure measured when it was set (2026-12-06: statements 96.5%, branches 90.7%, functions
    // 97.9%, lines 97.6%), so coverage can rise but not fall unnoticed. The report's page code
    // (lib/outlets/report/page) runs in Chromium, where Node's coverage cannot see it: the
    // browser tests check it, and counted here it only measured that Node never runs it.
    coverage: {
      provider: "v8",
      include: ["lib/**/*.ts"],
      exclude: ["lib/**/index.ts", "lib/outlets/report/page/**"],
      reporter: ["text-summary"],
      thresholds: { statements: 96, branches: 90, functions: 97, lines: 97 },
    },
    env: {
      AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: "true",
      POWERTOOLS_LOG_LEVEL: "SILENT",
      // Each workspace a test opens stops its DynamoDB Local with it, as before warm workspaces:
      // no keeper outlives the run. test/local/warm-workspace.emulator.test.ts turns it back on.
      CONVOSEG_WARM_MINUTES: "0",
    },
    projects: [
      {
        extends: true,
        test: {
          name: "unit",
          include: ["test/**/*.test.ts"],
          exclude: [EMULATOR_TESTS],
          // Pure tests share their workers' module cache: no file mocks modules or keeps global
          // state, and loading the SDKs once per worker instead of once per file
          // takes a third off the tier's time.
          isolate: false,
          // Vitest's default leaves a core to itself (one worker on two cores); the tier's files
          // are pure and share nothing, so each core takes files.
          maxWorkers: Math.max(2, availableParallelism()),
          // Projects with workers of their own run as groups: the unit tier first, then this.
          sequence: { groupOrder: 0 },
        },
      },
      {
        extends: true,
        test: {
          name: "emulator",
          include: [EMULATOR_TESTS],
          // DynamoDB Local and the SQS emulator, started once for the tier (stopped by the
          // teardowns the setups return).
          globalSetup: ["test/setup/dynamodb-local.ts", "test/setup/sqs-local.ts"],
          // Most of a file's time is spent waiting on DynamoDB Local, a JVM started by a command
          // or Chromium, not on this process: files run side by side, each in tables, queues,
          // workspaces and ports of its own (one worker a core, as Vitest's default, ran them one
          // at a time on two cores: 17 minutes).
          maxWorkers: availableParallelism() + 1,
          sequence: { groupOrder: 1 },
        },
      },
    ],
  },
});
