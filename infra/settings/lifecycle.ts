/**
 * The lifecycle wing's settings: how long messages and results are kept, and whether the data
 * outlives the stack.
 */
import { MAX_RETENTION_DAYS } from "convoseg/dynamodb";
import { fail, got, type Table } from "./kinds.js";

export const lifecycle = <V, P>(table: Table<V, P>) =>
  table
    /**
     * Days a chat message is kept after its platform time (DynamoDB TTL on the messages table),
     * 1 to 36500: an import of old chat does not live longer than chat written today. Unset:
     * kept until deleted.
     */
    .optionalInteger("messageRetentionDays", {
      min: 1,
      max: MAX_RETENTION_DAYS,
      env: { ingest: "MESSAGE_RETENTION_DAYS" },
    })
    /**
     * Days a result and its topic entries are kept after their segment's first message, at most
     * messageRetentionDays (a result never outlives the messages it cites); window replies keep
     * their 15 days or this, the shorter. Unset: messageRetentionDays (kept until deleted when
     * that is unset too); the extraction function's `RESULT_RETENTION_DAYS` is the one that
     * applies (config.ts).
     */
    .optionalInteger("resultRetentionDays", {
      min: 1,
      max: MAX_RETENTION_DAYS,
      // Refused rather than clamped: a result kept past its messages would cite what is gone.
      check: ({ resultRetentionDays: days, messageRetentionDays: messages }) => {
        if (days !== null && messages !== null && days > messages) {
          fail(
            `must not exceed messageRetentionDays (${messages}): a result must not outlive the messages it cites ${got(days)}`,
          );
        }
      },
    })
    /** `retain` keeps the tables, with deletion protection, when the stack is deleted. */
    .choice("dataRemovalPolicy", { options: ["retain", "destroy"], default: "retain" });
