/**
 * The segmentation pipeline's engine. The scheduled tick and its budget, the fanned-out tick,
 * segment delivery to SQS, the function's configuration and its wiring to AWS, and the errors. Its
 * other audiences have their own entries: `./contract` (what consumers of the segment queue read),
 * `./schema` (the channels table's shape, for the CDK stack and its writers) and `./store` (the
 * channel store port and its implementations). The pure planner is `./planner.ts`.
 */
export { deadlineBudget, type TickBudget } from "./budget.js";
export {
  MAX_CHANNEL_CONCURRENCY,
  readDueShards,
  readSegmentConfig,
  SEGMENT_DEFAULTS,
  type SegmentFunctionConfig,
} from "./config.js";
export { deliverSegments } from "./delivery.js";
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
} from "./fan-out.js";
export { LambdaWorkerInvoker } from "./lambda-invoker.js";
export { plan } from "./planner.js";
export { SegmentDeliveryError, SqsSegmentSender } from "./sqs-delivery.js";
export { emptyTickSummary, runTick, type TickSummary } from "./tick.js";
export type {
  MetricName,
  PipelineLogger,
  PipelineMetrics,
  TickDependencies,
  TickSettings,
} from "./tick-dependencies.js";
export type { ConversationMode, PlannedSegment, SegmentDelivery, TickShare } from "./types.js";
export { tickDependencies } from "./wiring.js";
