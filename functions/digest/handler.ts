/** The scheduled digest (EventBridge): see lambda.ts. */
import { digestLambda } from "./lambda.js";
import { wiring } from "./wiring.js";

export const handler = digestLambda(wiring);
