/**
 * The segmentation pipeline: the pure planner, each channel's state and the store it is kept in
 * (DynamoDB, or memory for tests), the positions ingestion writes at, the scheduled tick, segment
 * delivery to SQS, and the segment message contract (v1) consumers read.
 */
export {
  type BrokenHold,
  type ChannelMarks,
  type ChannelRecord,
  type ChannelSnapshot,
  type ChannelStore,
  type DueChannel,
  decodeTickState,
  EMPTY_OUTBOX,
  EMPTY_TICK_STATE,
  encodeTickState,
  type Hold,
  hasWork,
  type Outbox,
  type RecordOutcome,
  type TickState,
} from "./channel-state.js";
export {
  CHANNEL_KEY,
  ChannelPositions,
  type ChannelPositionsOptions,
  channelsTableDefinition,
  checkDueShards,
  createChannelsTable,
  DUE_AT,
  DUE_INDEX,
  DUE_SHARD,
  DUE_SHARDS,
  DynamoDbChannelStore,
  type DynamoDbChannelStoreOptions,
  dueShardOf,
  dueShardsRead,
  ITEM_KEY,
  MARK_ATTRIBUTES,
  MARKS_ITEM,
  MAX_DUE_SHARDS,
  MAX_STATE_BYTES,
  SHARE_CLAIM_ITEM,
  STATE_ITEM,
  STATE_PAGE_BYTES,
  shareShards,
} from "./channel-table.js";
export {
  MAX_CHANNEL_CONCURRENCY,
  readDueShards,
  readSegmentConfig,
  SEGMENT_DEFAULTS,
  type SegmentFunctionConfig,
} from "./config.js";
export { type BodyOptions, type DeliveryReport, deliverSegments, FETCH_BATCH } from "./delivery.js";
export {
  ChannelStateError,
  DispatchError,
  PipelineConfigError,
  PipelineError,
  WorkerEventError,
} from "./errors.js";
export {
  type DispatchSummary,
  dispatchTick,
  MAX_WORKERS,
  parseWorkerEvent,
  runShare,
  type ShareRun,
  tickShares,
  type WorkerInvoker,
} from "./fan-out.js";
export { LambdaWorkerInvoker, type LambdaWorkerInvokerOptions } from "./lambda-invoker.js";
export { MemoryChannelStore } from "./memory-channel-store.js";
export { type Plan, plan, RECENT_LIMIT, segmentId } from "./planner.js";
export {
  DEFAULT_MAX_BODY_BYTES,
  encodeBody,
  type InlineMessage,
  InvalidSegmentMessageError,
  isSqsBody,
  MissingSegmentMessagesError,
  parseSegmentBody,
  readSegmentMessages,
  type SegmentMessageSource,
  type SegmentMessageV1,
  SegmentTooLargeError,
  segmentBody,
} from "./segment-message.js";
export {
  fifoId,
  SegmentDeliveryError,
  SqsSegmentSender,
  type SqsSegmentSenderOptions,
} from "./sqs-delivery.js";
export {
  BROKEN_HOLD_WATCH_MS,
  type ChannelOutcome,
  type ChannelReport,
  emptyTickSummary,
  MAX_ARRIVAL_BYTES,
  type MessageSource,
  type MetricName,
  type PipelineLogger,
  type PipelineMetrics,
  processChannel,
  runTick,
  type SegmentSink,
  TARGET_STATE_BYTES,
  type TickDependencies,
  type TickSettings,
  type TickSummary,
} from "./tick.js";
export {
  EMPTY_PLANNER_STATE,
  type EmittedBound,
  type MessageRef,
  type PipelineConfig,
  type PlannedSegment,
  type PlannerState,
  type SegmentDelivery,
  type TickShare,
} from "./types.js";
export { type TickEnvironment, tickDependencies } from "./wiring.js";
