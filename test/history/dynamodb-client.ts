/** A DynamoDB Local client for the store's emulator tests that counts and intercepts requests. */
import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { inject } from "vitest";

type Handler = (args: unknown) => Promise<{ output: Record<string, unknown> }>;
/** Wraps each request: it may fail before `send`, after it, or change what comes back. */
type Interceptor = (command: string, send: () => ReturnType<Handler>) => ReturnType<Handler>;

/**
 * A client against the emulator that counts requests and lets a test intercept them. The SDK's
 * own retries are off so that every retry seen is the store's.
 */
export function instrumentedClient() {
  const client = new DynamoDBClient({
    endpoint: inject("dynamodbEndpoint"),
    region: "us-east-1",
    credentials: { accessKeyId: "test", secretAccessKey: "test" },
    maxAttempts: 1,
  });
  let requests = 0;
  let intercept: Interceptor = (_command, send) => send();
  client.middlewareStack.add(
    (next, context) => async (args) => {
      requests++;
      return intercept(
        context.commandName as string,
        () => next(args) as unknown as ReturnType<Handler>,
      ) as never;
    },
    { step: "finalizeRequest", name: "testInterceptor" },
  );
  return {
    client,
    requests: () => requests,
    intercept: (interceptor: Interceptor) => {
      intercept = interceptor;
    },
  };
}
