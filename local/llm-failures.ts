/**
 * What a local command makes of a failed model call: its cause, said for a person (what happened,
 * and what to do about it), and a budget that stops extraction once a few segments in a row have
 * failed with the same cause, rather than retrying every segment for minutes against an endpoint
 * that cannot answer. Deployed, the queue's retries and dead-letter queue do that job.
 */

import {
  ExtractionError,
  InvalidModelOutputError,
  isContextLengthError,
  LLMError,
} from "convoseg/extraction";
import type { SegmentExtractor } from "convoseg/knowledge/write";
import { isTransientStatus } from "convoseg/transient";
import type { LocalModel } from "./model.js";

/** Consecutive failures with one cause after which a local run stops extracting. */
export const LLM_FAILURE_BUDGET = 3;

/** Why a model call failed. */
export interface LLMFailureCause {
  /** Failures with the same key have the same cause. */
  key: string;
  /** What happened: `http://127.0.0.1:8080/v1 refused the connection (ECONNREFUSED)`. */
  what: string;
  /** What to do about it, said as an instruction (`start the model server there, …`). */
  hint: string;
  /** The adapter's own message, when it tells more than `what` (the provider's words). */
  detail?: string;
}

/** Extraction a budget stopped: the cause, and how many failures in a row had it. */
export interface StoppedExtraction {
  cause: LLMFailureCause;
  failures: number;
}

/** What an extraction attempt after the stop fails with, without calling anything. */
export class ExtractionStoppedError extends Error {
  override readonly name = "ExtractionStoppedError";
  readonly code = "LOCAL_EXTRACTION_STOPPED";
  constructor(readonly stopped: StoppedExtraction) {
    super(`extraction stopped after ${stopped.failures} failures in a row: ${stopped.cause.what}`);
  }
}

/** The extractor port the segment consumer calls. */
type Extractor = Pick<SegmentExtractor, "extract">;

/**
 * Counts extraction failures by cause: each cause is reported (`onFailure`) the first time it
 * is seen, and after `limit` failures in a row with the same cause the budget stops: every later
 * attempt fails at once with {@link ExtractionStoppedError}, and `stopped` says why. A success,
 * or a reply that is not JSON (the endpoint answered), ends a run of failures.
 */
export class LLMFailureBudget {
  #streak = 0;
  #lastKey: string | undefined;
  readonly #seen = new Set<string>();
  #stopped: StoppedExtraction | undefined;

  constructor(
    private readonly options: {
      model: LocalModel;
      limit?: number;
      onFailure?: (cause: LLMFailureCause) => void;
    },
  ) {}

  get stopped(): StoppedExtraction | undefined {
    return this.#stopped;
  }

