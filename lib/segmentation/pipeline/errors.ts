/**
 * The pipeline's error family: each has a stable `code` and a literal `name` (bundling renames
 * classes, and logs and alarms name errors by these).
 */
export class PipelineError extends Error {
  override readonly name: string = "PipelineError";
  readonly code: string;

  constructor(code: string, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
  }
}

/** A configuration value that is missing or invalid; the message names the variable. */
export class PipelineConfigError extends PipelineError {
  override readonly name: string = "PipelineConfigError";
  constructor(
    readonly setting: string,
    /** What is wrong with it, without the variable's name. */
    readonly problem: string,
  ) {
    super("PIPELINE_INVALID_CONFIG", `segment: ${setting} ${problem}`);
  }
}

/** A channel's state could not be read as this version of the pipeline writes it. */
export class ChannelStateError extends PipelineError {
  override readonly name: string = "ChannelStateError";
  constructor(
    readonly channel: string,
    problem: string,
  ) {
    super("PIPELINE_BAD_CHANNEL_STATE", `channel ${JSON.stringify(channel)}: ${problem}`);
  }
}

/** A worker's event is not the `{ share: { index, of } }` the dispatcher sends; names the field. */
export class WorkerEventError extends PipelineError {
  override readonly name: string = "WorkerEventError";
  constructor(
    readonly field: string,
    problem: string,
  ) {
    super("PIPELINE_BAD_WORKER_EVENT", `segment worker event: ${field} ${problem}`);
  }
}

/** Some workers of a fanned-out tick could not be started; their channels wait for the next. */
export class DispatchError extends PipelineError {
  override readonly name: string = "DispatchError";
  constructor(
    readonly failed: readonly { index: number; of: number }[],
    options?: { cause?: unknown },
  ) {
    super(
      "PIPELINE_DISPATCH_FAILED",
      `${failed.length} worker(s) not started (shares ${failed.map((s) => `${s.index}/${s.of}`).join(", ")}): their channels stay due for the next tick`,
      options,
    );
  }
}
