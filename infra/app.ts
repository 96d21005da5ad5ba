import { App, Validations } from "aws-cdk-lib";
import { AwsSolutionsChecks } from "cdk-nag";
import { ConvosegStack } from "./stack.js";

const app = new App();
new ConvosegStack(app, "Convoseg");
// AwsSolutions checks run at every synth; an unacknowledged error fails it. Each acknowledgment
// is next to the resource it concerns, with its reason.
Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
