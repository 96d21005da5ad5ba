import { App } from "aws-cdk-lib";
import { ConvosegStack } from "./stack.js";

const app = new App();
new ConvosegStack(app, "Convoseg");
