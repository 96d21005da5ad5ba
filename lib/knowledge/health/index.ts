/**
 * A channel's health over time: questions asked and answered, time to first answer, who answers.
 * Computed purely from the questions index, the answering messages and the conversations' starts.
 */

export {
  type ChannelHealth,
  channelHealth,
  type HealthBucket,
  type HealthInput,
  type HealthMessage,
  type HealthQuestion,
} from "./health.js";
