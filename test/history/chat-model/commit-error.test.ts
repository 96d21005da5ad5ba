import { CommitError, Middleware } from "convoseg/chat-model";
import {
  type CallOptions,
  findCause,
  InvalidWriteOutcomeError,
  type Message,
  NOTHING_WRITTEN,
  type ReadWriter,
  textMessage,
  WriteError,
  type WriteOutcome,
} from "convoseg/history";
import { describe, expect, it } from "vitest";
import { answer, chunk, drain, FakeModel, FakeStreamer, RecordingStore } from "./fakes.js";

const CONVERSATION = "conversation";
const bound = { conversationId: CONVERSATION };
const question = () => textMessage("user", "question");
const expectedBatch = [textMessage("user", "question"), textMessage("assistant", "answer")];

class DiskFull extends Error {}

/** The outcome of one failed commit and what the model saw, for each way of calling. */
interface Commit {
  error: unknown;
  modelRuns: number;
  /** The request the caller sent, which it may change afterwards. */
  request: { messages: Message[] };
}

const viaCall = async (store: ReadWriter): Promise<Commit> => {
  const model = new FakeModel(async () => answer("answer"));
  const request = { messages: [question()] };
  const error = await new Middleware(store)
    .call(model)
    .call(request, bound)
    .then(
      () => undefined,
      (e: unknown) => e,
    );
  return { error, modelRuns: model.requests.length, request };
};

const viaStream = async (store: ReadWriter): Promise<Commit> => {
  const streamer = new FakeStreamer([chunk("ans"), chunk("wer"), { finishReason: "stop" }]);
  const request = { messages: [question()] };
  const { deltas, errors } = await drain(
    new Middleware(store).stream(streamer).stream(request, bound),
  );
  expect(deltas).toHaveLength(3);
  expect(errors).toHaveLength(1);
  return { error: errors[0], modelRuns: streamer.requests.length, request };
};

const outcomes: WriteOutcome[] = [
  { accepted: 0, uncertain: false },
  { accepted: 1, uncertain: false },
  { accepted: 0, uncertain: true },
  { accepted: 1, uncertain: true },
  { accepted: 2, uncertain: false },
];

describe.each([
  ["call", viaCall],
  ["stream", viaStream],
])("CommitError through %s", (_way, commit) => {
  it.each(outcomes)(
    "preserves the completed generation and the write facts %o",
    async (outcome) => {
      const store = new RecordingStore();
      const cause = new DiskFull("disk full");
      store.writeError = cause;
      store.outcome = outcome;

      const { error, modelRuns, request } = await commit(store);

      expect(error).toBeInstanceOf(CommitError);
      const commitError = error as CommitError;
      expect(findCause(commitError, DiskFull)).toBe(cause);
      expect(commitError.conversationId).toBe(CONVERSATION);
      expect(commitError.outcome).toEqual(outcome);
      expect(commitError.response.message).toEqual(textMessage("assistant", "answer"));
      expect(modelRuns).toBe(1);

      expect(commitError.messages()).toEqual(expectedBatch);
      commitError.messages()[0].parts.length = 0;
      request.messages[0].parts.push({ type: "text", text: " changed" });
      expect(commitError.messages()).toEqual(expectedBatch);

      if (!commitError.outcome.uncertain) {
        store.writeError = undefined;
        store.outcome = undefined;
        await store.write(CONVERSATION, commitError.messages().slice(commitError.outcome.accepted));
        expect(await store.read(CONVERSATION)).toEqual(expectedBatch);
      }
    },
  );

  it("treats an unacknowledged success as an uncertain failure", async () => {
    const store = new RecordingStore();
    store.outcome = NOTHING_WRITTEN;
    const { error } = await commit(store);
    expect(error).toBeInstanceOf(CommitError);
    const commitError = error as CommitError;
    expect(commitError.cause).toBeInstanceOf(InvalidWriteOutcomeError);
    expect(commitError.outcome).toEqual({ accepted: 0, uncertain: true });
  });
});

/** A store whose write rejects with `rejection` and reads an empty history. */
function storeRejectingWith(rejection: unknown): ReadWriter {
  return {
    read: async (_id: string, _options?: CallOptions) => [],
    write: () => Promise.reject(rejection),
  };
}

describe("CommitError facts", () => {
  it("keeps the very response that call() completed", async () => {
    const store = new RecordingStore();
    store.writeError = new DiskFull("disk full");
    const reply = answer("answer");
    const chat = new Middleware(store).call(new FakeModel(async () => reply));
    const error = await chat.call({ messages: [question()] }, bound).catch((e: unknown) => e);
    expect((error as CommitError).response).toBe(reply);
  });

  it("owns its batch, so changing the returned response does not change it", async () => {
    const store = new RecordingStore();
    store.writeError = new DiskFull("disk full");
    const { error } = await viaCall(store);
    const commitError = error as CommitError;
    commitError.response.message.parts.length = 0;
    expect(commitError.messages()).toEqual(expectedBatch);
  });

  it("quotes the conversation and the cause in its message", async () => {
    const store = new RecordingStore();
    store.writeError = new DiskFull("disk full");
    const { error } = await viaCall(store);
    expect(error).toMatchObject({
      name: "CommitError",
      code: "HISTORY_COMMIT_FAILED",
      message:
        'history: commit conversation "conversation" after model completion: ' +
        "history: write failed (0 accepted): disk full",
    });
  });

  it("joins contradictory facts with the write error and makes the outcome uncertain", async () => {
    const cause = new DiskFull("disk full");
    const { error } = await viaCall(
      storeRejectingWith(new WriteError({ accepted: 3, uncertain: false }, cause)),
    );
    const commitError = error as CommitError;
    expect(commitError.cause).toBeInstanceOf(AggregateError);
    expect(findCause(commitError, DiskFull)).toBe(cause);
    expect(findCause(commitError, InvalidWriteOutcomeError)?.message).toBe(
      "history: invalid write outcome: accepted 3 of 2 messages",
    );
    expect(commitError.outcome).toEqual({ accepted: 0, uncertain: true });
  });

  it("treats a rejection without a WriteError as carrying no trustworthy outcome", async () => {
    const cause = new DiskFull("not a WriteError");
    const { error } = await viaCall(storeRejectingWith(cause));
    const commitError = error as CommitError;
    expect(findCause(commitError, DiskFull)).toBe(cause);
    expect(findCause(commitError, InvalidWriteOutcomeError)).toBeDefined();
    expect(commitError.outcome).toEqual({ accepted: 0, uncertain: true });
  });
});
