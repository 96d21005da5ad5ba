/**
 * Failures as the commands say them: one line that names the table, queue or model endpoint at
 * fault, what happened, and what to do; never a stack trace. The AWS SDK's errors are read by
 * name (`ResourceNotFoundException`, `QueueDoesNotExist`, …), anywhere in an error's causes.
 */
import { isNetworkFailure } from "convoseg/transient";
import { causesOf, type LLMFailureCause } from "../../local/llm-failures.js";
import { escapeControls } from "./format.js";

/** A table a command uses: its name, what it is for, and how a user names another one. */
export interface TableRef {
  table: string;
  /** `the results table`, `the channels table`, … */
  role: string;
  /** What to do when it is the wrong one: `pass the stack's ResultsTableName with --table`. */
  fix: string;
}

/** A queue a command sends to, and how a user names another one. */
export interface QueueRef {
  queue: string;
  fix: string;
}

/** A failure said in one line, for a command to print after its name and exit 1. */
export class CommandFailure extends Error {
  override readonly name = "CommandFailure";
  readonly code = "CLI_FAILED";
}

/** `call`, with a failure of the table it uses said as a {@link CommandFailure}. */
export async function onTable<T>(ref: TableRef, call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    throw new CommandFailure(tableProblem(error, ref), { cause: error });
  }
}

/** `call`, with a failure of the queue it sends to said as a {@link CommandFailure}. */
export async function onQueue<T>(ref: QueueRef, call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    throw new CommandFailure(queueProblem(error, ref), { cause: error });
  }
}

/**
 * What went wrong with a table, in one line. A failure that did not come from AWS (a bug, a
 * model's reply) is said as itself, not blamed on the table.
 */
export function tableProblem(error: unknown, { table, role, fix }: TableRef): string {
  if (!fromAws(error)) return describeFailure(error);
  const name = JSON.stringify(table);
  if (causeNamed(error, "ResourceNotFoundException")) {
    return `no table ${name} (${role}) ${where("DynamoDB")}: ${fix}`;
  }
  return serviceProblem(error, "DynamoDB", `${role} ${name}`);
}

/** What went wrong with a queue, in one line (as {@link tableProblem} says it). */
function queueProblem(error: unknown, { queue, fix }: QueueRef): string {
  if (!fromAws(error)) return describeFailure(error);
  const name = JSON.stringify(queue);
  if (
    causeNamed(error, "QueueDoesNotExist") ||
    causeNamed(error, "AWS.SimpleQueueService.NonExistentQueue")
  ) {
    return `no queue ${name} ${where("SQS")}: ${fix}`;
  }
  if (causeNamed(error, "InvalidAddress") || causeNamed(error, "InvalidParameterValue")) {
    return `${name} is not a queue URL SQS takes: ${fix}`;
  }
  return serviceProblem(error, "SQS", `the queue ${name}`);
}

/**
 * Any failure in one line: one already said ({@link CommandFailure}), one of the emulators'
 * endpoints, or else the error's name and message.
 */
export function describeFailure(error: unknown): string {
  if (error instanceof CommandFailure) return error.message;
  for (const service of ["DynamoDB", "SQS"] as const) {
    const endpoint = process.env[ENDPOINT_VARIABLES[service]];
    const code = networkCode(error);
    if (endpoint && code !== undefined && messageOf(error).includes(new URL(endpoint).host)) {
      return `cannot reach ${service} at ${endpoint} (${code}): is ${ENDPOINT_VARIABLES[service]} right, and the emulator there running? (Unset it and run starts its own.)`;
    }
  }
  const code = networkCode(error);
  if (code !== undefined) return `cannot connect (${code}): ${messageOf(error)}`;
  const { name, message } = (error ?? {}) as { name?: string; message?: string };
  return name && name !== "Error" ? `${name}: ${message ?? ""}` : (message ?? String(error));
}

/** A failed model call's cause, as a command says it when it first happens. */
export function llmFailureLine(command: string, cause: LLMFailureCause): string {
  const line = escapeControls(`${command}: extraction failed: ${cause.what}; ${cause.hint}`);
  return cause.detail === undefined ? line : `${line}\n  (${escapeControls(cause.detail)})`;
}

const ENDPOINT_VARIABLES = {
  DynamoDB: "AWS_ENDPOINT_URL_DYNAMODB",
  SQS: "AWS_ENDPOINT_URL_SQS",
} as const;

/** The service's endpoint as the SDK's environment picks it: an override, or a region. */
function where(service: keyof typeof ENDPOINT_VARIABLES): string {
  const endpoint = process.env[ENDPOINT_VARIABLES[service]];
  if (endpoint) return `at ${endpoint}`;
  const region = process.env.AWS_REGION ?? process.env.AWS_DEFAULT_REGION;
  return region ? `in ${region}` : "in the default region";
}

const DENIED = new Set([
  "AccessDeniedException",
  "AccessDenied",
  "UnrecognizedClientException",
  "InvalidClientTokenId",
  "InvalidSignatureException",
  "ExpiredTokenException",
  "ExpiredToken",
]);

/** A failure that is not about the resource itself: credentials, access, the network. */
function serviceProblem(
  error: unknown,
  service: keyof typeof ENDPOINT_VARIABLES,
  what: string,
): string {
  const variable = ENDPOINT_VARIABLES[service];
  if (regionMissing(error)) {
    return `no AWS region to find ${what} in: set AWS_REGION (or ${variable} to an emulator)`;
  }
  if (causeNamed(error, "CredentialsProviderError")) {
    return `no AWS credentials to use ${what}: configure the AWS SDK's credential chain (AWS_PROFILE, or AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY), or set ${variable} to an emulator`;
  }
  const denied = causesOf(error).find((e) => DENIED.has((e as { name?: string }).name ?? ""));
  if (denied !== undefined) {
    return `${service} ${where(service)} refused access to ${what} (${(denied as Error).name}): check the AWS credentials, and that they may use it`;
  }
  const code = networkCode(error);
  if (code !== undefined) {
    const endpoint = process.env[variable];
    return endpoint
      ? `cannot reach ${service} at ${endpoint} for ${what} (${code}): is ${variable} right, and the emulator there running?`
      : `cannot reach ${service} ${where(service)} for ${what} (${code}): check the network and AWS_REGION`;
  }
  const { name, message } = (error ?? {}) as { name?: string; message?: string };
  return `${what}: ${name && name !== "Error" ? `${name}: ` : ""}${message ?? String(error)}`;
}

/** An AWS service's answer, missing credentials, or a connection that failed. */
function fromAws(error: unknown): boolean {
  return (
    causesOf(error).some(
      (e) =>
        "$metadata" in e ||
        (e as { name?: string }).name === "CredentialsProviderError" ||
        isNetworkFailure(e),
    ) || regionMissing(error)
  );
}

/** The SDK's own error when neither the environment nor the config names a region. */
function regionMissing(error: unknown): boolean {
  return causesOf(error).some((e) => (e as { message?: string }).message === "Region is missing");
}

function networkCode(error: unknown): string | undefined {
  const found = causesOf(error).find((e) => isNetworkFailure(e));
  return (found as { code?: string } | undefined)?.code;
}

function messageOf(error: unknown): string {
  return causesOf(error)
    .map((e) => (e as { message?: string }).message ?? "")
    .join(" ");
}

function causeNamed(error: unknown, name: string): boolean {
  return causesOf(error).some(
    (e) => (e as { name?: string }).name === name || (e as { Code?: string }).Code === name,
  );
}
