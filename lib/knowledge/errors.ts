/**
 * The knowledge error family (extraction results, the topic index and the extraction consumer):
 * a stable `code` and a literal `name` each (bundling renames classes).
 */
export class KnowledgeError extends Error {
  override readonly name: string = "KnowledgeError";
  readonly code: string;

  constructor(code: string, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
  }
}

/** One or more settings are missing or invalid; the message names every one at fault. */
export class KnowledgeConfigError extends KnowledgeError {
  override readonly name: string = "KnowledgeConfigError";
  constructor(readonly problems: readonly { setting: string; problem: string }[]) {
    super(
      "KNOWLEDGE_INVALID_CONFIG",
      `extract: ${problems.map((p) => `${p.setting} ${p.problem}`).join("; ")}`,
    );
  }
}

/**
 * Another delivery of the segment holds its extraction lease: this one must not pay for the same
 * windows, so it fails and is retried once the other has finished (or its lease has lapsed).
 */
export class SegmentBusyError extends KnowledgeError {
  override readonly name: string = "SegmentBusyError";
  constructor(
    readonly segmentId: string,
    readonly leaseExpiresAt: number,
  ) {
    super(
      "KNOWLEDGE_SEGMENT_BUSY",
      `segment ${segmentId}: another delivery is extracting it (lease until ${new Date(leaseExpiresAt).toISOString()})`,
    );
  }
}

/** A stored item this version cannot read (an unknown schema version, or a damaged item). */
export class KnowledgeItemError extends KnowledgeError {
  override readonly name: string = "KnowledgeItemError";
  constructor(
    readonly key: string,
    problem: string,
  ) {
    super("KNOWLEDGE_BAD_ITEM", `results item ${key}: ${problem}`);
  }
}

/**
 * The extraction's lease lapsed and another delivery took the segment over before the result was
 * written: that delivery writes it, so this one stores nothing and fails.
 */
export class LeaseLostError extends KnowledgeError {
  override readonly name: string = "LeaseLostError";
  constructor(readonly segmentId: string) {
    super(
      "KNOWLEDGE_LEASE_LOST",
      `segment ${segmentId}: the extraction lease lapsed before the result was written (raise LEASE to the function timeout)`,
    );
  }
}

/**
 * The day's token budget (the deployment's, or the channel's) is spent: the segment waits,
 * without a model call, until the next UTC day or until the budget is raised.
 */
export class BudgetPausedError extends KnowledgeError {
  override readonly name: string = "BudgetPausedError";
  constructor(
    readonly scope: "deployment" | "channel",
    readonly budget: number,
    readonly spent: number,
    readonly resumesAt: number,
  ) {
    super(
      "KNOWLEDGE_BUDGET_PAUSED",
      `the ${scope === "deployment" ? "deployment's daily token budget (dailyTokenBudget" : "channel's daily token budget (channelDailyTokenBudget"} ${budget}) is spent (${spent} tokens today): extraction waits until ${new Date(resumesAt).toISOString()} or until the budget is raised`,
    );
  }
}

/**
 * The model provider failed many calls in a row: calls stop for a cool-down (the circuit
 * breaker is open) and the segment waits, without a model call, rather than hammer it.
 */
export class CircuitOpenError extends KnowledgeError {
  override readonly name: string = "CircuitOpenError";
  constructor(
    readonly failures: number,
    readonly closesAt: number,
  ) {
    super(
      "KNOWLEDGE_CIRCUIT_OPEN",
      `the model provider failed ${failures} calls in a row: no calls until ${new Date(closesAt).toISOString()} (circuit breaker open)`,
    );
  }
}

/**
 * The invocation's time ran out before the segment was started: it waits for the next
 * invocation, without counting as an attempt.
 */
export class DeadlineError extends KnowledgeError {
  override readonly name: string = "DeadlineError";
  constructor(readonly segmentId: string | undefined) {
    super(
      "KNOWLEDGE_DEADLINE",
      `segment ${segmentId ?? "?"}: the function's remaining time ran out before it was started; it is retried by the next invocation`,
    );
  }
}

/**
 * A question correction that cannot be made: a field of the request is invalid (`field` names
 * it), or the question or the answering message it names is not in the channel.
 */
export class CorrectionError extends KnowledgeError {
  override readonly name: string = "CorrectionError";
  constructor(
    code:
      | "KNOWLEDGE_BAD_CORRECTION"
      | "KNOWLEDGE_QUESTION_NOT_FOUND"
      | "KNOWLEDGE_ANSWER_NOT_FOUND",
    readonly field: string,
    message: string,
  ) {
    super(code, message);
  }
}