  /** `extractor`, each of its attempts counted (and refused once the budget has stopped). */
  guard(extractor: Extractor): Extractor {
    return {
      extract: async (...args) => {
        if (this.#stopped) throw new ExtractionStoppedError(this.#stopped);
        try {
          const outcome = await extractor.extract(...args);
          this.#streak = 0;
          return outcome;
        } catch (error) {
          this.record(error);
          throw error;
        }
      },
    };
  }

  /** Counts one failed attempt. */
  record(error: unknown): void {
    if (error instanceof InvalidModelOutputError) this.#streak = 0;
    const cause = llmFailureCause(error, this.options.model);
    if (cause === undefined || this.#stopped) return;
    this.#streak = cause.key === this.#lastKey ? this.#streak + 1 : 1;
    this.#lastKey = cause.key;
    if (!this.#seen.has(cause.key)) {
      this.#seen.add(cause.key);
      this.options.onFailure?.(cause);
    }
    if (this.#streak >= (this.options.limit ?? LLM_FAILURE_BUDGET)) {
      this.#stopped = { cause, failures: this.#streak };
    }
  }
}

/**
 * The cause of a failed model call (an {@link LLMError}, as the adapters throw, or a reply that
 * stayed invalid after its repair), or undefined for anything else: an abort, a failure of the
 * tables.
 */
export function llmFailureCause(error: unknown, model: LocalModel): LLMFailureCause | undefined {
  if (error instanceof InvalidModelOutputError) {
    // Not the reason: a JSON parser's message quotes the reply, which may quote the chat.
    return {
      key: "invalid-output",
      what: `model ${JSON.stringify(model.modelId)} did not reply with the JSON asked for, even after one repair request; its segment is tried again later, up to --max-attempts times`,
      hint: "try another --model (one that follows JSON schemas), or a smaller --window-size",
    };
  }
  if (!(error instanceof LLMError) || error.kind === "aborted") return undefined;
  const openai = model.extractor === "openai";
  const where = openai
    ? (model.endpoint ?? process.env.OPENAI_BASE_URL ?? "https://api.openai.com/v1")
    : model.endpoint === undefined
      ? `Bedrock (${process.env.AWS_REGION ?? "the default region"})`
      : `Bedrock at ${model.endpoint}`;
  const endpointFlag = openai ? "--llm-endpoint" : "--llm-endpoint (or AWS_REGION)";
  const detail = error.message;
  switch (error.kind) {
    case "connection": {
      const code = systemErrorCode(error);
      if (code === "ECONNREFUSED") {
        return {
          key: "connection:ECONNREFUSED",
          what: `${where} refused the connection (ECONNREFUSED)`,
          hint: `start the model server there, or check ${endpointFlag}`,
        };
      }
      if (code === "ENOTFOUND" || code === "EAI_AGAIN") {
        return {
          key: `connection:${code}`,
          what: `the host of ${where} was not found (${code})`,
          hint: `check ${endpointFlag}`,
        };
      }
      return {
        key: `connection:${code ?? "unknown"}`,
        what: `cannot connect to ${where} (${code ?? "connection error"})`,
        hint: `check ${endpointFlag} and the network`,
        detail,
      };
    }
    case "timeout":
      return {
        key: "timeout",
        what: `${where} did not answer in time (timed out, after the client's retries)`,
        hint: "try again later (the server may be overloaded, or the model too slow for a window)",
        detail,
      };
    case "status":
      if (isContextLengthError(error)) {
        return {
          key: "context-length",
          what: `${where} said a single message does not fit model ${JSON.stringify(model.modelId)}'s context (${error.status}), even alone in its window; its segment is given up on at once`,
          hint: "use a model with a longer context",
          detail,
        };
      }
      return statusCause(error.status ?? 0, where, model, detail);
    default:
      if (causeNamed(error, "CredentialsProviderError")) {
        return {
          key: "credentials",
          what: "no AWS credentials were found for Bedrock",
          hint: "configure the AWS SDK's credential chain (AWS_PROFILE, or AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY)",
        };
      }
      return {
        key: `other:${error.message}`,
        what: `the model call to ${where} failed`,
        hint: "read the message below",
        detail,
      };
  }
}

function statusCause(
  status: number,
  where: string,
  model: LocalModel,
  detail: string,
): LLMFailureCause {
  const openai = model.extractor === "openai";
  const key = `status:${status}`;
  const id = JSON.stringify(model.modelId);
  if (status === 401) {
    return {
      key,
      what: `${where} refused the credentials (401 Unauthorized)`,
      hint: openai
        ? "set OPENAI_API_KEY to a key this endpoint accepts"
        : "check the AWS credentials",
      detail,
    };
  }
  if (status === 403) {
    return {
      key,
      what: `${where} refused access (403 Forbidden)`,
      hint: openai
        ? `check that the key in OPENAI_API_KEY may use model ${id}`
        : `check that the credentials may invoke model ${id} (model access is granted per account and region)`,
      detail,
    };
  }
  if (status === 404) {
    return {
      key,
      what: openai
        ? `${where} has no model ${id}, or no chat completions API there (404 Not Found)`
        : `${where} has no model ${id} (404 Not Found)`,
      hint: openai
        ? "check --model, and that --llm-endpoint ends in the API's version path (such as /v1)"
        : "check --model and the region",
      detail,
    };
  }
  if (status === 429) {
    return {
      key,
      what: `${where} kept throttling (429 Too Many Requests) past the client's retries`,
      hint: "wait for its rate limit or quota, or check the account's limits",
      detail,
    };
  }
  if (status >= 500) {
    return {
      key,
      what: `${where} failed with a server error (${status})`,
      hint: "try again later (the server failed)",
      detail,
    };
  }
  const atOnce = isTransientStatus(status)
    ? ""
    : "; a retry cannot succeed, so its segment is given up on at once";
  return {
    key,
    what: `${where} refused the request (${status})${atOnce}`,
    hint: "read its message below",
    detail,
  };
}

/** The first system error code (`ECONNREFUSED`, …) among `error`'s causes. */
function systemErrorCode(error: unknown): string | undefined {
  // The adapter's own error has a code of its own (EXTRACTION_LLM_FAILED): its causes have theirs.
  for (const e of causesOf(error).filter((e) => !(e instanceof ExtractionError))) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === "string" && /^E[A-Z_]+$/.test(code)) return code;
  }
  return undefined;
}

function causeNamed(error: unknown, name: string): boolean {
  return causesOf(error).some((e) => (e as { name?: unknown }).name === name);
}

/** `error`, its causes, and the errors of any AggregateError among them (at most 20). */
export function causesOf(error: unknown): object[] {
  const found: object[] = [];
  const visit = (e: unknown) => {
    if (e === null || typeof e !== "object" || found.includes(e) || found.length >= 20) return;
    found.push(e);
    visit((e as { cause?: unknown }).cause);
    const inner = (e as { errors?: unknown }).errors;
    if (Array.isArray(inner)) for (const each of inner) visit(each);
  };
  visit(error);
  return found;
}
