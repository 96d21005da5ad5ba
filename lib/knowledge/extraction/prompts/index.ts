/**
 * The prompts. The system and extraction prompts with their version, the reply schema the model
 * must answer in, and how turns are rendered into a prompt and mapped back.
 */
export {
  additionalPrompt,
  EXCERPT_END,
  EXCERPT_START,
  EXISTING_END,
  EXISTING_START,
  extractPrompt,
  PROMPT_VERSION,
  replySchema,
  SYSTEM_PROMPT,
} from "./prompts.js";
export {
  type AuthoredTurn,
  mapTurnRange,
  promptString,
  renderIndices,
  renderTurns,
} from "./render.js";
