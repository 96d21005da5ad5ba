import { readSegmentConfig } from "convoseg/pipeline";
import { describe, expect, it } from "vitest";

const required = {
  MESSAGES_TABLE: "messages",
  CHANNELS_TABLE: "channels",
  SEGMENT_QUEUE_URL: "https://sqs.example/queue.fifo",
};

describe("segment function configuration", () => {
  it("uses the segmenter's defaults and sensible operational ones", () => {
    expect(readSegmentConfig(required)).toEqual({
      messagesTable: "messages",
      channelsTable: "channels",
      queueUrl: "https://sqs.example/queue.fifo",
      fifo: true,
      maxBodyBytes: 262144,
      budgetMarginMs: 20_000,
      dueShards: 4,
      previousDueShards: null,
      workers: 1,
      workerFunction: null,
      askLinks: false,
      settings: {
        maxSize: 500,
        settle: 86_400_000,
        minItems: 1,
        grace: 60_000,
        holdTimeoutMs: 300_000,
        maxArrivalsPerChannel: 5000,
        leaseMs: 900_000,
        channelConcurrency: 8,
        conversations: "linked",
      },
    });
  });

  it("reads the due index's shard count and the previous one while migrating", () => {
    const config = readSegmentConfig({ ...required, DUE_SHARDS: "2", PREVIOUS_DUE_SHARDS: "8" });
    expect([config.dueShards, config.previousDueShards]).toEqual([2, 8]);
    expect(readSegmentConfig({ ...required, PREVIOUS_DUE_SHARDS: "0" }).previousDueShards).toBe(
      null,
    );
  });

  it("fans out to workers only with a worker function, and to no more than the shards", () => {
    const config = readSegmentConfig({
      ...required,
      DUE_SHARDS: "8",
      WORKERS: "8",
      WORKER_FUNCTION: "convoseg-worker",
    });
    expect([config.workers, config.workerFunction]).toEqual([8, "convoseg-worker"]);
    expect(readSegmentConfig({ ...required, ASK_LINKS: "true" }).askLinks).toBe(true);
    expect(() => readSegmentConfig({ ...required, ASK_LINKS: "yes" })).toThrow(
      'segment: ASK_LINKS must be true or false (got "yes")',
    );
    expect(() => readSegmentConfig({ ...required, WORKERS: "2" })).toThrow(
      "segment: WORKER_FUNCTION must be set when WORKERS is over 1",
    );
    expect(() =>
      readSegmentConfig({ ...required, WORKERS: "5", WORKER_FUNCTION: "convoseg-worker" }),
    ).toThrow("segment: WORKERS must not exceed DUE_SHARDS (4)");
    expect(() => readSegmentConfig({ ...required, WORKERS: "0" })).toThrow(
      "segment: WORKERS must be an integer from 1 to 1000",
    );
  });

  it("reads durations and numbers", () => {
    const config = readSegmentConfig({
      ...required,
      SETTLE: "12h",
      MIN_ITEMS: "3",
      SEGMENT_QUEUE_FIFO: "false",
    });
    expect([config.settings.settle, config.settings.minItems, config.fifo]).toEqual([
      43_200_000,
      3,
      false,
    ]);
  });

  it.each([
    [{ MESSAGES_TABLE: "" }, "MESSAGES_TABLE must be set"],
    [{ MESSAGES_TABLE: " " }, 'MESSAGES_TABLE must not be blank (got " ")'],
    [{ SEGMENT_QUEUE_URL: "\t" }, 'SEGMENT_QUEUE_URL must not be blank (got "\\t")'],
    [{ MIN_ITEMS: "501" }, "MIN_ITEMS must not exceed MAX_SIZE (500) (got 501)"],
    [{ MAX_SIZE: "2", MIN_ITEMS: "3" }, "MIN_ITEMS must not exceed MAX_SIZE (2) (got 3)"],
    [{ CHANNELS_TABLE: undefined }, "CHANNELS_TABLE must be set"],
    [{ MAX_SIZE: "0" }, "MAX_SIZE must be an integer from 1 to 100000"],
    [{ MIN_ITEMS: "two" }, "MIN_ITEMS must be an integer from 1 to 100000"],
    [{ SETTLE: "-1h" }, "SETTLE must be a duration"],
    [{ GRACE: "soon" }, "GRACE must be a duration"],
    [{ SEGMENT_QUEUE_FIFO: "yes" }, "SEGMENT_QUEUE_FIFO must be true or false"],
    [{ MAX_BODY_BYTES: "10" }, "MAX_BODY_BYTES must be an integer from 16384 to 1048576"],
    [{ DUE_SHARDS: "0" }, "DUE_SHARDS must be an integer from 1 to 1000"],
    [{ DUE_SHARDS: "1001" }, "DUE_SHARDS must be an integer from 1 to 1000"],
    [{ DUE_SHARDS: "four" }, "DUE_SHARDS must be an integer from 1 to 1000"],
    [{ PREVIOUS_DUE_SHARDS: "-2" }, "PREVIOUS_DUE_SHARDS must be an integer from 0 to 1000"],
    [{ PREVIOUS_DUE_SHARDS: "1001" }, "PREVIOUS_DUE_SHARDS must be an integer from 0 to 1000"],
  ])("rejects %o naming the setting", (override, message) => {
    expect(() => readSegmentConfig({ ...required, ...override })).toThrow(message);
  });
});
