/**
 * The `EraseUserLoop` state machine (infra/erasure.ts): it invokes EraseUser with the execution's
 * input until the function answers `done: true`, at most MAX_ERASE_INVOCATIONS times, retrying
 * Lambda's throttles and service errors and nothing else; its role may invoke that function and
 * deliver logs and traces, nothing more; it logs every event without execution data. The stack
 * is synthesized without bundling: only its template is read.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { MAX_ERASE_INVOCATIONS } from "../../infra/erasure.js";
import { logicalId, roleStatements, type Synthesized, synthesize } from "./synth.js";

let synthesized: Synthesized;
let ids: Record<"machine" | "role" | "logs" | "fn", string>;

beforeAll(() => {
  synthesized = synthesize({ "aws:cdk:bundling-stacks": [] });
  const { stack } = synthesized;
  const { erasure } = stack;
  ids = {
    machine: logicalId(stack, erasure.stateMachine),
    role: logicalId(stack, erasure.stateMachineRole),
    logs: logicalId(stack, erasure.stateMachineLogs),
    fn: logicalId(stack, erasure.function.function),
  };
}, 120_000);

const properties = (id: string) =>
  (synthesized.template.toJSON().Resources[id] as { Properties: Record<string, unknown> })
    .Properties;

interface State {
  Type: string;
  Next?: string;
  Default?: string;
  Parameters?: Record<string, unknown>;
  ResultSelector?: Record<string, unknown>;
  ResultPath?: string;
  OutputPath?: string;
  Retry?: { ErrorEquals: string[]; MaxAttempts: number }[];
  Catch?: unknown[];
  Choices?: Record<string, unknown>[];
  Error?: string;
}

/** The definition, its tokens written as the placeholders `<Ref>` and `<GetAtt id>`. */
function definition(): { StartAt: string; TimeoutSeconds: number; States: Record<string, State> } {
  const join = properties(ids.machine).DefinitionString as { "Fn::Join": [string, unknown[]] };
  const text = join["Fn::Join"][1]
    .map((part) => {
      if (typeof part === "string") return part;
      const token = part as { Ref?: string; "Fn::GetAtt"?: [string, string] };
      return token.Ref !== undefined ? `<${token.Ref}>` : `<GetAtt ${token["Fn::GetAtt"]?.[0]}>`;
    })
    .join("");
  return JSON.parse(text);
}

describe("EraseUserLoop", () => {
  it("invokes EraseUser with the execution's input until it answers done, within a bound", () => {
    const { StartAt, States, TimeoutSeconds } = definition();
    expect(StartAt).toBe("Start");
    expect(States.Start).toMatchObject({
      Type: "Pass",
      Parameters: { "request.$": "$", invocations: 0 },
      Next: "Erase",
    });
    expect(States.Erase).toMatchObject({
      Type: "Task",
      Resource: "arn:<AWS::Partition>:states:::lambda:invoke",
      Parameters: { FunctionName: `<GetAtt ${ids.fn}>`, "Payload.$": "$.request" },
      ResultSelector: { "response.$": "$.Payload" },
      ResultPath: "$.run",
      Next: "Count",
    });
    expect(States.Count).toMatchObject({
      Type: "Pass",
      Parameters: {
        "request.$": "$.request",
        "invocations.$": "States.MathAdd($.invocations, 1)",
        "run.$": "$.run",
      },
      Next: "IsDone",
    });
    expect(States.IsDone).toEqual({
      Type: "Choice",
      Choices: [
        { Variable: "$.run.response.done", BooleanEquals: true, Next: "Done" },
        {
          Variable: "$.invocations",
          NumericGreaterThanEquals: MAX_ERASE_INVOCATIONS,
          Next: "Unfinished",
        },
      ],
      Default: "Erase",
    });
    expect(States.Done).toEqual({ Type: "Succeed", OutputPath: "$.run.response" });
    expect(States.Unfinished).toMatchObject({ Type: "Fail", Error: "ErasureUnfinished" });
    expect(Object.keys(States).sort()).toEqual(
      ["Count", "Done", "Erase", "IsDone", "Start", "Unfinished"].sort(),
    );
    // The bound in time as well: the invocations (13 minutes each at most) fit in it.
    expect(TimeoutSeconds).toBe(12 * 3600);
    expect(MAX_ERASE_INVOCATIONS * 15 * 60).toBeLessThanOrEqual(TimeoutSeconds);
  });

  it("retries Lambda's throttles and service errors, not the function's own errors", () => {
    const { Erase } = definition().States;
    expect(Erase.Retry?.map((r) => r.ErrorEquals)).toEqual([
      ["Lambda.TooManyRequestsException"],
      [
        "Lambda.ServiceException",
        "Lambda.AWSLambdaException",
        "Lambda.SdkClientException",
        "Lambda.ClientExecutionTimeoutException",
      ],
    ]);
    for (const retry of Erase.Retry ?? []) expect(retry.MaxAttempts).toBeLessThanOrEqual(10);
    expect(JSON.stringify(Erase.Retry)).not.toContain("States.ALL");
    expect(Erase.Catch).toBeUndefined();
  });

  it("may invoke that function only, and deliver its logs and traces", () => {
    const statements = roleStatements(synthesized.template, ids.role);
    expect(statements[0]).toEqual({
      Effect: "Allow",
      Action: "lambda:InvokeFunction",
      Resource: { "Fn::GetAtt": [ids.fn, "Arn"] },
    });
    const rest = statements.slice(1);
    const actions = rest.flatMap((s) => (Array.isArray(s.Action) ? s.Action : [s.Action]));
    // The services' own actions that take no resource: log delivery and X-Ray.
    for (const action of actions)
      expect(action).toMatch(/^(logs:\w+Log\w*|logs:\w+ResourcePolic\w+|xray:\w+)$/);
    expect(actions).toEqual(
      expect.arrayContaining(["logs:CreateLogDelivery", "xray:PutTraceSegments"]),
    );
    expect(JSON.stringify(statements)).not.toMatch(/dynamodb|sqs|states:|lambda:\*/);
    expect(properties(ids.role).AssumeRolePolicyDocument).toMatchObject({
      Statement: [{ Principal: { Service: "states.amazonaws.com" } }],
    });
  });

  it("logs every event without execution data, to a log group kept as the functions' are", () => {
    expect(properties(ids.machine)).toMatchObject({
      LoggingConfiguration: {
        Level: "ALL",
        IncludeExecutionData: false,
        Destinations: [
          { CloudWatchLogsLogGroup: { LogGroupArn: { "Fn::GetAtt": [ids.logs, "Arn"] } } },
        ],
      },
      TracingConfiguration: { Enabled: true },
      RoleArn: { "Fn::GetAtt": [ids.role, "Arn"] },
    });
    expect(properties(ids.logs)).toEqual({ RetentionInDays: 30 });
    expect(synthesized.template.toJSON().Outputs.EraseUserStateMachineArn).toEqual({
      Description: expect.stringContaining("EraseUserLoop"),
      Value: { Ref: ids.machine },
    });
  });

  it("passes the AwsSolutions checks, acknowledging only log delivery's and X-Ray's Resource *", () => {
    expect(synthesized.report.pluginReports.flatMap((r) => r.violations)).toEqual([]);
  });
});
