/**
 * {@link MessageStates} over the history store: what the consumer and the redactor read of a
 * segment's messages (deleted or not, current text and author), by key and strongly consistent
 * (`getMessages` always is), so a change applied before the read is seen by it.
 */
import { kindOf, type Message, messageText } from "../../history/index.js";
import type { MessageState, MessageStates } from "../store/message-states.js";

/** The read `DynamoDbStore` and `MemoryStore` both answer. */
export interface MessagesById {
  getMessages(conversationId: string, ids: readonly string[]): Promise<Message[]>;
}

export function storedMessageStates(messages: MessagesById): MessageStates {
  return {
    async states(channel, ids) {
      const states = new Map<string, MessageState>();
      if (ids.length === 0) return states;
      for (const message of await messages.getMessages(channel, ids)) {
        if (message.id === undefined) continue;
        states.set(message.id, stateOf(message));
      }
      return states;
    },
  };
}

function stateOf(message: Message): MessageState {
  const state: MessageState = { deleted: message.deleted === true, ts: message.ts ?? 0 };
  if (message.editedAt !== undefined) state.editedAt = message.editedAt;
  if (state.deleted) return state;
  state.text = messageText(message);
  if (message.author !== undefined) state.author = message.author;
  const kind = kindOf(message);
  if (kind !== "user") state.kind = kind;
  return state;
}
